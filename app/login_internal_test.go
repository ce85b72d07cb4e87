package app

import (
	"testing"

	"github.com/quire/quire"
	"golang.org/x/crypto/bcrypt"
)

// noSessions stands for a session store: logins are offered; nothing
// calls it.
type noSessions struct{ quire.SessionStore }

// TestDummyHashCost: a login for an unknown email compares against a hash
// of the same cost as real ones, so its time does not tell whether the
// account exists.
func TestDummyHashCost(t *testing.T) {
	for _, tc := range []struct{ configured, want int }{
		{0, DefaultBcryptCost},
		{bcrypt.MinCost, bcrypt.MinCost},
		{12, 12},
	} {
		a := New(Config{BcryptCost: tc.configured, Sessions: noSessions{}})
		if got, err := bcrypt.Cost(a.login.dummyHash); err != nil || got != tc.want {
			t.Errorf("BcryptCost %d: dummy hash cost %d (%v), want %d", tc.configured, got, err, tc.want)
		}
	}
}
