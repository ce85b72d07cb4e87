package telemetry_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/telemetry"
)

// syncBuffer is a bytes.Buffer safe for the writer's timer goroutine.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func TestLogWriterBatchesWholeLines(t *testing.T) {
	var out syncBuffer
	w := telemetry.NewLogWriter(&out, time.Hour) // only Flush and Close write
	log := slog.New(slog.NewJSONHandler(w, nil))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				log.Info("request", "g", g, "i", i, "pad", strings.Repeat("x", 100))
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*500 {
		t.Fatalf("%d lines written, want %d", len(lines), 8*500)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a line was split or mixed with another: %q: %v", l, err)
		}
	}
	// ~4,000 lines of ~170 bytes are ~680 KB: batches of up to 64 KiB.
	if n := out.Writes(); n > 20 || n < 8 {
		t.Errorf("%d writes for %d lines: want batches of about 64 KiB", n, len(lines))
	}
}

func TestLogWriterFlushesOnTimer(t *testing.T) {
	var out syncBuffer
	w := telemetry.NewLogWriter(&out, 20*time.Millisecond)
	defer w.Close()
	w.Write([]byte("one\n"))
	if out.String() != "" {
		t.Fatal("a line was written at once; want it batched")
	}
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "one\n" {
		if time.Now().After(deadline) {
			t.Fatalf("the timer never wrote the line: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The timer is armed again by the next line.
	w.Write([]byte("two\n"))
	for out.String() != "one\ntwo\n" {
		if time.Now().After(deadline) {
			t.Fatalf("the second batch never came: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLogWriterAfterClose(t *testing.T) {
	var out syncBuffer
	w := telemetry.NewLogWriter(&out, time.Hour)
	w.Write([]byte("before\n"))
	w.Close()
	w.Write([]byte("after\n")) // a line logged during exit is not kept
	if got := out.String(); got != "before\nafter\n" {
		t.Fatalf("got %q", got)
	}
}
