package httpapi

import (
	"testing"

	"github.com/quire/quire"
	"golang.org/x/crypto/bcrypt"
)

// noVersions satisfies the store New wires routes to; nothing calls it.
type noVersions struct{ quire.VersionStore }

// TestDummyHashCost: a login for an unknown email compares against a hash
// of the same cost as real ones, so its time does not tell whether the
// account exists.
func TestDummyHashCost(t *testing.T) {
	for _, tc := range []struct{ configured, want int }{
		{0, DefaultBcryptCost},
		{bcrypt.MinCost, bcrypt.MinCost},
		{12, 12},
	} {
		s := New(Config{BcryptCost: tc.configured, Versions: noVersions{}})
		if got, err := bcrypt.Cost(s.dummyHash); err != nil || got != tc.want {
			t.Errorf("BcryptCost %d: dummy hash cost %d (%v), want %d", tc.configured, got, err, tc.want)
		}
	}
}
