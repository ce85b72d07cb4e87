package gitstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/uuid"
	"github.com/quire/quire"
)

// Payloads live in the prompt's repository on their own ref, apart from
// the versions: payloads/<id>.json on refs/quire/payloads, every change a
// commit by the acting principal, so `git log -p refs/quire/payloads` is
// their history.
const (
	payloadsRef = plumbing.ReferenceName("refs/quire/payloads")
	payloadsDir = "payloads"
)

func payloadPath(id string) string { return payloadsDir + "/" + id + ".json" }

func (r *repo) readPayload(tree plumbing.Hash, id string) (*quire.Payload, error) {
	e, ok, err := r.Lookup(tree, payloadPath(id))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "payload not found")
	}
	b, err := r.ReadBlob(e.Hash)
	if err != nil {
		return nil, err
	}
	p := &quire.Payload{}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("decode %s: %w", payloadPath(id), err)
	}
	return p, nil
}

// CreatePayload stores a new payload; its id and times are set here.
func (s *Store) CreatePayload(ctx context.Context, by quire.Actor, a *quire.Asset, p *quire.Payload) error {
	if p.ID == "" {
		p.ID = uuid.NewString()
	}
	now := s.opts.Now().UTC()
	p.PromptID, p.CreatedAt, p.UpdatedAt = a.ID, now, now
	return s.writePayloads(by, a, "Create payload "+payloadLabel(p), func(r *repo, tree plumbing.Hash) ([]odb.TreeEdit, error) {
		if _, err := r.readPayload(tree, p.ID); err == nil {
			return nil, quire.Errorf(quire.ECONFLICT, "payload %s exists", p.ID)
		}
		return r.payloadEdit(p)
	})
}

// UpdatePayload replaces the name and variables of an existing payload.
func (s *Store) UpdatePayload(ctx context.Context, by quire.Actor, a *quire.Asset, p *quire.Payload) error {
	return s.writePayloads(by, a, "Update payload "+payloadLabel(p), func(r *repo, tree plumbing.Hash) ([]odb.TreeEdit, error) {
		old, err := r.readPayload(tree, p.ID)
		if err != nil {
			return nil, err
		}
		p.PromptID, p.CreatedAt, p.CreatedBy = a.ID, old.CreatedAt, old.CreatedBy
		p.UpdatedAt = s.opts.Now().UTC()
		return r.payloadEdit(p)
	})
}

// DeletePayload removes a payload.
func (s *Store) DeletePayload(ctx context.Context, by quire.Actor, a *quire.Asset, id string) error {
	return s.writePayloads(by, a, "Delete payload "+id, func(r *repo, tree plumbing.Hash) ([]odb.TreeEdit, error) {
		if _, err := r.readPayload(tree, id); err != nil {
			return nil, err
		}
		return []odb.TreeEdit{{Path: payloadPath(id)}}, nil
	})
}

func payloadLabel(p *quire.Payload) string {
	if p.Name != "" {
		return fmt.Sprintf("%s (%s)", p.ID, strings.ReplaceAll(p.Name, "\n", " "))
	}
	return p.ID
}

func (r *repo) payloadEdit(p *quire.Payload) ([]odb.TreeEdit, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	h, err := r.WriteBlob(append(b, '\n'))
	if err != nil {
		return nil, err
	}
	return []odb.TreeEdit{{Path: payloadPath(p.ID), Blob: h}}, nil
}

// writePayloads commits the edits change returns to the payloads ref
// (editRef). Payloads are not version content: no change hook runs.
func (s *Store) writePayloads(by quire.Actor, a *quire.Asset, msg string, change func(r *repo, tree plumbing.Hash) ([]odb.TreeEdit, error)) error {
	w, err := s.begin(a)
	if err != nil {
		return err
	}
	defer w.done()
	w.hooks = false
	tip, err := w.r.ref(payloadsRef)
	if err != nil {
		return err
	}
	_, err = w.editRef(by, payloadsRef, tip, payloadsConflict, func(tree plumbing.Hash) (plumbing.Hash, string, error) {
		edits, err := change(w.r, tree)
		if err != nil {
			return plumbing.ZeroHash, "", err
		}
		newTree, err := w.r.EditTree(tree, edits)
		return newTree, msg, err
	})
	return err
}

func payloadsConflict() error {
	return quire.Errorf(quire.ECONFLICT, "payloads changed concurrently; retry")
}

// payloads opens a's repository and finds its payloads tree (ZeroHash
// when it has none).
func (s *Store) payloads(a *quire.Asset) (*repo, plumbing.Hash, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	_, tree, err := r.refTree(payloadsRef)
	return r, tree, err
}

// Payload returns one payload of a prompt.
func (s *Store) Payload(ctx context.Context, a *quire.Asset, id string) (*quire.Payload, error) {
	r, tree, err := s.payloads(a)
	if err != nil {
		return nil, err
	}
	if tree.IsZero() {
		return nil, quire.Errorf(quire.ENOTFOUND, "payload not found")
	}
	return r.readPayload(tree, id)
}

// Payloads lists the payloads of a prompt, oldest first.
func (s *Store) Payloads(ctx context.Context, a *quire.Asset) ([]*quire.Payload, error) {
	r, tree, err := s.payloads(a)
	if err != nil {
		return nil, err
	}
	out := []*quire.Payload{}
	if tree.IsZero() {
		return out, nil
	}
	dir, ok, err := r.lookupDir(tree, payloadsDir)
	if err != nil || !ok {
		return out, err
	}
	err = r.WalkFiles(dir, "", func(name string, e object.TreeEntry) error {
		b, err := r.ReadBlob(e.Hash)
		if err != nil {
			return err
		}
		p := &quire.Payload{}
		if err := json.Unmarshal(b, p); err != nil {
			return fmt.Errorf("decode %s/%s: %w", payloadsDir, name, err)
		}
		out = append(out, p)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

// lookupDir finds the subtree named name at the top of the tree at root.
func (r *repo) lookupDir(root plumbing.Hash, name string) (plumbing.Hash, bool, error) {
	t, err := r.Tree(root)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	i := odb.FindEntry(t.Entries, name)
	if i < 0 || t.Entries[i].Mode.IsFile() {
		return plumbing.ZeroHash, false, nil
	}
	return t.Entries[i].Hash, true, nil
}

var _ quire.PayloadStore = (*Store)(nil)
