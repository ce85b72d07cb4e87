package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/pipeline"
)

func TestRateLimitFlags(t *testing.T) {
	m := NewMain(io.Discard)
	if err := m.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Config.RateLimits, pipeline.DefaultRateLimits(); got != want || got.Request.Enabled() || !got.LoginAccount.Enabled() {
		t.Fatalf("defaults %+v, want %+v: request limit off, login throttles on", got, want)
	}

	t.Setenv("QUIRE_RATE_LIMIT", "100/1s:200")
	t.Setenv("QUIRE_LOGIN_LIMIT", "5/1h")
	m = NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--login-address-limit", "off", "--login-limit", "20/30m"}); err != nil {
		t.Fatal(err)
	}
	want := pipeline.RateLimits{
		Request:      quire.Limit{Rate: 100, Period: time.Second, Burst: 200},
		LoginAccount: quire.Limit{Rate: 20, Period: 30 * time.Minute}, // the flag beats the environment
	}
	if m.Config.RateLimits != want {
		t.Fatalf("limits %+v, want %+v", m.Config.RateLimits, want)
	}

	t.Setenv("QUIRE_RATE_LIMIT", "lots")
	if err := NewMain(io.Discard).ParseFlags(nil); err == nil || !strings.Contains(err.Error(), "QUIRE_RATE_LIMIT") {
		t.Fatalf("a bad QUIRE_RATE_LIMIT: %v", err)
	}
	t.Setenv("QUIRE_RATE_LIMIT", "")
	if err := NewMain(io.Discard).ParseFlags([]string{"--login-limit", "10/-1m"}); err == nil {
		t.Fatal("a negative period was accepted")
	}
}
