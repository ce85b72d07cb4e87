//go:build !unix

package netguard

import "net"

func drain(net.Conn) {}
