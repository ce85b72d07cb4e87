//go:build !unix

package netguard

// RaiseFDLimit reports no limit where there is no RLIMIT_NOFILE.
func RaiseFDLimit() (soft, hard uint64, err error) { return 0, 0, nil }
