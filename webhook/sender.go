// Package webhook posts quire's events to receivers: net/http's client
// behind an SSRF guard (only http and https; no loopback, private,
// link-local, unique-local, multicast or cloud-metadata address, checked
// on the address actually dialed so DNS rebinding cannot slip past; no
// redirects followed; no proxy from the environment) and the Standard
// Webhooks signature. It implements quire.WebhookSender and knows nothing
// of events, webhooks' storage or HTTP serving.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quire/quire"
)

// Options configure a Sender.
type Options struct {
	// Timeout bounds one attempt, from dial to the end of the response
	// headers and the (capped) body; 10 s when 0.
	Timeout time.Duration
	// AllowPrivate lifts the address guard: for receivers on premise
	// and for tests, whose receivers listen on 127.0.0.1.
	AllowPrivate bool
	// UserAgent is sent with every request.
	UserAgent string
}

// Sender posts signed requests to receivers.
type Sender struct {
	opts   Options
	client *http.Client
}

// maxResponse is how much of a receiver's answer is read; the rest is
// left unread and the connection closed, so a 100 MB answer costs nothing.
const maxResponse = 64 << 10

// New returns a Sender.
func New(opts Options) *Sender {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "quire-webhooks"
	}
	s := &Sender{opts: opts}
	d := &net.Dialer{Timeout: opts.Timeout, Control: s.control}
	s.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would dial for us, past the guard
			DialContext:           d.DialContext,
			TLSHandshakeTimeout:   opts.Timeout,
			ResponseHeaderTimeout: opts.Timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		},
		Timeout: opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer, and not a 2xx
		},
	}
	return s
}

// ErrRefused is the error of an address the guard refuses.
var ErrRefused = errors.New("address refused")

// control runs after DNS, on the address about to be dialed.
func (s *Sender) control(network, address string, _ syscall.RawConn) error {
	if s.opts.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefused, address)
	}
	if why := Refused(ap.Addr()); why != "" {
		return fmt.Errorf("%w: %s is %s", ErrRefused, ap.Addr(), why)
	}
	return nil
}

// blocked are ranges beyond what netip's predicates name: shared address
// space (carrier NAT, and Alibaba's metadata at 100.100.100.200), "this
// network", IETF protocol assignments, benchmarking, reserved, and
// NAT64 (which can reach any IPv4 address, private ones included).
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// Refused says why addr must not be reached ("" when it may): loopback,
// private, link-local (which holds 169.254.169.254, the cloud metadata
// address), unique-local (fd00:ec2::254, AWS's over IPv6), multicast,
// unspecified, or a blocked range.
func Refused(addr netip.Addr) string {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid():
		return "not an address"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsPrivate():
		return "private"
	case addr.IsLinkLocalUnicast():
		return "link-local (cloud metadata lives there)"
	case addr.IsMulticast(), addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
		return "multicast"
	case addr.IsUnspecified():
		return "unspecified"
	}
	if addr.Is4() && addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "broadcast"
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return "reserved (" + p.String() + ")"
		}
	}
	return ""
}

// CheckURL refuses a URL that is not absolute http(s), or whose host
// resolves to any refused address (quire.WebhookSender).
func (s *Sender) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return quire.Errorf(quire.EUNPROCESSABLE, "url must be an absolute http or https URL")
	}
	if u.User != nil {
		return quire.Errorf(quire.EUNPROCESSABLE, "url must not hold credentials")
	}
	if s.opts.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return quire.Errorf(quire.EUNPROCESSABLE, "url host %q does not resolve", host)
		}
		addrs = ips
	}
	for _, a := range addrs {
		if why := Refused(a); why != "" {
			return quire.Errorf(quire.EUNPROCESSABLE, "url host %q resolves to %s, a %s address; webhooks may not reach it (see --webhook-allow-private)", host, a, why)
		}
	}
	return nil
}

// Send posts one request and reports its outcome; it never returns early
// on a receiver's misbehaviour, it records it.
func (s *Sender) Send(ctx context.Context, r quire.WebhookRequest) quire.WebhookResult {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, strings.NewReader(string(r.Body)))
	if err != nil {
		return quire.WebhookResult{Err: err, Duration: time.Since(start)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.opts.UserAgent)
	for k, v := range Headers(r.Secrets, r.MsgID, time.Now(), r.Body) {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return quire.WebhookResult{Err: cleanError(err), Duration: time.Since(start)}
	}
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	resp.Body.Close()
	res := quire.WebhookResult{StatusCode: resp.StatusCode, Duration: time.Since(start)}
	if err != nil && resp.StatusCode/100 == 2 {
		res.Err = cleanError(err) // the answer broke off: not a clean success
	}
	return res
}

// cleanError drops the URL net/http puts in its errors (it may carry a
// token in its query) and keeps the cause.
func cleanError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("timed out")
	}
	return err
}

// Sign returns the webhook-signature header of the Standard Webhooks
// scheme: "v1,<base64 HMAC-SHA256 of id.timestamp.body>" for each
// secret, separated by spaces. It is a few lines of the standard library;
// the tests verify it with the Standard Webhooks reference library.
func Sign(secrets [][]byte, id string, ts time.Time, body []byte) string {
	var sb strings.Builder
	unix := strconv.FormatInt(ts.Unix(), 10)
	for i, key := range secrets {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id))
		m.Write([]byte{'.'})
		m.Write([]byte(unix))
		m.Write([]byte{'.'})
		m.Write(body)
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString("v1,")
		sb.WriteString(base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return sb.String()
}

// Headers returns the Standard Webhooks headers of one attempt.
func Headers(secrets [][]byte, id string, ts time.Time, body []byte) map[string]string {
	return map[string]string{
		"webhook-id":        id,
		"webhook-timestamp": strconv.FormatInt(ts.Unix(), 10),
		"webhook-signature": Sign(secrets, id, ts, body),
	}
}

// Close releases idle connections.
func (s *Sender) Close() { s.client.CloseIdleConnections() }

var _ quire.WebhookSender = (*Sender)(nil)
