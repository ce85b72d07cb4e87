package httpapi

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestDummyHashCost: a login for an unknown email must cost a bcrypt
// comparison at the server's cost, or timing tells who has an account.
func TestDummyHashCost(t *testing.T) {
	for _, cost := range []int{bcrypt.MinCost, bcrypt.MinCost + 2} {
		s := &Server{bcryptCost: cost}
		if got, err := bcrypt.Cost(s.dummyHash()); err != nil || got != cost {
			t.Errorf("server with cost %d: dummy hash cost %d, %v", cost, got, err)
		}
	}
}
