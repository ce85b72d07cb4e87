package pipeline

import (
	"time"

	"github.com/quire/quire"
)

// RateLimits are the limits quire applies with a rate limiter. A zero
// Limit is off.
type RateLimits struct {
	// Request limits the requests of one credential (Pipeline): an API
	// key, or the user of a session (all their sessions together).
	// Requests without a valid credential count against the client
	// address.
	Request quire.Limit
	// LoginAccount and LoginAddress limit failed logins per email and per
	// client address (app.LoginConfig).
	LoginAccount quire.Limit
	LoginAddress quire.Limit
}

// DefaultRateLimits: no request limit (a deployment picks one for its
// traffic), and login throttles no person typing a password meets.
func DefaultRateLimits() RateLimits {
	return RateLimits{
		LoginAccount: quire.Limit{Rate: 10, Period: 15 * time.Minute},
		LoginAddress: quire.Limit{Rate: 100, Period: 15 * time.Minute},
	}
}
