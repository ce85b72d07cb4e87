package eventlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/uuid"
	"github.com/quire/quire"
)

// Intents close the window between a write and its event: app records an
// intent (the event to be, and the state the write changes as read
// before it) in <project>/intents.jsonl before the write, and the event
// that follows names it (record.Intent). An intent neither fulfilled by
// an event nor voided, whose process is gone, is an orphan: the write may
// or may not have landed, and app looks at the repository to tell.
//
// intents.jsonl has its own lock, so an intent never waits for the event
// log's. It is compacted (fulfilled and voided intents dropped) as it
// grows, long before the events that fulfil them can be trimmed.

// intentLine is one line of intents.jsonl: an intent, or the void of one.
type intentLine struct {
	Intent *quire.Intent `json:"intent,omitempty"`
	Void   string        `json:"void,omitempty"`
}

// compactIntents is how large intents.jsonl may grow before it is
// compacted: a few hundred intents.
const compactIntents = 256 << 10

func (s *Store) intentsPath(projectID string) (string, error) {
	dir, err := s.projectDir(projectID)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "intents.jsonl"), nil
}

// Intend records in durably, giving it its id and this process as owner
// (quire.EventLog).
func (s *Store) Intend(ctx context.Context, projectID string, in *quire.Intent) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	in.ID, in.Owner = id.String(), s.owner
	return s.appendIntents(projectID, intentLine{Intent: in})
}

// Void records that intent id's write did not land (quire.EventLog).
func (s *Store) Void(ctx context.Context, projectID, id string) error {
	return s.appendIntents(projectID, intentLine{Void: id})
}

// Fulfil appends evs as the events of intent id (quire.EventLog).
func (s *Store) Fulfil(ctx context.Context, projectID, id string, evs ...*quire.Event) error {
	recs := make([]record, len(evs))
	for i, ev := range evs {
		recs[i] = record{Event: ev, Intent: id}
	}
	return s.write(projectID, recs...)
}

func (s *Store) appendIntents(projectID string, lines ...intentLine) error {
	p, err := s.intentsPath(projectID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	unlock, err := s.locks.Lock(filepath.Join(filepath.Dir(p), "intents.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	var buf bytes.Buffer
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	// A line a killed writer cut short was never acted on: drop it.
	end, err := completeEnd(f, fi.Size())
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(buf.Bytes(), end); err != nil {
		return err
	}
	if err := f.Truncate(end + int64(buf.Len())); err != nil {
		return err
	}
	if s.opts.Fsync {
		if err := f.Sync(); err != nil {
			return err
		}
		if end == 0 {
			syncDir(filepath.Dir(p))
		}
	}
	if end+int64(buf.Len()) > compactIntents {
		return s.compactIntents(projectID, p)
	}
	return nil
}

// completeEnd is where the last complete line of f (size bytes) ends: its
// last byte is a newline but after a crash, so only then is more read.
func completeEnd(f *os.File, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return size, nil
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return 0, err
	}
	return int64(bytes.LastIndexByte(b, '\n') + 1), nil
}

// compactIntents rewrites the intents file without what is settled; the
// caller holds its lock.
func (s *Store) compactIntents(projectID, p string) error {
	pending, err := s.pendingIntents(projectID, p)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, in := range pending {
		b, _ := json.Marshal(intentLine{Intent: in})
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return writeFileAtomic(p, buf.Bytes(), s.opts.Fsync)
}

// pendingIntents reads the intents of the project neither voided nor
// fulfilled by a record of its event log.
func (s *Store) pendingIntents(projectID, p string) ([]*quire.Intent, error) {
	f, err := openExisting(p)
	if f == nil {
		return nil, err
	}
	defer f.Close()
	var all []*quire.Intent
	void := map[string]bool{}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // the end, or a last line cut short
		}
		var l intentLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		if l.Intent != nil {
			all = append(all, l.Intent)
		} else if l.Void != "" {
			void[l.Void] = true
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	lg, err := s.plog(projectID)
	if err != nil {
		return nil, err
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if err := lg.refresh(); err != nil {
		return nil, err
	}
	var out []*quire.Intent
	for _, in := range all {
		if !void[in.ID] && !lg.fulfilled[in.ID] {
			out = append(out, in)
		}
	}
	return out, nil
}

// Orphans lists, per project, the intents neither fulfilled nor voided
// whose process has ended (quire.EventLog).
func (s *Store) Orphans(ctx context.Context) (_ map[string][]*quire.Intent, _ func(), err error) {
	unlock, err := s.locks.Lock(filepath.Join(s.opts.Root, "recover.lock"))
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	projects, err := s.Projects(ctx)
	if err != nil {
		return nil, nil, err
	}
	alive := map[string]bool{s.owner: true}
	out := map[string][]*quire.Intent{}
	for _, project := range projects {
		p, err := s.intentsPath(project)
		if err != nil {
			continue
		}
		pending, err := s.pendingIntents(project, p)
		if err != nil {
			return nil, nil, fmt.Errorf("intents of %s: %w", project, err)
		}
		for _, in := range pending {
			live, seen := alive[in.Owner]
			if !seen {
				live = s.ownerAlive(in.Owner)
				alive[in.Owner] = live
			}
			if !live {
				out[project] = append(out[project], in)
			}
		}
		sort.Slice(out[project], func(i, j int) bool { return out[project][i].ID < out[project][j].ID })
	}
	s.sweepOwners(alive)
	return out, unlock, nil
}

// sweepOwners removes the lock files of owners that died with no intent
// pending (those in seen are settled by Forget). A file younger than a
// minute is left: its process may be between creating and locking it.
func (s *Store) sweepOwners(seen map[string]bool) {
	ents, _ := os.ReadDir(filepath.Join(s.opts.Root, ".owners"))
	for _, e := range ents {
		owner, ok := strings.CutSuffix(e.Name(), ".lock")
		if _, pending := seen[owner]; !ok || pending {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			s.Forget(owner)
		}
	}
}

// Every Store is an owner of intents, alive while it holds the flock of
// <root>/.owners/<owner>.lock (a name no project has): the kernel drops it when the process dies,
// however it dies.

func (s *Store) ownerPath(owner string) string {
	return filepath.Join(s.opts.Root, ".owners", owner+".lock")
}

// takeOwnership makes s an owner, holding its lock until Close.
func (s *Store) takeOwnership() error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	s.owner = id.String()
	p := s.ownerPath(s.owner)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	fl := flock.New(p)
	ok, err := fl.TryLock()
	if err != nil || !ok {
		return fmt.Errorf("intent owner lock %s: %v", p, err)
	}
	s.ownerLock = fl
	return nil
}

// ownerAlive reports whether the process that owns intents as owner still
// runs: its lock is held. (flock locks belong to an open file, so another
// Store of this very process counts as alive too.)
func (s *Store) ownerAlive(owner string) bool {
	if !safeName.MatchString(owner) {
		return false
	}
	fl := flock.New(s.ownerPath(owner))
	ok, err := fl.TryLock()
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	if ok {
		fl.Unlock()
		return false
	}
	return true
}

// Forget removes the lock file of an owner found dead, once its orphans
// are settled.
func (s *Store) Forget(owner string) {
	if owner == s.owner || !safeName.MatchString(owner) {
		return
	}
	p := s.ownerPath(owner)
	fl := flock.New(p)
	if ok, err := fl.TryLock(); err == nil && ok {
		os.Remove(p)
		fl.Unlock()
	}
}

// Close releases the store's owner lock: its pending intents become
// orphans for another process to settle.
func (s *Store) Close() error {
	if s.ownerLock != nil {
		os.Remove(s.ownerPath(s.owner))
		return s.ownerLock.Unlock()
	}
	return nil
}
