package webhook

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/quire/quire"
)

var refusedAddrs = []struct {
	addr, why string
}{
	{"127.0.0.1", "loopback"},
	{"127.255.0.9", "loopback"},
	{"::1", "loopback"},
	{"::ffff:127.0.0.1", "loopback"},
	{"10.0.0.1", "private"},
	{"172.31.255.255", "private"},
	{"192.168.0.10", "private"},
	{"fc00::1", "private"},
	{"fd00:ec2::254", "private"},
	{"169.254.169.254", "link-local"},
	{"fe80::1", "link-local"},
	{"224.0.0.251", "multicast"},
	{"ff02::1", "multicast"},
	{"0.0.0.0", "unspecified"},
	{"::", "unspecified"},
	{"100.100.100.200", "reserved"},
	{"0.1.2.3", "reserved"},
	{"198.18.0.1", "reserved"},
	{"240.0.0.1", "reserved"},
	{"255.255.255.255", "broadcast"},
	{"64:ff9b::a00:1", "reserved"},
}

func TestRefused(t *testing.T) {
	for _, tc := range refusedAddrs {
		if why := Refused(netip.MustParseAddr(tc.addr)); !strings.Contains(why, tc.why) {
			t.Errorf("%s: %q, want %q", tc.addr, why, tc.why)
		}
	}
	for _, ok := range []string{"93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "100.63.255.255", "172.32.0.1"} {
		if why := Refused(netip.MustParseAddr(ok)); why != "" {
			t.Errorf("%s refused as %s", ok, why)
		}
	}
}

// TestDialGuard: the guard checks the address actually dialed, so a URL
// that passed CheckURL (or a name rebound to a private address after it)
// still cannot reach one; the receiver never sees the request.
func TestDialGuard(t *testing.T) {
	var hits atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer rc.Close()
	s := New(Options{Timeout: 2 * time.Second})
	defer s.Close()
	port := rc.URL[strings.LastIndex(rc.URL, ":"):]
	for _, u := range []string{rc.URL, "http://localhost" + port} {
		res := s.Send(context.Background(), quire.WebhookRequest{URL: u, MsgID: "msg_1", Body: []byte(`{}`)})
		if !errors.Is(res.Err, ErrRefused) {
			t.Errorf("%s: %v, want refused", u, res.Err)
		}
		if err := s.CheckURL(context.Background(), u); quire.ErrorCode(err) != quire.EUNPROCESSABLE {
			t.Errorf("CheckURL(%s): %v", u, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("receiver hit %d times", hits.Load())
	}
	open := New(Options{AllowPrivate: true})
	defer open.Close()
	if res := open.Send(context.Background(), quire.WebhookRequest{URL: rc.URL, MsgID: "msg_1", Body: []byte(`{}`)}); res.Err != nil || res.StatusCode != 200 {
		t.Errorf("with AllowPrivate: %+v", res)
	}
}

// TestSignMatchesReference: Sign agrees with the Standard Webhooks
// reference library.
func TestSignMatchesReference(t *testing.T) {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := decodeSecret(secret)
	ts := time.Unix(1614265330, 0)
	body := []byte(`{"test": 2432232314}`)
	want, err := wh.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	if got := Sign([][]byte{raw}, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body); got != want {
		t.Errorf("Sign = %s, reference %s", got, want)
	}
}

func decodeSecret(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
}
