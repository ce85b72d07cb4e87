package gitstore

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// Labels are named pointers to published versions besides live. Two
// things record them in the asset's repository:
//
//   - refs/meta/labels, one commit per move authored by the actor, whose
//     tree holds labels/<name>.json (quire.Label) for every current label:
//     the record, and with `git log -p refs/meta/labels` the history;
//   - refs/labels/<name> at the labeled version's commit, so that
//     `git fetch origin 'refs/labels/*:refs/labels/*'` gives checkouts.
//
// A move commits the record first, then moves the label refs to match
// it, under the write lock: a crash between the two leaves the record
// ahead, and the next label write brings every label ref in line.
const (
	labelLogRef  = plumbing.ReferenceName("refs/meta/labels")
	labelsPrefix = "refs/labels/"
	labelsDir    = "labels"
)

// LabelRef is the ref of label name.
func LabelRef(name string) plumbing.ReferenceName {
	return plumbing.ReferenceName(labelsPrefix + name)
}

func labelPath(name string) string { return labelsDir + "/" + name + ".json" }

// labelsAt reads every label recorded in tree, by name.
func (r *repo) labelsAt(tree plumbing.Hash) ([]quire.Label, error) {
	out := []quire.Label{}
	if tree.IsZero() {
		return out, nil
	}
	var ls []*quire.Label
	if err := readDir(r, tree, labelsDir, func() *quire.Label { return &quire.Label{} }, &ls); err != nil {
		return nil, err
	}
	for _, l := range ls {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// SetLabel points label name at published version n.
func (s *Store) SetLabel(ctx context.Context, by quire.Actor, a *quire.Asset, name string, n int, override string) (_ *quire.Label, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "SetLabel")(&err)
	w, v, err := s.beginVersion(a, n)
	if err != nil {
		return nil, err
	}
	defer w.done()
	if v.state != quire.StatePublished {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a published version can be labeled", n, v.state)
	}
	l := &quire.Label{Name: name, Version: n, Commit: v.commit.String(), MovedAt: s.opts.Now().UTC(), MovedBy: by.Email}
	err = s.writeLabels(&w, by, func(tree plumbing.Hash) ([]odb.TreeEdit, string, error) {
		var old quire.Label
		found, err := w.r.readJSON(tree, labelPath(name), &old)
		if err != nil {
			return nil, "", err
		}
		if found && old.Version == n {
			return nil, "", nil // already there: nothing to record
		}
		e, err := w.r.jsonEdit(labelPath(name), l)
		msg := fmt.Sprintf("Move label %s to version %d", name, n)
		if found {
			msg += fmt.Sprintf(" from version %d", old.Version)
		}
		return []odb.TreeEdit{e}, msg + overrideTrailer(override), err
	})
	if err != nil {
		return nil, err
	}
	_, tree, err := w.r.refTree(labelLogRef)
	if err != nil {
		return nil, err
	}
	if _, err := w.r.readJSON(tree, labelPath(name), l); err != nil {
		return nil, err
	}
	return l, nil
}

// DeleteLabel removes label name.
func (s *Store) DeleteLabel(ctx context.Context, by quire.Actor, a *quire.Asset, name, override string) (err error) {
	defer s.observe(ctx, quire.GitOpCommit, "DeleteLabel")(&err)
	w, err := s.begin(a)
	if err != nil {
		return err
	}
	defer w.done()
	return s.writeLabels(&w, by, func(tree plumbing.Hash) ([]odb.TreeEdit, string, error) {
		var old quire.Label
		found, err := w.r.readJSON(tree, labelPath(name), &old)
		if err != nil {
			return nil, "", err
		}
		if !found {
			return nil, "", quire.Errorf(quire.ENOTFOUND, "label %s not found", name)
		}
		return []odb.TreeEdit{{Path: labelPath(name)}}, fmt.Sprintf("Delete label %s (was version %d)", name, old.Version) + overrideTrailer(override), nil
	})
}

// writeLabels commits the edits change returns to the label log, then
// moves the label refs to match the log. Moving a label changes what
// reads by label answer, so the change hooks run.
func (s *Store) writeLabels(w *write, by quire.Actor, change func(tree plumbing.Hash) ([]odb.TreeEdit, string, error)) error {
	tip, err := w.r.ref(labelLogRef)
	if err != nil {
		return err
	}
	_, err = w.editRef(by, labelLogRef, tip, labelsConflict, func(tree plumbing.Hash) (plumbing.Hash, string, error) {
		edits, msg, err := change(tree)
		if err != nil || len(edits) == 0 {
			return plumbing.ZeroHash, "", err
		}
		newTree, err := w.r.EditTree(tree, edits)
		return newTree, msg, err
	})
	if err != nil {
		return err
	}
	return w.syncLabelRefs()
}

// syncLabelRefs makes refs/labels/* say what the label log says.
func (w *write) syncLabelRefs() error {
	_, tree, err := w.r.refTree(labelLogRef)
	if err != nil {
		return err
	}
	labels, err := w.r.labelsAt(tree)
	if err != nil {
		return err
	}
	refs, _, err := listRefs(w.r, refMatcher{labelsPrefix})
	if err != nil {
		return err
	}
	have := map[string]plumbing.Hash{}
	for _, ref := range refs {
		have[strings.TrimPrefix(ref.Name, labelsPrefix)] = ref.Hash
	}
	for _, l := range labels {
		want, ok := odb.ParseHash(l.Commit)
		if !ok {
			return fmt.Errorf("label %s: bad commit %q", l.Name, l.Commit)
		}
		if cur := have[l.Name]; cur != want {
			if err := w.cas(LabelRef(l.Name), cur, want); err != nil {
				return err
			}
		}
		delete(have, l.Name)
	}
	for name := range have {
		if err := w.remove(LabelRef(name)); err != nil {
			return err
		}
	}
	return nil
}

// overrideTrailer is how a label move's commit message keeps an owner's
// override reason; overrideOf reads it back for the history.
func overrideTrailer(reason string) string {
	if reason == "" {
		return ""
	}
	return "\n\nOverride: " + oneLine(reason)
}

func overrideOf(msg string) string {
	i := strings.LastIndex(msg, "\n\nOverride: ")
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(msg[i+len("\n\nOverride: "):])
}

func labelsConflict() error {
	return quire.Errorf(quire.ECONFLICT, "labels changed concurrently; retry")
}

// Labels lists a's labels by name.
func (s *Store) Labels(ctx context.Context, a *quire.Asset) (_ []quire.Label, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Labels")(&err)
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	_, tree, err := r.refTree(labelLogRef)
	if err != nil {
		return nil, err
	}
	return r.labelsAt(tree)
}

// LabelHistory lists every move of label name, newest first: the commits
// of the label log that changed labels/<name>.json.
func (s *Store) LabelHistory(ctx context.Context, a *quire.Asset, name string) (_ []quire.LabelMove, err error) {
	defer s.observe(ctx, quire.GitOpRead, "LabelHistory")(&err)
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	tip, err := r.ref(labelLogRef)
	if err != nil {
		return nil, err
	}
	out := []quire.LabelMove{}
	type at struct {
		blob  plumbing.Hash
		label *quire.Label
	}
	read := func(tree plumbing.Hash) (at, error) {
		e, ok, err := r.Lookup(tree, labelPath(name))
		if err != nil || !ok {
			return at{}, err
		}
		l := &quire.Label{}
		if _, err := r.readJSON(tree, labelPath(name), l); err != nil {
			return at{}, err
		}
		return at{e.Hash, l}, nil
	}
	for h := tip; !h.IsZero(); {
		c, err := r.Commit(h)
		if err != nil {
			return nil, err
		}
		cur, err := read(c.TreeHash)
		if err != nil {
			return nil, err
		}
		var prev at
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
			pc, err := r.Commit(h)
			if err != nil {
				return nil, err
			}
			if prev, err = read(pc.TreeHash); err != nil {
				return nil, err
			}
		}
		if cur.blob == prev.blob {
			continue
		}
		m := quire.LabelMove{Name: name, MovedAt: c.Author.When.UTC(), MovedBy: c.Author.Email, Action: "set", Override: overrideOf(c.Message)}
		if cur.label != nil {
			m.Version, m.Commit = cur.label.Version, cur.label.Commit
		} else {
			m.Action = "delete"
		}
		if prev.label != nil {
			m.FromVersion = prev.label.Version
		}
		out = append(out, m)
	}
	return out, nil
}

// LabelsCommit returns the tip of a's label log ("" before any label): one
// ref read, which the prompt cache checks every read by label against,
// as it checks live reads against LiveCommit. Any label move changes it.
func (s *Store) LabelsCommit(ctx context.Context, a *quire.Asset) (string, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return "", err
	}
	h, err := r.recentRef(labelLogRef)
	if err != nil || h.IsZero() {
		return "", err
	}
	return h.String(), nil
}

// LabelPromptAt reads the version label name names in the label log at
// commit at (LabelsCommit), with its content; a label not recorded there
// is ENOTFOUND.
func (s *Store) LabelPromptAt(ctx context.Context, a *quire.Asset, name, at string) (_ *quire.PromptVersion, err error) {
	defer s.observe(ctx, quire.GitOpRead, "LabelPrompt")(&err)
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	l := &quire.Label{}
	found := false
	if h, ok := odb.ParseHash(at); ok {
		c, err := r.Commit(h)
		if err != nil {
			return nil, err
		}
		if found, err = r.readJSON(c.TreeHash, labelPath(name), l); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, quire.Errorf(quire.ENOTFOUND, "label %s not found", name)
	}
	v, err := s.versionRecord(r, a, l.Version)
	if err != nil {
		return nil, err
	}
	return s.promptVersion(ctx, a, v)
}

// LabelPrompt is LabelPromptAt at the label log's tip.
func (s *Store) LabelPrompt(ctx context.Context, a *quire.Asset, name string) (*quire.PromptVersion, error) {
	at, err := s.LabelsCommit(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.LabelPromptAt(ctx, a, name, at)
}

var _ quire.LabelStore = (*Store)(nil)
