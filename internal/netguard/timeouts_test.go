package netguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// serveWith runs handler behind t's timeouts.
func serveWith(t *testing.T, to Timeouts, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	to.Apply(srv)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// A body that stops arriving is cut off with ErrBodyTooSlow.
func TestBodyTooSlow(t *testing.T) {
	got := make(chan error, 1)
	addr := serveWith(t, Timeouts{Body: 200 * time.Millisecond, BodyMinRate: 1000}, func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nsome bytes, then nothing")
	select {
	case err := <-got:
		if !errors.Is(err, ErrBodyTooSlow) {
			t.Fatalf("body read: %v, want ErrBodyTooSlow", err)
		}
	case <-time.After(time.Minute): // against a hang only
		t.Fatal("a stalled body was never cut off")
	}
	// The server then closes the connection.
	c.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("connection not closed: %v", err)
	}
}

// A body that keeps arriving at the minimum rate may take longer than the
// initial allowance; the request gets its answer, and a response that
// keeps being read may outlast Write.
func TestSlowButSteady(t *testing.T) {
	const chunks = 6
	addr := serveWith(t, Timeouts{Body: 200 * time.Millisecond, BodyMinRate: 100, Write: 200 * time.Millisecond},
		func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			for i := range chunks {
				fmt.Fprintf(w, "%d:%d\n", i, len(b))
				w.(http.Flusher).Flush()
				time.Sleep(60 * time.Millisecond) // pacing a long response
			}
		})
	pr, pw := io.Pipe()
	go func() {
		// 100 bytes (one second earned) every 60ms: 360ms in all.
		for range chunks {
			pw.Write([]byte(strings.Repeat("x", 100)))
			time.Sleep(60 * time.Millisecond) // pacing a slow client
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", "http://"+addr+"/", pr)
	req.ContentLength = chunks * 100
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%d %s %v", res.StatusCode, body, err)
	}
	if want := "5:600\n"; !strings.HasSuffix(string(body), want) || strings.Count(string(body), "\n") != chunks {
		t.Fatalf("body %q", body)
	}
}

// A client that stops reading the response has its writes fail.
func TestWriteStalled(t *testing.T) {
	got := make(chan error, 1)
	addr := serveWith(t, Timeouts{Write: 200 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<16)
		for {
			if _, err := w.Write(buf); err != nil {
				got <- err
				return
			}
		}
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	bufio.NewReader(c).Peek(1) // read a little, then nothing
	select {
	case err := <-got:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a stalled client was never cut off")
	}
}
