package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quire/quire/app"
	"github.com/quire/quire/eventlog"
	"github.com/quire/quire/webhook"
)

// WebhookOptions tune event delivery.
type WebhookOptions struct {
	// AllowPrivate lets webhooks reach loopback, private and link-local
	// addresses (on-premise receivers, tests). Off by default: the SSRF
	// guard refuses them at creation and at every dial.
	AllowPrivate bool
	// RetrySchedule is the wait before each retry; Standard Webhooks'
	// schedule (5s … 10h) when nil.
	RetrySchedule []time.Duration
	// Timeout bounds one attempt (10s when 0).
	Timeout time.Duration
	// DisableAfter is how long a webhook may fail before it is turned
	// off (3 days when 0).
	DisableAfter time.Duration
	// SecretKey seals signing secrets at rest (32 bytes); when nil it is
	// read from, or made in, <data>/_events/webhook.key.
	SecretKey []byte
	// Heartbeat is the event stream's idle comment interval (15 s when
	// 0); Keep and KeepFor the retained window of a project's events
	// (10,000 and 7 days when 0). Tests shorten them.
	Heartbeat time.Duration
	Keep      int
	KeepFor   time.Duration
	// Recheck is how often an open event stream checks its credential
	// and read access again (30 s when 0); StreamMax how long a stream
	// lasts before it ends with a retry: hint (1 h when 0).
	Recheck   time.Duration
	StreamMax time.Duration
}

// eventParts are what Build opened for events.
type eventParts struct {
	log    *eventlog.Store
	sender *webhook.Sender
	stop   context.CancelFunc
	done   chan struct{}
}

// openEvents opens the event log under the data root and the sender.
func (s *Server) openEvents(cfg Config) (app.EventsConfig, error) {
	log, err := eventlog.Open(eventlog.Options{Root: filepath.Join(s.Store.Root(), "_events"), Fsync: cfg.Fsync,
		Keep: cfg.Webhooks.Keep, KeepFor: cfg.Webhooks.KeepFor})
	if err != nil {
		return app.EventsConfig{}, err
	}
	key := cfg.Webhooks.SecretKey
	if key == nil {
		if key, err = loadKey(filepath.Join(log.Root(), "webhook.key")); err != nil {
			return app.EventsConfig{}, err
		}
	}
	if len(key) != 32 {
		return app.EventsConfig{}, fmt.Errorf("webhook secret key must be 32 bytes, not %d", len(key))
	}
	s.events.log = log
	s.events.sender = webhook.New(webhook.Options{Timeout: cfg.Webhooks.Timeout, AllowPrivate: cfg.Webhooks.AllowPrivate, UserAgent: "quire-webhooks/" + cfg.Version})
	return app.EventsConfig{
		Log: log, Webhooks: log, Sender: s.events.sender, SecretKey: key,
		RetrySchedule: cfg.Webhooks.RetrySchedule, DisableAfter: cfg.Webhooks.DisableAfter,
		Heartbeat: cfg.Webhooks.Heartbeat, Recheck: cfg.Webhooks.Recheck, StreamMax: cfg.Webhooks.StreamMax,
	}, nil
}

// loadKey reads the key at path, making it (32 random bytes, base64, mode
// 0600) on first start. O_EXCL: of two processes starting at once, one
// writes it and the other reads it.
func loadKey(path string) ([]byte, error) {
	for range 50 {
		b, err := os.ReadFile(path)
		if err == nil {
			if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b))); err == nil && len(k) == 32 {
				return k, nil
			}
			time.Sleep(20 * time.Millisecond) // being written by another process
			continue
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		k := make([]byte, 32)
		rand.Read(k)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		_, err = f.WriteString(base64.StdEncoding.EncodeToString(k) + "\n")
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return k, err
	}
	return nil, fmt.Errorf("webhook key %s is unreadable", path)
}

// startDeliveries runs the delivery worker until Close.
func (s *Server) startDeliveries(ctx context.Context) {
	if s.events.log == nil {
		return
	}
	// Writes a previous run was killed in the middle of get their events
	// before anything is served (app/intents.go).
	if err := s.App.RecoverIntents(ctx); err != nil {
		s.Log.Error("recover event intents", "error", err.Error())
	}
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.events.stop, s.events.done = stop, make(chan struct{})
	go func() {
		defer close(s.events.done)
		s.App.RunDeliveries(wctx)
	}()
}

// stopDeliveries ends the worker and waits for it: an attempt under way
// is cut short and made again after a restart.
func (s *Server) stopDeliveries() {
	if s.events.stop != nil {
		s.events.stop()
		<-s.events.done
	}
	if s.App != nil {
		s.App.StopEvents()
	}
	if s.events.sender != nil {
		s.events.sender.Close()
	}
	if s.events.log != nil {
		s.events.log.Close()
	}
}
