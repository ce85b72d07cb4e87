package gitproto

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// Parsing of the few fields walks need.

// parseCommit returns a commit's tree, parents and committer time.
func parseCommit(b []byte) (*commitInfo, error) {
	c := &commitInfo{}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl <= 0 {
			break // end of headers (or malformed)
		}
		line := b[:nl]
		b = b[nl+1:]
		switch {
		case bytes.HasPrefix(line, []byte("tree ")):
			h, ok := parseHash(string(line[5:]))
			if !ok {
				return nil, errors.New("bad tree line")
			}
			c.tree = h
		case bytes.HasPrefix(line, []byte("parent ")):
			h, ok := parseHash(string(line[7:]))
			if !ok {
				return nil, errors.New("bad parent line")
			}
			c.parents = append(c.parents, h)
		case bytes.HasPrefix(line, []byte("committer ")):
			// committer Name <email> 1700000000 +0000
			gt := bytes.LastIndexByte(line, '>')
			if gt < 0 {
				continue
			}
			var ts []byte
			for _, f := range bytes.Fields(line[gt+1:]) {
				ts = f
				break
			}
			c.when, _ = strconv.ParseInt(string(ts), 10, 64)
		}
	}
	if c.tree.IsZero() {
		return nil, errors.New("commit without tree")
	}
	return c, nil
}

// parseTagTarget returns the object an annotated tag names.
func parseTagTarget(b []byte) (plumbing.Hash, error) {
	if !bytes.HasPrefix(b, []byte("object ")) || len(b) < 47 {
		return plumbing.ZeroHash, errors.New("bad tag")
	}
	h, ok := parseHash(string(b[7:47]))
	if !ok {
		return plumbing.ZeroHash, errors.New("bad tag")
	}
	return h, nil
}

// treeEntry is one entry of a raw tree.
type treeEntry struct {
	mode uint32
	hash plumbing.Hash
}

// forEachTreeEntry calls fn for each entry of a raw tree.
func forEachTreeEntry(b []byte, fn func(treeEntry) error) error {
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp <= 0 {
			return errors.New("bad tree entry")
		}
		mode, err := strconv.ParseUint(string(b[:sp]), 8, 32)
		if err != nil {
			return errors.New("bad tree mode")
		}
		nul := bytes.IndexByte(b[sp:], 0)
		if nul < 0 || sp+nul+21 > len(b) {
			return errors.New("bad tree entry")
		}
		var e treeEntry
		e.mode = uint32(mode)
		copy(e.hash[:], b[sp+nul+1:sp+nul+21])
		if err := fn(e); err != nil {
			return err
		}
		b = b[sp+nul+21:]
	}
	return nil
}

// parseHash reads a full hexadecimal object id, as git sends them; the
// wire layer needs no more of the object database than this.
func parseHash(s string) (plumbing.Hash, bool) {
	if !plumbing.IsHash(s) {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(s), true
}
