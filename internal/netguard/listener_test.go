package netguard

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// serve runs an http.Server answering 200 on a capped listener.
func serve(t *testing.T, limits Limits) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gl := NewListener(ln, limits)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})}
	go srv.Serve(gl)
	t.Cleanup(func() { srv.Close() })
	return gl
}

// dialFrom opens a connection from a loopback source address: Linux
// routes all of 127/8 to lo, so one host plays several clients.
func dialFrom(t *testing.T, src, dst string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends a GET on c and reads the answer.
func get(t *testing.T, c net.Conn) (*http.Response, []byte) {
	t.Helper()
	c.SetDeadline(time.Now().Add(30 * time.Second)) // against a hang only
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil && res.Close {
		t.Fatalf("read body: %v", err)
	}
	return res, body
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

func checkRefusal(t *testing.T, res *http.Response, body []byte, wantMsg string) {
	t.Helper()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "2" || res.Header.Get("Content-Type") != "application/json; charset=utf-8" || !res.Close {
		t.Fatalf("refusal: %d %v", res.StatusCode, res.Header)
	}
	var e struct {
		Error, Code string
		Details     map[string]any
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("refusal body %q: %v", body, err)
	}
	if e.Code != "unavailable" || e.Error != wantMsg || e.Details["retry_after"] != 2.0 {
		t.Fatalf("refusal body: %s", body)
	}
}

func TestListenerPerAddress(t *testing.T) {
	l := serve(t, Limits{PerAddr: 2, RetryAfter: 2 * time.Second})
	addr := l.Addr().String()
	a1, a2 := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	waitFor(t, "two connections admitted", func() bool { return l.Open() == 2 })
	// The third from the same address is answered and closed...
	res, body := get(t, dialFrom(t, "127.0.0.2", addr))
	checkRefusal(t, res, body, "too many open connections from this address; retry later")
	if _, a := l.Refused(); a != 1 {
		t.Fatalf("refused by address: %d", a)
	}
	// ...while another address is served, and so are the first two.
	if res, body := get(t, dialFrom(t, "127.0.0.3", addr)); res.StatusCode != 200 || string(body) != "ok" {
		t.Fatalf("other address: %d %s", res.StatusCode, body)
	}
	if res, _ := get(t, a1); res.StatusCode != 200 {
		t.Fatalf("admitted connection: %d", res.StatusCode)
	}
	// Closing one makes room again.
	a2.Close()
	waitFor(t, "a closed connection frees its place", func() bool { return l.Open() <= 2 })
	if res, _ := get(t, dialFrom(t, "127.0.0.2", addr)); res.StatusCode != 200 {
		t.Fatalf("after a close: %d", res.StatusCode)
	}
}

func TestListenerTotal(t *testing.T) {
	l := serve(t, Limits{Max: 3, PerAddr: 2, RetryAfter: 1500 * time.Millisecond})
	addr := l.Addr().String()
	for _, src := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		dialFrom(t, src, addr)
	}
	waitFor(t, "three connections admitted", func() bool { return l.Open() == 3 })
	res, body := get(t, dialFrom(t, "127.0.0.5", addr))
	checkRefusal(t, res, body, "the server has too many open connections; retry later")
	if tot, _ := l.Refused(); tot != 1 {
		t.Fatalf("refused in total: %d", tot)
	}
}

func TestClientKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7:80", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:80", "2001:db8:1:2::"},
		{"[2001:db8:1:2:ffff::1]:443", "2001:db8:1:2::"},
	} {
		a, err := net.ResolveTCPAddr("tcp", tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := clientKey(a).String(); got != tc.want {
			t.Errorf("clientKey(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestDefaultMaxConns(t *testing.T) {
	for _, tc := range []struct {
		nofile uint64
		want   int
	}{
		{0, DefaultMaxConnsCeiling},
		{100, 16},
		{1024, 896},
		{2048, 1792},
		{10000, 8750},
		{20000, DefaultMaxConnsCeiling},
		{1 << 20, DefaultMaxConnsCeiling},
	} {
		if got := DefaultMaxConns(tc.nofile); got != tc.want {
			t.Errorf("DefaultMaxConns(%d) = %d, want %d", tc.nofile, got, tc.want)
		}
	}
}
