package netguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// Timeouts are the deadlines a server holds clients to. Zero turns one off.
//
// Neither a whole request nor a whole response has a fixed time limit
// (http.Server's ReadTimeout and WriteTimeout): a push of a large pack or
// a clone of a large repository may rightly take many minutes. Instead a
// request body and a response must keep moving:
//
//   - the body gets Body to start with, and every BodyMinRate bytes that
//     arrive earn one more second (the rule of Apache's mod_reqtimeout):
//     a client trickling a body slower than that is cut off;
//   - every response write may wait Write for the client to read.
type Timeouts struct {
	// ReadHeader bounds the arrival of a request's headers.
	ReadHeader time.Duration
	// Idle bounds how long a keep-alive connection waits for its next
	// request.
	Idle time.Duration
	// Body and BodyMinRate (bytes per second) bound a request body.
	Body        time.Duration
	BodyMinRate int
	// Write bounds how long one response write waits for the client.
	Write time.Duration
}

// DefaultTimeouts are the deadlines slow clients are held to by default:
// generous for people on slow links, short enough that a client holding
// connections open without sending gives them back within seconds.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		ReadHeader: 10 * time.Second, Idle: time.Minute,
		Body: 20 * time.Second, BodyMinRate: 1024,
		Write: time.Minute,
	}
}

// Apply sets srv's timeouts and wraps its handler with the body and write
// deadlines. srv.Handler must be set.
func (t Timeouts) Apply(srv *http.Server) {
	srv.ReadHeaderTimeout = t.ReadHeader
	srv.IdleTimeout = t.Idle
	if t.Idle <= 0 {
		// http.Server falls back to ReadTimeout, then to no limit at all.
		srv.IdleTimeout = -1
	}
	srv.ReadTimeout, srv.WriteTimeout = 0, 0 // replaced by progress deadlines
	srv.Handler = t.Handler(srv.Handler)
}

// ErrBodyTooSlow is what reading a request body returns once it has
// arrived too slowly; it wraps os.ErrDeadlineExceeded.
var ErrBodyTooSlow = fmt.Errorf("request body arrived too slowly: %w", os.ErrDeadlineExceeded)

// Handler sets the body and write deadlines around next.
func (t Timeouts) Handler(next http.Handler) http.Handler {
	if t.Body <= 0 && t.Write <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		rc := http.NewResponseController(w)
		if t.Body > 0 && r.Body != nil && r.Body != http.NoBody {
			b := &bodyReader{ReadCloser: r.Body, rc: rc, start: now, t: t}
			b.extend(now)
			r.Body = b
		}
		if t.Write > 0 {
			pw := &progressWriter{ResponseWriter: w, rc: rc, d: t.Write}
			pw.extend(now)
			defer func() { pw.extend(time.Now()) }() // for the flush after the handler
			w = pw
		}
		next.ServeHTTP(w, r)
	})
}

// bodyReader moves the connection's read deadline as the body arrives.
type bodyReader struct {
	io.ReadCloser
	rc       *http.ResponseController
	start    time.Time
	t        Timeouts
	n        int64
	deadline time.Time
	failed   bool
}

// extend sets the deadline the bytes read so far earn, when it has moved
// by a second or more: one deadline change per read would cost more than
// the precision is worth.
func (b *bodyReader) extend(now time.Time) {
	d := b.start.Add(b.t.Body)
	if b.t.BodyMinRate > 0 {
		d = d.Add(time.Duration(b.n) * time.Second / time.Duration(b.t.BodyMinRate))
	}
	if d.Sub(b.deadline) >= time.Second || b.deadline.IsZero() {
		b.deadline = d
		if b.rc.SetReadDeadline(d) != nil {
			b.failed = true
		}
	}
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		// The server now reads in the background to notice a client
		// going away; a deadline left here would cut a long response.
		b.rc.SetReadDeadline(time.Time{})
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		err = ErrBodyTooSlow
	case err == nil && !b.failed:
		b.extend(time.Now())
	}
	return n, err
}

// progressWriter gives every write Write to complete. The deadline is
// moved at most every tenth of it, not at every write.
type progressWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	d    time.Duration
	last time.Time
}

func (w *progressWriter) extend(now time.Time) {
	w.last = now
	w.rc.SetWriteDeadline(now.Add(w.d))
}

func (w *progressWriter) touch() {
	if now := time.Now(); now.Sub(w.last) > w.d/10 {
		w.extend(now)
	}
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.touch()
	return w.ResponseWriter.Write(p)
}

func (w *progressWriter) WriteHeader(code int) {
	w.touch()
	w.ResponseWriter.WriteHeader(code)
}

// Flush, Hijack and CloseNotify pass through, since gin asserts them.
func (w *progressWriter) Flush() {
	w.touch()
	w.rc.Flush()
}

func (w *progressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) { return w.rc.Hijack() }

// CloseNotify is deprecated, but gin's Context.Stream still calls it.
func (w *progressWriter) CloseNotify() <-chan bool {
	//lint:ignore SA1019 gin asserts it
	if cn, ok := w.ResponseWriter.(http.CloseNotifier); ok {
		return cn.CloseNotify()
	}
	return nil // never closes: the writer below cannot tell
}

// Unwrap lets http.ResponseController reach the connection.
func (w *progressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
