package eventlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/quire/quire"
)

// A webhook is three files under <project>/webhooks/: <id>.json (its
// record, sealed secrets included), <id>.state.json (the delivery state)
// and <id>.deliveries.jsonl (one line per attempt), plus <id>.lock.

func (s *Store) hookPath(projectID, id, suffix string) (string, error) {
	dir, err := s.projectDir(projectID)
	if err != nil {
		return "", err
	}
	if !safeName.MatchString(id) {
		return "", quire.Errorf(quire.ENOTFOUND, "webhook not found")
	}
	return filepath.Join(dir, "webhooks", id+suffix), nil
}

// lockHook takes the webhook's lock. Only create makes the directory: a
// worker finishing an attempt must not bring back a deleted project's.
func (s *Store) lockHook(projectID, id string, create bool) (func(), error) {
	p, err := s.hookPath(projectID, id, ".lock")
	if err != nil {
		return nil, err
	}
	if create {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(filepath.Dir(p)); errors.Is(err, os.ErrNotExist) {
		return nil, quire.Errorf(quire.ENOTFOUND, "webhook not found")
	}
	return s.locks.Lock(p)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (s *Store) writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, b, s.opts.Fsync)
}

// CreateWebhook stores a new webhook, its delivery starting after the
// project's newest event.
func (s *Store) CreateWebhook(ctx context.Context, w *quire.Webhook) error {
	unlock, err := s.lockHook(w.ProjectID, w.ID, true)
	if err != nil {
		return err
	}
	defer unlock()
	p, _ := s.hookPath(w.ProjectID, w.ID, ".json")
	if _, err := os.Stat(p); err == nil {
		return quire.Errorf(quire.ECONFLICT, "webhook %s exists", w.ID)
	}
	last, err := s.lastEvent(w.ProjectID)
	if err != nil {
		return err
	}
	sp, _ := s.hookPath(w.ProjectID, w.ID, ".state.json")
	if err := s.writeJSON(sp, &quire.DeliveryState{Cursor: last}); err != nil {
		return err
	}
	return s.writeJSON(p, w)
}

// lastEvent is the id of the project's newest event, "" for none.
func (s *Store) lastEvent(projectID string) (string, error) {
	l, err := s.plog(projectID)
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refresh(); err != nil {
		return "", err
	}
	return l.lastID(), nil
}

// Webhook reads one webhook.
func (s *Store) Webhook(ctx context.Context, projectID, id string) (*quire.Webhook, error) {
	p, err := s.hookPath(projectID, id, ".json")
	if err != nil {
		return nil, err
	}
	var w quire.Webhook
	if err := readJSON(p, &w); errors.Is(err, os.ErrNotExist) {
		return nil, quire.Errorf(quire.ENOTFOUND, "webhook not found")
	} else if err != nil {
		return nil, err
	}
	return &w, nil
}

// Webhooks lists the project's webhooks, oldest first.
func (s *Store) Webhooks(ctx context.Context, projectID string) ([]*quire.Webhook, error) {
	dir, err := s.projectDir(projectID)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(filepath.Join(dir, "webhooks"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*quire.Webhook
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasSuffix(id, ".state") {
			continue
		}
		w, err := s.Webhook(ctx, projectID, id)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// UpdateWebhook applies fn to the webhook under its lock.
func (s *Store) UpdateWebhook(ctx context.Context, projectID, id string, fn func(*quire.Webhook) error) (*quire.Webhook, error) {
	unlock, err := s.lockHook(projectID, id, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	w, err := s.Webhook(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	if err := fn(w); err != nil {
		return nil, err
	}
	p, _ := s.hookPath(projectID, id, ".json")
	return w, s.writeJSON(p, w)
}

// DeleteWebhook removes the webhook, its state and its attempt log.
func (s *Store) DeleteWebhook(ctx context.Context, projectID, id string) error {
	unlock, err := s.lockHook(projectID, id, false)
	if err != nil {
		return err
	}
	defer unlock()
	p, _ := s.hookPath(projectID, id, ".json")
	if err := os.Remove(p); errors.Is(err, os.ErrNotExist) {
		return quire.Errorf(quire.ENOTFOUND, "webhook not found")
	} else if err != nil {
		return err
	}
	if s.opts.Fsync {
		syncDir(filepath.Dir(p))
	}
	for _, suf := range []string{".state.json", ".deliveries.jsonl"} {
		q, _ := s.hookPath(projectID, id, suf)
		os.Remove(q)
	}
	return nil
}

// UpdateDeliveryState applies fn to the webhook's delivery state under
// its lock and stores the result durably.
func (s *Store) UpdateDeliveryState(ctx context.Context, projectID, id string, fn func(*quire.DeliveryState) error) error {
	unlock, err := s.lockHook(projectID, id, false)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := s.Webhook(ctx, projectID, id); err != nil {
		return err
	}
	p, _ := s.hookPath(projectID, id, ".state.json")
	var st quire.DeliveryState
	if err := readJSON(p, &st); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := fn(&st); err != nil {
		return err
	}
	return s.writeJSON(p, &st)
}

// RecordDeliveries appends attempts to the webhook's attempt log, and
// drops attempts older than 30 days once the log has grown.
func (s *Store) RecordDeliveries(ctx context.Context, projectID string, ds ...*quire.Delivery) error {
	byHook := map[string][]*quire.Delivery{}
	for _, d := range ds {
		byHook[d.WebhookID] = append(byHook[d.WebhookID], d)
	}
	for id, ds := range byHook {
		if err := s.appendDeliveries(projectID, id, ds); err != nil {
			return err
		}
	}
	return nil
}

const deliveryRetention = 30 * 24 * time.Hour

func (s *Store) appendDeliveries(projectID, id string, ds []*quire.Delivery) error {
	unlock, err := s.lockHook(projectID, id, false)
	if err != nil {
		return err
	}
	defer unlock()
	p, _ := s.hookPath(projectID, id, ".deliveries.jsonl")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, d := range ds {
		b, _ := json.Marshal(d)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	_, err = f.Write(buf.Bytes())
	if err == nil && s.opts.Fsync {
		err = f.Sync()
	}
	fi, serr := f.Stat()
	f.Close()
	if err != nil {
		return err
	}
	if serr == nil && fi.Size() > 4<<20 {
		s.trimDeliveries(p)
	}
	return nil
}

// trimDeliveries drops attempts older than deliveryRetention; the caller
// holds the webhook's lock.
func (s *Store) trimDeliveries(p string) {
	all, err := readDeliveries(p)
	if err != nil {
		return
	}
	cut := s.opts.Now().Add(-deliveryRetention)
	var buf bytes.Buffer
	for _, d := range all {
		if d.DeliveredAt.After(cut) {
			b, _ := json.Marshal(d)
			buf.Write(b)
			buf.WriteByte('\n')
		}
	}
	writeFileAtomic(p, buf.Bytes(), s.opts.Fsync)
}

// openExisting opens p to read; a file not there yet is nil and no
// error, read as empty.
func openExisting(p string) (*os.File, error) {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

func readDeliveries(p string) ([]*quire.Delivery, error) {
	f, err := openExisting(p)
	if f == nil {
		return nil, err
	}
	defer f.Close()
	var out []*quire.Delivery
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var d quire.Delivery
		if json.Unmarshal(sc.Bytes(), &d) == nil {
			out = append(out, &d)
		}
	}
	return out, sc.Err()
}

// Deliveries lists a page of the webhook's attempts, newest first.
func (s *Store) Deliveries(ctx context.Context, projectID, webhookID, before string, limit int) ([]*quire.Delivery, string, error) {
	p, err := s.hookPath(projectID, webhookID, ".deliveries.jsonl")
	if err != nil {
		return nil, "", err
	}
	all, err := readDeliveries(p)
	if err != nil {
		return nil, "", err
	}
	cut := s.opts.Now().Add(-deliveryRetention)
	var out []*quire.Delivery
	for i := len(all) - 1; i >= 0; i-- {
		d := all[i]
		if before != "" && d.ID >= before || d.DeliveredAt.Before(cut) {
			continue
		}
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		out = append(out, d)
	}
	return out, "", nil
}

// Lead takes the delivery role for this process, if no process has it.
func (s *Store) Lead() (func(), bool) {
	return s.locks.TryLock(filepath.Join(s.opts.Root, "deliver.lock"))
}

var _ quire.WebhookStore = (*Store)(nil)
