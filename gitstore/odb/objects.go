package odb

import (
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/quire/quire"
)

// DB is the object database of one bare repository: reading and writing
// blobs, trees and commits through its Storer, with the caches the Storer
// shares with every repository of a store.
type DB struct {
	st    *Storer
	batch *batch // objects written but not yet stored (batch.go); nil: write through
}

// NewDB returns the object database kept by st.
func NewDB(st *Storer) *DB { return &DB{st: st} }

// Path is the repository's directory.
func (r *DB) Path() string { return r.st.dir }

// WriteObject stores an encodable object (a commit, tree or tag quire
// made) unless the repository has it. The object must pass the checks a
// push gets (fsck.go): a bug here must fail the write, not leave an object
// git fsck refuses.
func (r *DB) WriteObject(o interface {
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
	if e := FsckObject(obj.Type(), b, FsckOptions{}); e != nil {
		return quire.Errorf(quire.EINTERNAL, "quire made a %s git fsck refuses: %s", obj.Type(), e)
	}
	return nil
}

// storeObject writes obj as a loose object unless it is there already
// (the storer checks).
func (r *DB) storeObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	if r.batch != nil {
		return r.pend(obj)
	}
	return r.st.SetEncodedObject(obj)
}

// WriteBlob stores content as a blob.
func (r *DB) WriteBlob(content []byte) (plumbing.Hash, error) {
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

// Object reads an object of this repository, from the shared cache when
// it is there. go-git's own read opens the object's file before it looks
// in the cache; quire's hot path (every upsert reads the draft's commit
// and trees) skips that. Objects are content-addressed, so a cached object
// is the object; the callers only reach hashes through this repository's
// refs and trees.
func (r *DB) Object(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := r.pending(h); ok && o.Type() == t {
		return o, nil
	}
	if o, ok := r.st.objects.Get(h); ok && o.Type() == t {
		return o, nil
	}
	return r.st.EncodedObject(t, h)
}

// Size is the size of an object, from the shared cache when it is there.
func (r *DB) Size(h plumbing.Hash) (int64, error) {
	if o, ok := r.pending(h); ok {
		return o.Size(), nil
	}
	if o, ok := r.st.objects.Get(h); ok {
		return o.Size(), nil
	}
	return r.st.EncodedObjectSize(h)
}

// ReadBlob reads the content of blob h.
func (r *DB) ReadBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := r.Object(plumbing.BlobObject, h)
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

// Commit reads and decodes commit h.
func (r *DB) Commit(h plumbing.Hash) (*object.Commit, error) {
	obj, err := r.Object(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	return object.DecodeCommit(r.st, obj)
}

// Tree returns a tree bound to this repository's storage, for go-git's
// tree walks and diffs.
func (r *DB) Tree(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	return object.GetTree(r.st, h)
}

// Entries returns the entries of tree h, which callers must not modify.
// Decoded trees are cached by id: an upsert reads the draft's root tree
// several times, and decoding a tree of 1,000 entries is not free.
func (r *DB) Entries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() || h == EmptyTree {
		return nil, nil
	}
	if e, ok := r.st.trees.get(h); ok {
		return e, nil
	}
	obj, err := r.Object(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	t, err := object.DecodeTree(r.st, obj)
	if err != nil {
		return nil, err
	}
	if _, ok := r.pending(h); ok {
		return t.Entries, nil // cached once stored, not before
	}
	r.st.trees.put(h, t.Entries)
	return t.Entries, nil
}

// TreeCache holds decoded tree entries by tree id, up to a total number of
// entries, dropping the least recently used. golang-lru counts items, not
// their weight: the cache is made large enough never to evict by count,
// and put keeps the entry total beside it and evicts with RemoveOldest
// while over.
type TreeCache struct {
	lru *lru.Cache[plumbing.Hash, []object.TreeEntry]
	max int

	mu sync.Mutex // serializes put; guards n
	n  int        // entries held, plus one per tree
}

// NewTreeCache returns a cache of at most maxEntries tree entries.
func NewTreeCache(maxEntries int) *TreeCache {
	c := &TreeCache{max: maxEntries}
	// The callback runs inside put's Add and RemoveOldest, under c.mu.
	c.lru, _ = lru.NewWithEvict(max(maxEntries, 1), func(_ plumbing.Hash, e []object.TreeEntry) {
		c.n -= len(e) + 1
	})
	return c
}

func (c *TreeCache) get(h plumbing.Hash) ([]object.TreeEntry, bool) {
	return c.lru.Get(h)
}

func (c *TreeCache) put(h plumbing.Hash, entries []object.TreeEntry) {
	if len(entries) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok, _ := c.lru.PeekOrAdd(h, entries); ok {
		return
	}
	c.n += len(entries) + 1
	for c.n > c.max {
		c.lru.RemoveOldest()
	}
}

// WriteCommit stores a commit of tree with the given parent (may be zero).
func (r *DB) WriteCommit(by quire.Actor, when time.Time, tree, parent plumbing.Hash, msg string) (plumbing.Hash, error) {
	sig := Signature(by, when)
	c := &object.Commit{Author: sig, Committer: sig, Message: ObjectMessage(msg), TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	return r.WriteObject(c)
}

// TreeEdit is one change to a tree: a blob to put at Path, or a delete
// when Blob is zero. Mode is the new entry's (filemode.Regular or
// Executable); zero keeps the mode of the file it replaces, regular for
// a new one.
type TreeEdit struct {
	Path string
	Blob plumbing.Hash
	Mode filemode.FileMode
}

// EditTree applies edits to the tree at root and returns the new root. It
// writes only the trees along the edited paths.
func (r *DB) EditTree(root plumbing.Hash, edits []TreeEdit) (plumbing.Hash, error) {
	old, err := r.Entries(root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	entries := make([]object.TreeEntry, len(old), len(old)+len(edits))
	copy(entries, old)

	sub := map[string][]TreeEdit{}
	var order []string
	for _, e := range edits {
		head, rest, nested := strings.Cut(e.Path, "/")
		if nested {
			if _, ok := sub[head]; !ok {
				order = append(order, head)
			}
			sub[head] = append(sub[head], TreeEdit{Path: rest, Blob: e.Blob, Mode: e.Mode})
			continue
		}
		i := FindEntry(entries, head)
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
			mode := e.Mode
			if mode == 0 {
				mode = entries[i].Mode
			}
			entries[i] = object.TreeEntry{Name: head, Mode: mode, Hash: e.Blob}
		default:
			mode := e.Mode
			if mode == 0 {
				mode = filemode.Regular
			}
			entries = append(entries, object.TreeEntry{Name: head, Mode: mode, Hash: e.Blob})
		}
	}
	for _, name := range order {
		i := FindEntry(entries, name)
		var base plumbing.Hash
		if i >= 0 {
			if entries[i].Mode != filemode.Dir {
				return plumbing.ZeroHash, quire.Errorf(quire.ECONFLICT, "%s is a file, not a directory", name)
			}
			base = entries[i].Hash
		}
		h, err := r.EditTree(base, sub[name])
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch {
		case h == EmptyTree && i >= 0:
			entries = append(entries[:i], entries[i+1:]...)
		case h == EmptyTree:
		case i >= 0:
			entries[i].Hash = h
		default:
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
	}
	SortEntries(entries)
	h, err := r.WriteTree(entries)
	if err == nil {
		r.st.trees.put(h, entries) // the next upsert starts from it
	}
	return h, err
}

// WriteTree encodes and stores a tree. It encodes the entries itself:
// go-git's Tree.Encode formats every entry with fmt.Fprintf.
func (r *DB) WriteTree(entries []object.TreeEntry) (plumbing.Hash, error) {
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
	if e := FsckTree(b, FsckOptions{}); e != nil {
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

// EmptyTree is the id of the empty tree.
var EmptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// FindEntry is the index of the entry called name, or -1.
func FindEntry(entries []object.TreeEntry, name string) int {
	for i := range entries {
		if entries[i].Name == name {
			return i
		}
	}
	return -1
}

// SortEntries orders entries as git does: by name, with a directory
// compared as if its name ended in "/".
func SortEntries(entries []object.TreeEntry) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}

// WalkFiles calls fn for every file under the tree at root, in git order.
func (r *DB) WalkFiles(root plumbing.Hash, prefix string, fn func(path string, e object.TreeEntry) error) error {
	entries, err := r.Entries(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := prefix + e.Name
		if e.Mode == filemode.Dir {
			if err := r.WalkFiles(e.Hash, p+"/", fn); err != nil {
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

// Lookup finds the entry at path in the tree at root.
func (r *DB) Lookup(root plumbing.Hash, path string) (object.TreeEntry, bool, error) {
	h := root
	for {
		head, rest, nested := strings.Cut(path, "/")
		entries, err := r.Entries(h)
		if err != nil {
			return object.TreeEntry{}, false, err
		}
		i := FindEntry(entries, head)
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
