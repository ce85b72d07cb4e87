package gitstore

import (
	"container/list"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// writeObject stores an encodable object (a commit, tree or tag quire
// made) unless the repository has it. The object must pass the checks a
// push gets (fsck.go): a bug here must fail the write, not leave an object
// git fsck refuses.
func (r *repo) writeObject(o interface {
	Encode(plumbing.EncodedObject) error
}) (plumbing.Hash, error) {
	obj := r.st.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := fsckWritten(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.storeObject(obj)
}

// fsckWritten checks an object quire encoded before it is stored.
func fsckWritten(obj plumbing.EncodedObject) error {
	rd, err := obj.Reader()
	if err != nil {
		return err
	}
	b, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		return err
	}
	if e := fsckObject(obj.Type(), b, fsckOptions{}); e != nil {
		return quire.Errorf(quire.EINTERNAL, "quire made a %s git fsck refuses: %s", obj.Type(), e)
	}
	return nil
}

// storeObject writes obj as a loose object unless it is there already
// (the storer checks).
func (r *repo) storeObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
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

// object reads an object of this repository, from the shared cache when
// it is there. go-git's own read opens the object's file before it looks
// in the cache; quire's hot path (every upsert reads the draft's commit
// and trees) skips that. Objects are content-addressed, so a cached object
// is the object; the callers only reach hashes through this repository's
// refs and trees.
func (r *repo) object(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := r.st.objects.Get(h); ok && o.Type() == t {
		return o, nil
	}
	return r.st.EncodedObject(t, h)
}

// size is the size of an object, from the shared cache when it is there.
func (r *repo) size(h plumbing.Hash) (int64, error) {
	if o, ok := r.st.objects.Get(h); ok {
		return o.Size(), nil
	}
	return r.st.EncodedObjectSize(h)
}

func (r *repo) readBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := r.object(plumbing.BlobObject, h)
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
	obj, err := r.object(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	return object.DecodeCommit(r.st, obj)
}

// tree returns a tree bound to this repository's storage, for go-git's
// tree walks and diffs.
func (r *repo) tree(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	return object.GetTree(r.st, h)
}

// entries returns the entries of tree h, which callers must not modify.
// Decoded trees are cached by id: an upsert reads the draft's root tree
// several times, and decoding a tree of 1,000 entries is not free.
func (r *repo) entries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() || h == emptyTree {
		return nil, nil
	}
	if e, ok := r.st.trees.get(h); ok {
		return e, nil
	}
	obj, err := r.object(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	t, err := object.DecodeTree(r.st, obj)
	if err != nil {
		return nil, err
	}
	r.st.trees.put(h, t.Entries)
	return t.Entries, nil
}

// treeCache holds decoded tree entries by tree id, up to a total number of
// entries, dropping the least recently used.
type treeCache struct {
	mu    sync.Mutex
	max   int
	n     int
	lru   *list.List
	items map[plumbing.Hash]*list.Element
}

type treeItem struct {
	h       plumbing.Hash
	entries []object.TreeEntry
}

func newTreeCache(maxEntries int) *treeCache {
	return &treeCache{max: maxEntries, lru: list.New(), items: map[plumbing.Hash]*list.Element{}}
}

func (c *treeCache) get(h plumbing.Hash) ([]object.TreeEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[h]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*treeItem).entries, true
}

func (c *treeCache) put(h plumbing.Hash, entries []object.TreeEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[h]; ok || len(entries) > c.max {
		return
	}
	c.items[h] = c.lru.PushFront(&treeItem{h, entries})
	c.n += len(entries) + 1
	for c.n > c.max {
		el := c.lru.Back()
		it := el.Value.(*treeItem)
		c.lru.Remove(el)
		delete(c.items, it.h)
		c.n -= len(it.entries) + 1
	}
}

// ref resolves a ref to a hash, or ZeroHash when it does not exist.
func (r *repo) ref(name plumbing.ReferenceName) (plumbing.Hash, error) {
	if h, ok := r.looseRef(name); ok {
		return h, nil
	}
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

// writeCommit stores a commit of tree with the given parent (may be zero).
func (r *repo) writeCommit(by quire.Actor, when time.Time, tree, parent plumbing.Hash, msg string) (plumbing.Hash, error) {
	sig := signature(by, when)
	c := &object.Commit{Author: sig, Committer: sig, Message: objectMessage(msg), TreeHash: tree}
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
	old, err := r.entries(root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	entries := make([]object.TreeEntry, len(old), len(old)+len(edits))
	copy(entries, old)

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
	h, err := r.writeTree(entries)
	if err == nil {
		r.st.trees.put(h, entries) // the next upsert starts from it
	}
	return h, err
}

// writeTree encodes and stores a tree. It encodes the entries itself:
// go-git's Tree.Encode formats every entry with fmt.Fprintf.
func (r *repo) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	n := 0
	for _, e := range entries {
		n += 7 + len(e.Name) + 1 + len(e.Hash)
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	if e := fsckTree(b, fsckOptions{}); e != nil {
		return plumbing.ZeroHash, quire.Errorf(quire.EINTERNAL, "quire made a tree git fsck refuses: %s", e)
	}
	obj := r.st.NewEncodedObject()
	obj.SetType(plumbing.TreeObject)
	obj.SetSize(int64(len(b)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(b); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.storeObject(obj)
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
	entries, err := r.entries(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
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
		entries, err := r.entries(h)
		if err != nil {
			return object.TreeEntry{}, false, err
		}
		i := findEntry(entries, head)
		if i < 0 {
			return object.TreeEntry{}, false, nil
		}
		e := entries[i]
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
		size, err := r.size(e.Hash)
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

func (s *Store) checkVersionLimits(st treeStats) error {
	return valid.Totals(st.files, st.bytes, s.opts.Limits)
}
