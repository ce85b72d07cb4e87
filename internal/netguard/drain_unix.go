//go:build unix

package netguard

import (
	"net"
	"syscall"
)

// drain reads, without waiting, whatever c has already received.
func drain(c net.Conn) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	var buf [4096]byte
	raw.Read(func(fd uintptr) bool {
		for range 16 { // at most 64 KiB: a client sending more is not waited for
			if n, err := syscall.Read(int(fd), buf[:]); n <= 0 || err != nil {
				break
			}
		}
		return true // never wait for more
	})
}
