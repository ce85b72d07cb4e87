// Package app holds quire's use cases: authentication, access (resolve a
// project or asset and authorize the caller, once), and, as they move here
// from the transports, the single write path, rendering, payloads, reviews
// and events. Every door -- the HTTP API, the git protocol, the web UI,
// MCP, the CLI -- decodes its input, calls app, and encodes the answer.
//
// app knows the domain (the root package) and calls the stores through
// its interfaces. It must not import gin, go-git, go-redis, or any door
// or store package (internal/archtest enforces this).
package app

import (
	"time"

	"github.com/quire/quire"
)

// Config is what the use cases need: the stores, and a clock.
type Config struct {
	Meta     quire.MetaStore
	Versions quire.VersionStore
	Sessions quire.SessionStore
	// Now is the clock sessions and API keys expire by; time.Now when nil.
	Now func() time.Time
}

// App is quire's use cases over its stores.
type App struct {
	meta     quire.MetaStore
	versions quire.VersionStore
	sessions quire.SessionStore
	now      func() time.Time
}

// New returns the use cases over cfg's stores.
func New(cfg Config) *App {
	a := &App{meta: cfg.Meta, versions: cfg.Versions, sessions: cfg.Sessions, now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	return a
}
