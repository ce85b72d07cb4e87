package netguard

// Connection caps derived from the open-file limit.
const (
	// DefaultMaxConnsCeiling bounds the default total cap whatever the
	// file limit: each connection costs a goroutine and buffers (about
	// 12 KiB idle), so 16,384 is some 200 MiB.
	DefaultMaxConnsCeiling = 16384
	// DefaultMaxConnsPerAddr is the default per-address cap. A reverse
	// proxy or NAT in front puts every client behind one address: raise
	// it there, or turn it off (0).
	DefaultMaxConnsPerAddr = 256
)

// Reserve is how many of nofile open files are kept back from client
// connections for repositories, Redis, logs and temporary files: an
// eighth, and at least 128.
func Reserve(nofile uint64) int {
	return int(max(128, nofile/8))
}

// DefaultMaxConns is the total connection cap for a process allowed
// nofile open files: what Reserve leaves, at least 16 and at most
// DefaultMaxConnsCeiling. nofile 0 (unknown) gives the ceiling.
func DefaultMaxConns(nofile uint64) int {
	if nofile == 0 {
		return DefaultMaxConnsCeiling
	}
	n := int64(nofile) - int64(Reserve(nofile))
	return int(min(max(n, 16), DefaultMaxConnsCeiling))
}
