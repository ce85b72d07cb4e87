package httpapi

import (
	"bytes"
	"testing"
)

// TestSealedAnswer checks a kept answer is unreadable without the
// Idempotency-Key and its user, and opens with them.
func TestSealedAnswer(t *testing.T) {
	body := []byte(`{"token":"ak_secret_token"}`)
	sealed, err := sealBody(sealKey("u1", "k"), body)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("ak_secret")) {
		t.Fatal("sealed answer holds the token in the clear")
	}
	if got, err := openBody(sealKey("u1", "k"), sealed); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("open: %q, %v", got, err)
	}
	for _, k := range [][2]string{{"u2", "k"}, {"u1", "k2"}} {
		if _, err := openBody(sealKey(k[0], k[1]), sealed); err == nil {
			t.Fatalf("opened with user %s key %s", k[0], k[1])
		}
	}
}
