package gcfloor

import (
	"os"
	"runtime/metrics"
	"testing"
	"time"
)

var gcPercentCases = []struct {
	live, floor uint64
	want        int
}{
	{4 << 20, 64 << 20, 1500},  // a small heap may grow to the floor
	{32 << 20, 64 << 20, 100},  // half the floor: GOGC=100 reaches it
	{200 << 20, 64 << 20, 100}, // a large heap: as Go would
	{0, 64 << 20, 5000},        // nothing measured yet: capped
	{1 << 10, 64 << 20, 5000},  // a tiny heap: capped
	{4 << 20, 0, 100},
}

func TestGCPercent(t *testing.T) {
	for _, tc := range gcPercentCases {
		if got := gcPercent(tc.live, tc.floor); got != tc.want {
			t.Errorf("gcPercent(live %d MiB, floor %d MiB) = %d, want %d", tc.live>>20, tc.floor>>20, got, tc.want)
		}
	}
}

func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestTune: the tuner raises GOGC while the live heap is far below the
// floor, gives GOGC=100 back when stopped, and leaves a GOGC set in the
// environment alone.
func TestTune(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: Tune leaves it alone")
	}
	stop := make(chan struct{})
	done := Tune(1<<40, time.Millisecond, stop) // a floor no test heap reaches
	deadline := time.Now().Add(5 * time.Second)
	for gogc() != 5000 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is %d with a live heap far below the floor", gogc())
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-done
	if gogc() != 100 {
		t.Fatalf("GOGC is %d after the tuner stopped", gogc())
	}
	t.Setenv("GOGC", "150")
	stop = make(chan struct{})
	<-Tune(1<<40, time.Millisecond, stop) // returns at once
	if gogc() != 100 {
		t.Fatalf("GOGC is %d though the environment set it", gogc())
	}
}
