// Package gcfloor keeps the garbage collector's heap goal at least a floor.
package gcfloor

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// A request allocates about 14 KB, and the live heap of a quire holding
// few repositories is a few MiB; with GOGC=100 the garbage collector ran
// every few hundred requests, about a tenth of a cached render's CPU.
// The floor lets the heap grow to at least floorBytes before a collection,
// whatever the live heap; past half of it, GOGC=100 applies as usual, so
// a large quire's memory is what it was. Go has a memory limit
// (GOMEMLIMIT) but no floor, hence this tuner, which sets GOGC from the
// live heap once a second.

// DefaultBytes is quire serve's floor (--gc-floor).
const DefaultBytes = 64 << 20

// gcPercent is the GOGC that makes the heap goal max(2 x live, floor),
// at most 5000.
func gcPercent(live, floor uint64) int {
	if live == 0 {
		live = 1 << 20
	}
	if floor <= 2*live {
		return 100
	}
	return int(min((floor-live)*100/live, 5000))
}

// Tune keeps the heap goal at least floorBytes, checking the live heap
// every interval, until stop is closed; then it restores GOGC=100. It
// does nothing when floorBytes is 0 or GOGC is set in the environment:
// whoever set it has decided. done is closed once it has stopped.
func Tune(floorBytes uint64, every time.Duration, stop <-chan struct{}) (done <-chan struct{}) {
	ch := make(chan struct{})
	if floorBytes == 0 || os.Getenv("GOGC") != "" {
		close(ch)
		return ch
	}
	go func() {
		defer close(ch)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		last := -1
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if p := gcPercent(sample[0].Value.Uint64(), floorBytes); p != last {
				debug.SetGCPercent(p)
				last = p
			}
			select {
			case <-stop:
				debug.SetGCPercent(100)
				return
			case <-t.C:
			}
		}
	}()
	return ch
}
