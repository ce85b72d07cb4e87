package gitstore

import (
	"errors"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// writeObject stores an encodable object unless the repository has it.
func (r *repo) writeObject(o interface {
	Encode(plumbing.EncodedObject) error
}) (plumbing.Hash, error) {
	obj := r.st.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.storeObject(obj)
}

func (r *repo) storeObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	if r.st.Storage.HasEncodedObject(h) == nil {
		return h, r.st.syncExisting(h)
	}
	return r.st.SetEncodedObject(obj)
}

// writeBlob stores content as a blob.
func (r *repo) writeBlob(content []byte) (plumbing.Hash, error) {
	obj := r.st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.storeObject(obj)
}

func (r *repo) readBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := r.st.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

func (r *repo) commit(h plumbing.Hash) (*object.Commit, error) {
	return object.GetCommit(r.st, h)
}

func (r *repo) tree(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	return object.GetTree(r.st, h)
}

// ref resolves a ref to a hash, or ZeroHash when it does not exist.
func (r *repo) ref(name plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := r.st.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return ref.Hash(), nil
}

// casRef moves name from old (ZeroHash: must not exist) to new.
func (r *repo) casRef(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	var oldRef *plumbing.Reference
	if !old.IsZero() {
		oldRef = plumbing.NewHashReference(name, old)
	}
	return r.st.CheckAndSetReference(plumbing.NewHashReference(name, new), oldRef)
}

func signature(by quire.Actor, when time.Time) object.Signature {
	name, email := by.Name, by.Email
	if name == "" {
		name = "quire"
	}
	if email == "" {
		email = "quire@localhost"
	}
	return object.Signature{Name: name, Email: email, When: when}
}

// writeCommit stores a commit of tree with the given parent (may be zero).
func (r *repo) writeCommit(by quire.Actor, when time.Time, tree, parent plumbing.Hash, msg string) (plumbing.Hash, error) {
	sig := signature(by, when)
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	return r.writeObject(c)
}

// treeEdit is one change to a tree: a blob to put at Path, or a delete
// when Blob is zero.
type treeEdit struct {
	Path string
	Blob plumbing.Hash
}

// editTree applies edits to the tree at root and returns the new root. It
// writes only the trees along the edited paths.
func (r *repo) editTree(root plumbing.Hash, edits []treeEdit) (plumbing.Hash, error) {
	t, err := r.tree(root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	entries := make([]object.TreeEntry, len(t.Entries))
	copy(entries, t.Entries)

	sub := map[string][]treeEdit{}
	var order []string
	for _, e := range edits {
		head, rest, nested := strings.Cut(e.Path, "/")
		if nested {
			if _, ok := sub[head]; !ok {
				order = append(order, head)
			}
			sub[head] = append(sub[head], treeEdit{Path: rest, Blob: e.Blob})
			continue
		}
		i := findEntry(entries, head)
		switch {
		case i >= 0 && entries[i].Mode == filemode.Dir:
			if e.Blob.IsZero() {
				return plumbing.ZeroHash, quire.Errorf(quire.ENOTFOUND, "file not found")
			}
			return plumbing.ZeroHash, quire.Errorf(quire.ECONFLICT, "%s is a directory", head)
		case e.Blob.IsZero() && i >= 0:
			entries = append(entries[:i], entries[i+1:]...)
		case e.Blob.IsZero():
			return plumbing.ZeroHash, quire.Errorf(quire.ENOTFOUND, "file not found")
		case i >= 0:
			entries[i] = object.TreeEntry{Name: head, Mode: filemode.Regular, Hash: e.Blob}
		default:
			entries = append(entries, object.TreeEntry{Name: head, Mode: filemode.Regular, Hash: e.Blob})
		}
	}
	for _, name := range order {
		i := findEntry(entries, name)
		var base plumbing.Hash
		if i >= 0 {
			if entries[i].Mode != filemode.Dir {
				return plumbing.ZeroHash, quire.Errorf(quire.ECONFLICT, "%s is a file, not a directory", name)
			}
			base = entries[i].Hash
		}
		h, err := r.editTree(base, sub[name])
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch {
		case h == emptyTree && i >= 0:
			entries = append(entries[:i], entries[i+1:]...)
		case h == emptyTree:
		case i >= 0:
			entries[i].Hash = h
		default:
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
	}
	sortEntries(entries)
	return r.writeObject(&object.Tree{Entries: entries})
}

// emptyTree is the id of the empty tree.
var emptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

func findEntry(entries []object.TreeEntry, name string) int {
	for i := range entries {
		if entries[i].Name == name {
			return i
		}
	}
	return -1
}

// sortEntries orders entries as git does: by name, with a directory
// compared as if its name ended in "/".
func sortEntries(entries []object.TreeEntry) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}

// walkFiles calls fn for every file under the tree at root, in git order.
func (r *repo) walkFiles(root plumbing.Hash, prefix string, fn func(path string, e object.TreeEntry) error) error {
	t, err := r.tree(root)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := prefix + e.Name
		if e.Mode == filemode.Dir {
			if err := r.walkFiles(e.Hash, p+"/", fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(p, e); err != nil {
			return err
		}
	}
	return nil
}

// lookup finds the entry at path in the tree at root.
func (r *repo) lookup(root plumbing.Hash, path string) (object.TreeEntry, bool, error) {
	h := root
	for {
		head, rest, nested := strings.Cut(path, "/")
		t, err := r.tree(h)
		if err != nil {
			return object.TreeEntry{}, false, err
		}
		i := findEntry(t.Entries, head)
		if i < 0 {
			return object.TreeEntry{}, false, nil
		}
		e := t.Entries[i]
		if !nested {
			return e, e.Mode != filemode.Dir, nil
		}
		if e.Mode != filemode.Dir {
			return object.TreeEntry{}, false, nil
		}
		h, path = e.Hash, rest
	}
}

// treeStats is the file count and byte total of a tree.
type treeStats struct {
	files int
	bytes int64
}

// statsCache remembers treeStats by tree id, so checking version limits on
// an upsert does not walk the whole tree each time.
type statsCache struct {
	mu  sync.Mutex
	max int
	m   map[plumbing.Hash]treeStats
}

func newStatsCache(max int) *statsCache {
	return &statsCache{max: max, m: map[plumbing.Hash]treeStats{}}
}

func (c *statsCache) get(h plumbing.Hash) (treeStats, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[h]
	return st, ok
}

func (c *statsCache) put(h plumbing.Hash, st treeStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for k := range c.m { // drop an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[h] = st
}

// stats returns the file count and size of the tree at root.
func (s *Store) treeStats(r *repo, root plumbing.Hash) (treeStats, error) {
	if root.IsZero() || root == emptyTree {
		return treeStats{}, nil
	}
	if st, ok := s.stats.get(root); ok {
		return st, nil
	}
	var st treeStats
	err := r.walkFiles(root, "", func(_ string, e object.TreeEntry) error {
		size, err := r.st.EncodedObjectSize(e.Hash)
		if err != nil {
			return err
		}
		st.files++
		st.bytes += size
		return nil
	})
	if err != nil {
		return st, err
	}
	s.stats.put(root, st)
	return st, nil
}

// checkFileLimits checks one file's content against the limits.
func (s *Store) checkFile(f quire.FileContent) error {
	if int64(len(f.Content)) > s.opts.Limits.MaxFile {
		return quire.Errorf(quire.ETOOLARGE, "file %s is %d bytes; the limit is %d", f.Path, len(f.Content), s.opts.Limits.MaxFile)
	}
	return nil
}

func (s *Store) checkVersionLimits(st treeStats) error {
	l := s.opts.Limits
	if st.files > l.MaxVersionFiles {
		return quire.Errorf(quire.ETOOLARGE, "a version may hold at most %d files", l.MaxVersionFiles)
	}
	if st.bytes > l.MaxVersionBytes {
		return quire.Errorf(quire.ETOOLARGE, "a version may hold at most %d bytes", l.MaxVersionBytes)
	}
	return nil
}
