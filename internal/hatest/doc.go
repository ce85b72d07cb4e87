// Package hatest holds quire's high-availability test: several quire
// serve processes on one data root (each through a path of its own),
// behind a round-robin client that retries a refused connection on the
// next node as a load balancer does, with Redis as a primary, a replica
// and three Sentinels, all private processes on loopback ports. Under a
// mixed load it kills a quire node, the Redis primary and a Sentinel, and
// checks what a user would: nothing acknowledged lost, no read older than
// a write acknowledged before it began, sessions kept, errors only during
// the failover window, git fsck --strict clean.
//
// The package has no code outside its tests. CI runs a short load (-short);
// QUIRE_HA_SECONDS sets its length (the 60 s:
// QUIRE_HA_SECONDS=60 go test -run TestHighAvailability -v ./internal/hatest).
package hatest
