package telemetry

import (
	"io"
	"sync"
	"time"
)

// LogWriter holds log lines and writes them out together: at most Every
// after the first line waiting, as soon as MaxBuffered bytes wait, and on
// Flush and Close. A JSON access log written line by line costs one write
// system call per request, about a fifth of a cached render's server CPU
// (issue 30); written this way it costs one per batch.
//
// slog's handlers write whole lines, one Write each, so a line is never
// split between batches. Close writes whatever waits: quire serve closes
// it last on SIGTERM, losing no line; a SIGKILL loses at most Every's
// worth of lines, as any process's unflushed output.
//
// Written here rather than taken from a library: bufio.Writer has no timer
// and no lock, and the one library writer with both (zap's
// BufferedWriteSyncer) would bring a second logging stack for forty lines.
type LogWriter struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	every time.Duration
	max   int
	timer *time.Timer
	armed bool
	err   error // the first failed write, returned by Flush and Close
}

// Log writer defaults: a line is out within a tenth of a second.
const (
	DefaultLogEvery    = 100 * time.Millisecond
	DefaultLogBuffered = 64 << 10
)

// NewLogWriter buffers lines for w, writing them every every (or
// DefaultLogEvery when 0) or once DefaultLogBuffered bytes wait.
func NewLogWriter(w io.Writer, every time.Duration) *LogWriter {
	if every <= 0 {
		every = DefaultLogEvery
	}
	return &LogWriter{w: w, every: every, max: DefaultLogBuffered}
}

// Write keeps p (one log line) for the next batch.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf)+len(p) > l.max {
		l.flushLocked()
		if len(p) > l.max {
			l.writeLocked(p)
			return len(p), nil
		}
	}
	l.buf = append(l.buf, p...)
	if !l.armed {
		l.armed = true
		if l.timer == nil {
			l.timer = time.AfterFunc(l.every, l.tick)
		} else {
			l.timer.Reset(l.every)
		}
	}
	return len(p), nil
}

func (l *LogWriter) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	l.flushLocked()
}

// Flush writes every line waiting, and reports the first write that
// failed since the writer was made.
func (l *LogWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	return l.err
}

// Close flushes and stops the timer; later lines are written at once.
func (l *LogWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	if l.timer != nil {
		l.timer.Stop()
	}
	l.max = 0 // every later Write goes straight out
	return l.err
}

func (l *LogWriter) flushLocked() {
	if len(l.buf) == 0 {
		return
	}
	l.writeLocked(l.buf)
	clear(l.buf) // the lines may carry ids: no copy lingers in the array
	l.buf = l.buf[:0]
}

func (l *LogWriter) writeLocked(p []byte) {
	if _, err := l.w.Write(p); err != nil && l.err == nil {
		l.err = err
	}
}
