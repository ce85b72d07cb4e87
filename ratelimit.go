package quire

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limit is a rate: Rate events per Period on average, with up to Burst at
// once. The zero Limit is no limit.
type Limit struct {
	Rate   int
	Period time.Duration
	Burst  int
}

// Enabled reports whether l limits anything.
func (l Limit) Enabled() bool { return l.Rate > 0 && l.Period > 0 }

// Interval is the time one event's allowance takes to come back.
func (l Limit) Interval() time.Duration { return l.Period / time.Duration(l.Rate) }

// Capacity is how many events may happen at once: Burst, or Rate when
// Burst is unset.
func (l Limit) Capacity() int {
	if l.Burst > 0 {
		return l.Burst
	}
	return l.Rate
}

// String formats l the way ParseLimit reads it.
func (l Limit) String() string {
	if !l.Enabled() {
		return "0"
	}
	s := strconv.Itoa(l.Rate) + "/" + shortDuration(l.Period)
	if l.Burst > 0 && l.Burst != l.Rate {
		s += ":" + strconv.Itoa(l.Burst)
	}
	return s
}

// shortDuration is d as people write it: "15m", not "15m0s".
func shortDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		unit string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.unit
		}
	}
	return d.String()
}

// ParseLimit reads "RATE/PERIOD[:BURST]", e.g. "100/1s", "10/15m" or
// "50/1s:200"; PERIOD may be a bare unit ("s", "m", "h"). "0", "off" and
// "" are no limit.
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" || s == "off" {
		return Limit{}, nil
	}
	bad := fmt.Errorf("limit %q: want RATE/PERIOD[:BURST], e.g. 100/1s or 10/15m:20", s)
	rate, rest, ok := strings.Cut(s, "/")
	if !ok {
		return Limit{}, bad
	}
	period, burst, hasBurst := strings.Cut(rest, ":")
	var l Limit
	var err error
	if l.Rate, err = strconv.Atoi(rate); err != nil || l.Rate <= 0 {
		return Limit{}, bad
	}
	if period != "" && (period[0] < '0' || period[0] > '9') {
		period = "1" + period
	}
	if l.Period, err = time.ParseDuration(period); err != nil || l.Period <= 0 {
		return Limit{}, bad
	}
	if hasBurst {
		if l.Burst, err = strconv.Atoi(burst); err != nil || l.Burst <= 0 {
			return Limit{}, bad
		}
	}
	if l.Interval() < time.Microsecond {
		return Limit{}, fmt.Errorf("limit %q: at most one event per microsecond", s)
	}
	return l, nil
}

// Decision is the outcome of asking a RateLimiter.
type Decision struct {
	Allowed bool
	// Remaining is how many more events would be allowed right now.
	Remaining int
	// RetryAfter, when not Allowed, is how long until one more is.
	RetryAfter time.Duration
}

// RateLimiter counts events per key against a limit. Implementations
// keep the counts where every quire process sees them (Redis), so a limit
// holds across nodes. An error means the count is unknown; callers fail
// open.
type RateLimiter interface {
	// Allow counts one event for key and reports whether it is within l.
	Allow(ctx context.Context, key string, l Limit) (Decision, error)
	// Peek reports whether one more event would be allowed, without
	// counting it.
	Peek(ctx context.Context, key string, l Limit) (Decision, error)
	// Reset forgets key's count.
	Reset(ctx context.Context, key string) error
}

// MarshalText and UnmarshalText let a Limit be a flag (flag.TextVar).
func (l Limit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

func (l *Limit) UnmarshalText(b []byte) error {
	v, err := ParseLimit(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
