package quire_test

import (
	"strings"
	"testing"

	"github.com/quire/quire"
)

func TestSecretMatches(t *testing.T) {
	secret := quire.NewSecret()
	long := strings.Repeat("ab", 50)
	tests := []struct {
		name, secret, hash string
		want               bool
	}{
		{"same secret", secret, quire.HashSecret(secret), true},
		{"other secret", quire.NewSecret(), quire.HashSecret(secret), false},
		{"one character changed", secret[:63] + "x", quire.HashSecret(secret), false},
		{"hash cut short", secret, quire.HashSecret(secret)[:63], false},
		{"empty hash", secret, "", false},
		{"longer than a token secret", long, quire.HashSecret(long), true},
		{"empty secret", "", quire.HashSecret(""), true},
	}
	for _, tt := range tests {
		if got := quire.SecretMatches(tt.secret, tt.hash); got != tt.want {
			t.Errorf("%s: SecretMatches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSecretMatchesAllocs: every authenticated request checks a secret,
// so the check allocates nothing.
func TestSecretMatchesAllocs(t *testing.T) {
	secret := quire.NewSecret()
	hash := quire.HashSecret(secret)
	if n := testing.AllocsPerRun(100, func() { quire.SecretMatches(secret, hash) }); n != 0 {
		t.Fatalf("SecretMatches allocates %v times per call", n)
	}
}
