// Package eventlog keeps quire's events and webhooks on the data root's
// disk: one append-only JSON-lines log per project (events.jsonl), and per
// webhook its record, its delivery state and its attempt log. Every write
// is made under a file lock (filelock, the flock gitstore takes too) that
// all processes sharing the data root honour, and synced before it
// returns, so what Append acknowledged survives SIGKILL (and, with Fsync,
// power loss). docs/events.md says why files and not git or Redis.
//
// It implements quire.EventLog and quire.WebhookStore. It must not import
// app, httpapi, gitstore or any door.
package eventlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/filelock"
)

// Options configure a Store.
type Options struct {
	// Root is the directory of the logs (the data root's events/).
	Root string
	// Fsync syncs files and directories before a write returns; without
	// it a write survives a killed process but not a power loss.
	Fsync bool
	// Keep and KeepFor bound a project's log: older events beyond the
	// newest Keep are dropped once they are older than KeepFor.
	Keep    int
	KeepFor time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Store is the event log and webhook store.
type Store struct {
	opts  Options
	locks *filelock.Locker

	mu   sync.Mutex
	logs map[string]*plog

	// owner names this Store in the intents it records; ownerLock is held
	// while it lives (intents.go).
	owner     string
	ownerLock *flock.Flock
}

// Open opens (creating) the store at opts.Root.
func Open(opts Options) (*Store, error) {
	if opts.Keep <= 0 {
		opts.Keep = 10000
	}
	if opts.KeepFor <= 0 {
		opts.KeepFor = 7 * 24 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(opts.Root, 0o755); err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	// What a removal cut short left (RemoveProject).
	if trash, _ := filepath.Glob(filepath.Join(opts.Root, ".trash-*")); len(trash) > 0 {
		for _, t := range trash {
			os.RemoveAll(t)
		}
	}
	s := &Store{opts: opts, locks: filelock.New(), logs: map[string]*plog{}}
	if err := s.takeOwnership(); err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	return s, nil
}

// Root is the directory of the logs.
func (s *Store) Root() string { return s.opts.Root }

// safeName is what a project or webhook id must look like to name a
// directory or file.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

func (s *Store) projectDir(projectID string) (string, error) {
	if !safeName.MatchString(projectID) {
		return "", quire.Errorf(quire.ENOTFOUND, "project not found")
	}
	return filepath.Join(s.opts.Root, projectID), nil
}

// record is one line of a project's log: an event, or a held event
// (Hold) waiting for its Release. Key ties an event to the held records
// it releases.
type record struct {
	Key   string       `json:"key,omitempty"`
	Event *quire.Event `json:"event,omitempty"`
	Held  *quire.Event `json:"held,omitempty"`
	// Intent is the intent (intents.go) this event or held event fulfils.
	Intent string `json:"intent,omitempty"`
}

// plog is the process's copy of one project's log, read incrementally:
// the file only grows, except when trim replaces it (a new inode).
type plog struct {
	mu       sync.Mutex
	path     string
	fi       os.FileInfo
	complete int64 // end of the last complete line read
	recs     []record
	events   []*quire.Event // the event records, in order (ids ascending)
	// fulfilled are the intents the records read so far fulfil.
	fulfilled map[string]bool
}

func (s *Store) plog(projectID string) (*plog, error) {
	dir, err := s.projectDir(projectID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.logs[projectID]
	if l == nil {
		l = &plog{path: filepath.Join(dir, "events.jsonl")}
		s.logs[projectID] = l
	}
	return l, nil
}

// refresh reads what was appended since the last read; the caller holds
// l.mu. A trailing line without its newline (a write cut short) is left
// for later: it is either completed or truncated by the next writer.
func (l *plog) refresh() error {
	fi, err := os.Stat(l.path)
	if os.IsNotExist(err) {
		l.fi, l.complete, l.recs, l.events, l.fulfilled = nil, 0, nil, nil, nil
		return nil
	}
	if err != nil {
		return err
	}
	if l.fi == nil || !os.SameFile(l.fi, fi) || fi.Size() < l.complete {
		l.complete, l.recs, l.events, l.fulfilled = 0, nil, nil, nil
	}
	l.fi = fi
	if fi.Size() == l.complete {
		return nil
	}
	f, err := os.Open(l.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(l.complete, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return nil // an incomplete last line, or none
		}
		if err != nil {
			return err
		}
		l.complete += int64(len(line))
		var rec record
		if json.Unmarshal(line, &rec) != nil {
			continue // a damaged line is skipped, never fatal
		}
		l.recs = append(l.recs, rec)
		if rec.Event != nil {
			l.events = append(l.events, rec.Event)
		}
		if rec.Intent != "" {
			if l.fulfilled == nil {
				l.fulfilled = map[string]bool{}
			}
			l.fulfilled[rec.Intent] = true
		}
	}
}

// lastID is the newest event id, "" for none.
func (l *plog) lastID() string {
	if len(l.events) == 0 {
		return ""
	}
	return l.events[len(l.events)-1].ID
}

// write appends recs to the project's log under its lock, repairing a
// line an earlier writer left cut short. Events get their ids here, so
// the log's order is the ids' order.
func (s *Store) write(projectID string, recs ...record) error {
	l, err := s.plog(projectID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return err
	}
	unlock, err := s.locks.Lock(filepath.Join(filepath.Dir(l.path), "events.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refresh(); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if fi.Size() > l.complete {
		if err := f.Truncate(l.complete); err != nil { // a torn write: never acknowledged
			return err
		}
	}
	last := l.lastID()
	var buf bytes.Buffer
	for _, rec := range recs {
		if ev := rec.Event; ev != nil {
			id, err := newID(last)
			if err != nil {
				return err
			}
			ev.ID, last = id, id
			if ev.Data == nil {
				ev.Data = map[string]any{}
			}
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if _, err := f.WriteAt(buf.Bytes(), l.complete); err != nil {
		return err
	}
	if s.opts.Fsync {
		if err := f.Sync(); err != nil {
			return err
		}
		if l.complete == 0 {
			syncDir(filepath.Dir(l.path))
		}
	}
	if err := l.refresh(); err != nil {
		return err
	}
	if len(l.recs) > 2*s.opts.Keep {
		return s.trim(l)
	}
	return nil
}

// newID returns a UUIDv7 greater than last. google/uuid's NewV7 is
// monotonic within a process; another process sharing the log may be a
// tick behind, so ids are drawn until one sorts after the log's newest.
func newID(last string) (string, error) {
	for range 1000 {
		id, err := uuid.NewV7()
		if err != nil {
			return "", err
		}
		if s := id.String(); s > last {
			return s, nil
		}
		time.Sleep(100 * time.Microsecond)
	}
	return "", fmt.Errorf("event ids: the clock is behind the log's newest id %s", last)
}

// trim rewrites l without events both beyond the newest Keep and older
// than KeepFor (and without released held records); the caller holds the
// log's lock and l.mu.
func (s *Store) trim(l *plog) error {
	cut := s.opts.Now().Add(-s.opts.KeepFor)
	drop := len(l.events) - s.opts.Keep
	var keep []record
	seen := 0
	pendingHeld := map[string]int{}
	for i, rec := range l.recs {
		if rec.Held != nil {
			pendingHeld[rec.Key] = i
		} else if rec.Event != nil && rec.Key != "" {
			delete(pendingHeld, rec.Key)
		}
	}
	for i, rec := range l.recs {
		if rec.Event != nil {
			seen++
			if seen <= drop && rec.Event.OccurredAt.Before(cut) {
				continue
			}
		} else if j, ok := pendingHeld[rec.Key]; !ok || j != i {
			continue
		}
		keep = append(keep, rec)
	}
	if len(keep) == len(l.recs) {
		return nil
	}
	var buf bytes.Buffer
	for _, rec := range keep {
		b, _ := json.Marshal(rec)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := writeFileAtomic(l.path, buf.Bytes(), s.opts.Fsync); err != nil {
		return err
	}
	l.fi = nil
	return l.refresh()
}

// Append records evs durably (quire.EventLog).
func (s *Store) Append(ctx context.Context, projectID string, evs ...*quire.Event) error {
	recs := make([]record, len(evs))
	for i, ev := range evs {
		recs[i] = record{Event: ev}
	}
	return s.write(projectID, recs...)
}

// Hold records ev as key's pending trailing event, fulfilling intent
// when set (quire.EventLog).
func (s *Store) Hold(ctx context.Context, projectID, key, intent string, ev *quire.Event) error {
	return s.write(projectID, record{Key: key, Held: ev, Intent: intent})
}

// Release appends key's held event as an event, unless an event under key
// came after it (already released).
func (s *Store) Release(ctx context.Context, projectID, key string) (*quire.Event, error) {
	l, err := s.plog(projectID)
	if err != nil {
		return nil, err
	}
	unlock, err := s.locks.Lock(filepath.Join(filepath.Dir(l.path), "events.lock"))
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	err = l.refresh()
	var held *quire.Event
	for i := len(l.recs) - 1; i >= 0 && err == nil; i-- {
		if rec := l.recs[i]; rec.Key == key {
			held = rec.Held
			break
		}
	}
	l.mu.Unlock()
	unlock()
	if err != nil || held == nil {
		return nil, err
	}
	// Another releaser may slip in between: the worst is a duplicate
	// event, which at-least-once delivery allows.
	ev := *held
	return &ev, s.write(projectID, record{Key: key, Event: &ev})
}

// Held lists keys with a held event never released, per project.
func (s *Store) Held(ctx context.Context) (map[string][]string, error) {
	projects, err := s.Projects(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range projects {
		l, err := s.plog(p)
		if err != nil {
			continue
		}
		l.mu.Lock()
		err = l.refresh()
		last := map[string]bool{}
		for _, rec := range l.recs {
			if rec.Key != "" {
				last[rec.Key] = rec.Held != nil
			}
		}
		l.mu.Unlock()
		if err != nil {
			return nil, err
		}
		for k, held := range last {
			if held {
				out[p] = append(out[p], k)
			}
		}
	}
	return out, nil
}

// Events lists events after the id after, ascending (quire.EventLog).
func (s *Store) Events(ctx context.Context, projectID, after string, limit int) ([]*quire.Event, string, error) {
	l, err := s.plog(projectID)
	if err != nil {
		return nil, "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refresh(); err != nil {
		return nil, "", err
	}
	oldest := ""
	if len(l.events) > 0 {
		oldest = l.events[0].ID
	}
	i := sort.Search(len(l.events), func(i int) bool { return l.events[i].ID > after })
	j := len(l.events)
	if limit > 0 && i+limit < j {
		j = i + limit
	}
	out := make([]*quire.Event, j-i)
	copy(out, l.events[i:j])
	return out, oldest, nil
}

// Projects lists the projects with a directory in the store.
func (s *Store) Projects(ctx context.Context) ([]string, error) {
	ents, err := os.ReadDir(s.opts.Root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && safeName.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// writeFileAtomic replaces path with data: a temporary file renamed into
// place, so a reader sees the old content or the new, never a mix.
func writeFileAtomic(path string, data []byte, fsync bool) error {
	dir := filepath.Dir(path) // it exists: a removed project's stays removed
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if fsync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if fsync {
		syncDir(dir)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

var _ quire.EventLog = (*Store)(nil)

// RemoveProject deletes a deleted project's directory (its log, webhooks
// and intents), unless a file in it changed within idleFor: the project
// may then be new, and not yet seen by the caller. The directory is first
// renamed away, so readers find it whole or not at all.
func (s *Store) RemoveProject(ctx context.Context, projectID string, idleFor time.Duration) error {
	dir, err := s.projectDir(projectID)
	if err != nil {
		return err
	}
	if idleFor > 0 {
		recent := false
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil && s.opts.Now().Sub(fi.ModTime()) < idleFor {
					recent = true
					return filepath.SkipAll
				}
			}
			return nil
		})
		if recent {
			return nil
		}
	}
	unlock, err := s.locks.Lock(filepath.Join(dir, "events.lock"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	trash := filepath.Join(s.opts.Root, ".trash-"+projectID+"-"+uuid.NewString())
	if err := os.Rename(dir, trash); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.logs, projectID)
	s.mu.Unlock()
	return os.RemoveAll(trash)
}
