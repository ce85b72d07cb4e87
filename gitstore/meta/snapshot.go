package meta

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
)

// The metadata index is rebuilt from the system repository when a process
// starts. Reading every record blob costs a file open and an inflate per
// user, key, project and asset, seconds at ten thousand assets; so each
// process saves the decoded index beside the repository now and then, and
// the next start loads it and applies the tree diff from the commit it
// was saved at, like any other catch-up. The file is only a cache of what
// git holds: a missing, unreadable or outdated one costs time, never
// correctness, because the diff from its tree brings it up to date and a
// bad one is ignored for a full read.

// metaSnapFile is the saved index, inside the system repository.
const metaSnapFile = "quire-meta-index.gob"

// metaSnapFormat changes whenever metaSnap or the types in it change
// incompatibly; a file of another format is ignored.
const metaSnapFormat = 2

// metaSnapEvery is how many records may change between saves: a start
// reads at most about this many from the system repository. A full read
// counts every record, so small stores never save.
const metaSnapEvery = 1024

// leftoverAge is how old a snapshot temporary must be before a save
// removes it: younger ones may be another process's save in progress
// (gitstore sweeps its own leftovers after the same age).
const leftoverAge = 10 * time.Minute

// metaSnap is the saved form of the index at one commit.
type metaSnap struct {
	Format   int
	Tip      plumbing.Hash
	Tree     plumbing.Hash
	Users    []*quire.User
	Keys     []*quire.APIKey
	Projects []*quire.Project
	Assets   []*quire.Asset
	Clients  []*quire.OAuthClient
	Grants   []*quire.OAuthGrant
}

func (m *index) snapPath() string { return filepath.Join(m.r.dir, metaSnapFile) }

// loadSnap fills the empty index from the saved file and reports whether
// it did. The snapshot's tree must exist in the repository, so the diff
// from it can be computed. Callers hold m.mu.
func (m *index) loadSnap() bool {
	b, err := os.ReadFile(m.snapPath())
	if err != nil {
		return false
	}
	var snap metaSnap
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&snap); err != nil || snap.Format != metaSnapFormat || snap.Tip.IsZero() {
		return false
	}
	if c, err := m.r.Commit(snap.Tip); err != nil || c.TreeHash != snap.Tree {
		return false
	}
	if _, err := m.r.Tree(snap.Tree); err != nil {
		return false
	}
	for _, u := range snap.Users {
		m.users[u.ID] = u
		m.emails[strings.ToLower(u.Email)] = u.ID
	}
	for _, k := range snap.Keys {
		m.keys[k.ID] = k
	}
	for _, p := range snap.Projects {
		if p.Members == nil {
			p.Members = []quire.Member{}
		}
		m.projects[p.ID] = p
		m.pslugs[p.Slug] = p.ID
	}
	for _, a := range snap.Assets {
		m.addAsset(a)
	}
	for _, c := range snap.Clients {
		m.oauth.clients[c.ID] = c
	}
	for _, g := range snap.Grants {
		m.oauth.addGrant(g)
	}
	m.tip, m.tree, m.snapTree = snap.Tip, snap.Tree, snap.Tree
	return true
}

// saveSnap writes the index to the snapshot file, best effort: a failure
// (a read-only data root, a full disk) only makes the next start slower.
// Callers hold m.mu (for reading at least).
func (m *index) saveSnap() {
	snap := metaSnap{Format: metaSnapFormat, Tip: m.tip, Tree: m.tree}
	for _, u := range m.users {
		snap.Users = append(snap.Users, u)
	}
	for _, k := range m.keys {
		snap.Keys = append(snap.Keys, k)
	}
	for _, p := range m.projects {
		snap.Projects = append(snap.Projects, p)
	}
	for _, a := range m.assets {
		snap.Assets = append(snap.Assets, a)
	}
	for _, c := range m.oauth.clients {
		snap.Clients = append(snap.Clients, c)
	}
	for _, g := range m.oauth.grants {
		snap.Grants = append(snap.Grants, g)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&snap); err != nil {
		return
	}
	// Temporaries a killed process left behind.
	if tmps, err := filepath.Glob(m.snapPath() + ".*.tmp"); err == nil {
		for _, p := range tmps {
			if info, err := os.Stat(p); err == nil && time.Since(info.ModTime()) > leftoverAge {
				os.Remove(p)
			}
		}
	}
	if err := writeFileAtomic(m.snapPath(), buf.Bytes()); err != nil {
		return
	}
	m.snapTree, m.snapChanges = m.tree, 0
}

// noteChanges counts records changed since the last save and saves once
// there are enough. Callers hold m.mu for writing.
func (m *index) noteChanges(n int) {
	m.snapChanges += n
	if m.snapChanges >= m.snapEvery {
		m.saveSnap()
	}
}

// writeFileAtomic replaces path with b through a temporary file and a
// rename, so a reader sees the old file or the new one, never a mix.
func writeFileAtomic(path string, b []byte) error {
	tmp := fmt.Sprintf("%s.%d-%d.tmp", path, os.Getpid(), time.Now().UnixNano())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
