package mcp

import "time"

// SDKOnly returns o with the prompts/get fast path off: the
// SDK answers every request, for tests to compare the fast path with.
func SDKOnly(o Options) Options {
	o.sdkOnly = true
	return o
}

// SessionClock returns o with idle sessions ending after timeout and the
// fast path reading the time from now: for tests of how often a session's
// requests reach the SDK.
func SessionClock(o Options, timeout time.Duration, now func() time.Time) Options {
	o.sessionTimeout, o.now = timeout, now
	return o
}

// FastAnswers is how many calls s's fast path has answered.
func FastAnswers(s *Server) int64 { return s.fastAnswers.Load() }
