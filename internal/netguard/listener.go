package netguard

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire/quire"
	"golang.org/x/sync/semaphore"
)

// Limits caps the connections a Listener keeps open. Zero is no cap.
type Limits struct {
	// Max is the most connections open at once.
	Max int
	// PerAddr is the most connections open at once from one client
	// address: one IPv4 address, or one IPv6 /64 (what one host or site
	// is usually given, so an attacker gains nothing by rotating
	// addresses inside it).
	PerAddr int
	// RetryAfter is what a refused client is told to wait (default 1s).
	RetryAfter time.Duration
}

// Listener caps the connections it hands out. Over a cap, it answers the
// connection itself with "503 Service Unavailable", a JSON APIError and
// Retry-After, and closes it.
//
// It is written here rather than taken from golang.org/x/net/netutil:
// LimitListener stops accepting when full, so the kernel's accept queue
// fills, new clients (health checks, people) hang until they time out,
// and nothing counts per address. Answering at once keeps the queue
// moving and tells a client why.
type Listener struct {
	net.Listener
	limits Limits
	// lingering bounds the refused connections read after their answer.
	lingering *semaphore.Weighted
	// OnRefuse, when set, is called for every refused connection with
	// why ("total" or "address"); it must not block.
	OnRefuse func(reason string, addr netip.Addr)

	mu     sync.Mutex
	open   int
	byAddr map[netip.Addr]int

	refusedTotal, refusedAddr atomic.Int64
	answers                   map[string][]byte
}

// NewListener wraps ln with limits.
func NewListener(ln net.Listener, limits Limits) *Listener {
	if limits.RetryAfter <= 0 {
		limits.RetryAfter = time.Second
	}
	secs := max(1, int((limits.RetryAfter+time.Second-1)/time.Second))
	return &Listener{
		Listener: ln, limits: limits, byAddr: map[netip.Addr]int{},
		lingering: semaphore.NewWeighted(maxLingering),
		answers: map[string][]byte{
			"total":   refusal("the server has too many open connections; retry later", secs),
			"address": refusal("too many open connections from this address; retry later", secs),
		},
	}
}

// refusal is the whole HTTP response a refused connection gets.
func refusal(msg string, retryAfter int) []byte {
	body, _ := json.Marshal(struct {
		Error   string         `json:"error"`
		Code    quire.Code     `json:"code"`
		Details map[string]any `json:"details"`
	}{msg, quire.EUNAVAILABLE, map[string]any{"retry_after": retryAfter}})
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"+
		"Retry-After: %d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", retryAfter, len(body), body)
}

// Accept returns the next connection within the limits; connections over
// them are answered and closed here.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := clientKey(c.RemoteAddr())
		reason := l.admit(addr)
		if reason == "" {
			return &conn{Conn: c, l: l, addr: addr}, nil
		}
		if reason == "total" {
			l.refusedTotal.Add(1)
		} else {
			l.refusedAddr.Add(1)
		}
		if l.OnRefuse != nil {
			l.OnRefuse(reason, addr)
		}
		l.refuse(c, l.answers[reason])
	}
}

// admit counts a connection from addr in, or says which cap it is over.
func (l *Listener) admit(addr netip.Addr) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limits.Max > 0 && l.open >= l.limits.Max {
		return "total"
	}
	if l.limits.PerAddr > 0 && l.byAddr[addr] >= l.limits.PerAddr {
		return "address"
	}
	l.open++
	l.byAddr[addr]++
	return ""
}

func (l *Listener) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if n := l.byAddr[addr] - 1; n > 0 {
		l.byAddr[addr] = n
	} else {
		delete(l.byAddr, addr)
	}
}

// Open is the number of connections open now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Refused is how many connections were refused, over the total cap and
// over the per-address cap.
func (l *Listener) Refused() (total, addr int64) {
	return l.refusedTotal.Load(), l.refusedAddr.Load()
}

// Limits are the caps in force.
func (l *Listener) Limits() Limits { return l.limits }

// refuse writes the 503 and closes c. The write cannot block for long: a
// new connection's send buffer is empty, and a deadline bounds it anyway.
// What the client already sent is drained first, so the close is a FIN
// the client reads the answer before, not a reset that may discard it.
//
// A client still sending (a slow one trickling its request) can race the
// drain: data arriving after it makes the close a reset. So, as net/http
// does, the answer is followed by a half-close and a short linger that
// reads until the client closes too, in a goroutine; at most
// maxLingering connections linger at once, the rest close at once.
func (l *Listener) refuse(c net.Conn, answer []byte) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(answer)
	drain(c)
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok || !l.lingering.TryAcquire(1) {
		c.Close()
		return
	}
	cw.CloseWrite()
	go func() {
		defer l.lingering.Release(1)
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(lingerTime))
		io.Copy(io.Discard, c)
	}()
}

// lingerTime bounds how long a refused connection is read after its
// answer; maxLingering how many are at once (an fd each).
const (
	lingerTime   = 100 * time.Millisecond
	maxLingering = 256
)

// clientKey is the address a connection counts against: the IP, with
// IPv4-mapped IPv6 unmapped and IPv6 cut to its /64.
func clientKey(a net.Addr) netip.Addr {
	var ip netip.Addr
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr()
		}
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			ip = p.Addr()
		}
	}
	return ip
}

// conn is an admitted connection; closing it frees its place once.
type conn struct {
	net.Conn
	l      *Listener
	addr   netip.Addr
	closed atomic.Bool
}

func (c *conn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.release(c.addr)
	}
	return c.Conn.Close()
}

// CloseWrite lets net/http half-close the connection, as it does with a
// bare *net.TCPConn, so a client sees the whole answer before the close.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
