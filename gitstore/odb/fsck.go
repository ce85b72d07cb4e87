package odb

import (
	"bytes"
	"fmt"
	"math"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire/valid"
)

// This file checks raw commit, tree and tag objects the way git fsck
// --strict does (fsck.c of git 2.39: fsck_tree, fsck_commit, fsck_tag,
// fsck_ident), so that quire stores no object git would refuse with
// receive.fsckObjects or transfer.fsckObjects. It is written by hand:
// go-git's decoders are lenient (a tree entry named "a/b", duplicate or
// unsorted entries, a mode "040000", a commit with no author all decode
// without error) and no Go library validates objects as git does. It needs
// only the object's bytes, and reports the first problem with git's message
// id and wording.
//
// It is stricter than git in a few corners no git writes: a mode of more
// than 16 bits (git truncates it), and a date with a sign or leading
// blanks (strtoumax accepts them).

// FsckError is the first problem found in an object, as git fsck names it.
type FsckError struct {
	ID    string // git's message id ("hasDotgit"), or "" for a quire rule
	Msg   string // git's message ("contains '.git'")
	Entry string // the tree entry at fault, when there is one
}

func (e *FsckError) Error() string {
	s := e.Msg
	if e.ID != "" {
		s = e.ID + ": " + s
	}
	if e.Entry != "" {
		name := e.Entry
		if len(name) > 100 {
			name = name[:100] + "..."
		}
		s += fmt.Sprintf(" (entry %q)", name)
	}
	return s
}

// FsckOptions adds quire's own rules to git's.
type FsckOptions struct {
	// NoGitmodules refuses any entry git reads as ".gitmodules". git fsck
	// parses such a blob and refuses some submodule names, URLs and paths;
	// quire keeps no submodules, so it refuses the name instead.
	NoGitmodules bool
}

// FsckObject checks a commit, tree or tag; other types pass.
func FsckObject(t plumbing.ObjectType, data []byte, o FsckOptions) *FsckError {
	switch t {
	case plumbing.CommitObject:
		return fsckCommit(data)
	case plumbing.TreeObject:
		return FsckTree(data, o)
	case plumbing.TagObject:
		return fsckTag(data)
	}
	return nil
}

// Tree entry modes git accepts (fsck_tree).
const (
	modeDir        = 0o040000
	modeRegular    = 0o100644
	modeExecutable = 0o100755
	modeSymlink    = 0o120000
	modeGitlink    = 0o160000
	modeTypeMask   = 0o170000
)

// The problems fsck_tree collects over a whole tree, in the order it
// reports them.
const (
	treeNullSha1 = iota
	treeFullPathname
	treeHasDot
	treeHasDotdot
	treeHasDotgit
	treeZeroPadded
	treeBadFilemode
	treeDuplicate
	treeNotSorted
	treeFlags
)

var treeMessages = [treeFlags]FsckError{
	treeNullSha1:     {ID: "nullSha1", Msg: "contains entries pointing to null sha1"},
	treeFullPathname: {ID: "fullPathname", Msg: "contains full pathnames"},
	treeHasDot:       {ID: "hasDot", Msg: "contains '.'"},
	treeHasDotdot:    {ID: "hasDotdot", Msg: "contains '..'"},
	treeHasDotgit:    {ID: "hasDotgit", Msg: "contains '.git'"},
	treeZeroPadded:   {ID: "zeroPaddedFilemode", Msg: "contains zero-padded file modes"},
	treeBadFilemode:  {ID: "badFilemode", Msg: "contains bad file modes"},
	treeDuplicate:    {ID: "duplicateEntries", Msg: "contains duplicate file entries"},
	treeNotSorted:    {ID: "treeNotSorted", Msg: "not properly sorted"},
}

var nullID [20]byte

var errBadTree = &FsckError{ID: "badTree", Msg: "cannot be parsed as a tree"}

// FsckTree checks a tree object: git's entry syntax (decode_tree_entry),
// then fsck_tree's rules on names, modes and order.
func FsckTree(data []byte, o FsckOptions) *FsckError {
	var (
		found      [treeFlags]bool
		entry      [treeFlags]string // the first entry with each problem
		prevName   []byte
		prevMode   uint32
		candidates [][]byte // files that a later directory may duplicate
		gitmodules string   // first .gitmodules look-alike, for NoGitmodules
		hasModules bool
	)
	flag := func(f int, name []byte) {
		if !found[f] {
			found[f], entry[f] = true, string(name)
		}
	}
	buf := data
	for len(buf) > 0 {
		// decode_tree_entry: "<octal mode> <name>\0<20-byte id>".
		if len(buf) < 23 || buf[len(buf)-21] != 0 || buf[0] == ' ' {
			return errBadTree
		}
		i := 0
		var mode uint64
		for ; buf[i] != ' '; i++ { // stops at the NUL checked above at the latest
			c := buf[i]
			if c < '0' || c > '7' {
				return errBadTree
			}
			mode = min(mode<<3|uint64(c-'0'), math.MaxUint32+1)
		}
		rest := buf[i+1:]
		n := bytes.IndexByte(rest, 0)
		if n == 0 {
			return errBadTree // git: "empty filename in tree entry"
		}
		name, id := rest[:n], rest[n+1:n+21]
		zeroPad := buf[0] == '0'
		buf = rest[n+21:]

		if bytes.Equal(id, nullID[:]) {
			flag(treeNullSha1, name)
		}
		if bytes.IndexByte(name, '/') >= 0 {
			flag(treeFullPathname, name)
		}
		switch string(name) {
		case ".":
			flag(treeHasDot, name)
		case "..":
			flag(treeHasDotdot, name)
		}
		special := maySpecial(name)
		var s string
		if special {
			s = string(name)
		}
		if special && valid.IsDotGit(s) {
			flag(treeHasDotgit, name)
		}
		if zeroPad {
			flag(treeZeroPadded, name)
		}
		m := uint32(min(mode, math.MaxUint32))
		switch {
		case mode > 0o177777:
			flag(treeBadFilemode, name)
		case m == modeRegular, m == modeExecutable, m == modeSymlink, m == modeDir, m == modeGitlink:
		default: // 100664 too: git fsck --strict refuses it
			flag(treeBadFilemode, name)
		}
		if special && valid.IsDotGitmodules(s) {
			switch {
			case m == modeSymlink:
				return &FsckError{ID: "gitmodulesSymlink", Msg: ".gitmodules is a symbolic link", Entry: s}
			case m&modeTypeMask == modeDir:
				return &FsckError{ID: "gitmodulesBlob", Msg: "non-blob found at .gitmodules", Entry: s}
			}
			if !hasModules {
				gitmodules, hasModules = s, true
			}
		}
		if special && m == modeSymlink {
			switch {
			case valid.IsDotGitattributes(s):
				return &FsckError{ID: "gitattributesSymlink", Msg: ".gitattributes is a symlink", Entry: s}
			case valid.IsDotGitignore(s):
				return &FsckError{ID: "gitignoreSymlink", Msg: ".gitignore is a symlink", Entry: s}
			case valid.IsDotMailmap(s):
				return &FsckError{ID: "mailmapSymlink", Msg: ".mailmap is a symlink", Entry: s}
			}
		}
		if prevName != nil {
			switch verifyOrdered(prevMode, prevName, m, name, &candidates) {
			case treeUnordered:
				flag(treeNotSorted, name)
			case treeHasDups:
				flag(treeDuplicate, name)
			}
		}
		prevName, prevMode = name, m
	}
	for f := range treeFlags {
		if found[f] {
			e := treeMessages[f]
			e.Entry = entry[f]
			return &e
		}
	}
	if o.NoGitmodules && hasModules {
		return &FsckError{Msg: "contains '.gitmodules'; quire keeps no submodules", Entry: gitmodules}
	}
	return nil
}

// maySpecial reports whether name may be one git reads as .git,
// .gitmodules and the like: those start with '.', or a short name's
// "g" or "m", or a code point HFS+ ignores, or hold a backslash NTFS
// splits at. Most names are none, and skip the slower checks.
func maySpecial(name []byte) bool {
	switch name[0] {
	case '.', 'g', 'G', 'm', 'M':
		return true
	}
	for _, c := range name {
		if c == '\\' || c >= 0x80 {
			return true
		}
	}
	return false
}

const (
	treeOrdered = iota
	treeUnordered
	treeHasDups
)

// verifyOrdered is git's verify_ordered: entries sort by name, a
// directory's name as if it ended in '/'; a file and a directory of the
// same name are duplicates even when entries such as "a.c" sort between
// "a" and "a/", which the candidates stack remembers.
func verifyOrdered(mode1 uint32, name1 []byte, mode2 uint32, name2 []byte, candidates *[][]byte) int {
	n := min(len(name1), len(name2))
	if cmp := bytes.Compare(name1[:n], name2[:n]); cmp < 0 {
		return treeOrdered
	} else if cmp > 0 {
		return treeUnordered
	}
	var c1, c2 byte
	if n < len(name1) {
		c1 = name1[n]
	}
	if n < len(name2) {
		c2 = name2[n]
	}
	if c1 == 0 && c2 == 0 {
		return treeHasDups
	}
	if c1 == 0 && mode1&modeTypeMask == modeDir {
		c1 = '/'
	}
	if c2 == 0 && mode2&modeTypeMask == modeDir {
		c2 = '/'
	}
	lessThanSlash := func(c byte) bool { return c != 0 && c < '/' }
	if c1 == 0 && lessThanSlash(c2) {
		*candidates = append(*candidates, name1)
	} else if c2 == '/' && lessThanSlash(c1) {
		for len(*candidates) > 0 {
			f := (*candidates)[len(*candidates)-1]
			p, ok := bytes.CutPrefix(name2, f)
			if !ok {
				break
			}
			if len(p) == 0 {
				return treeHasDups
			}
			if lessThanSlash(p[0]) {
				break
			}
			*candidates = (*candidates)[:len(*candidates)-1]
		}
	}
	if c1 < c2 {
		return treeOrdered
	}
	return treeUnordered
}

// verifyHeaders is git's verify_headers: no NUL before the blank line that
// ends the header, and a header that ends with a newline.
func verifyHeaders(data []byte) *FsckError {
	for i, c := range data {
		switch c {
		case 0:
			return &FsckError{ID: "nulInHeader", Msg: fmt.Sprintf("unterminated header: NUL at offset %d", i)}
		case '\n':
			if i+1 < len(data) && data[i+1] == '\n' {
				return nil
			}
		}
	}
	if len(data) > 0 && data[len(data)-1] == '\n' {
		return nil
	}
	return &FsckError{ID: "unterminatedHeader", Msg: "unterminated header"}
}

// headerLine cuts the line that starts data after prefix: it reports the
// line's value (without the newline) and what follows it.
func headerLine(data []byte, prefix string) (value, rest []byte, ok bool) {
	after, ok := bytes.CutPrefix(data, []byte(prefix))
	if !ok {
		return nil, data, false
	}
	value, rest, _ = bytes.Cut(after, []byte{'\n'})
	return value, rest, true
}

// isHexID reports whether b is an object id in hex (git's get_oid_hex
// takes either case).
func isHexID(b []byte) bool {
	if len(b) != 40 {
		return false
	}
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// fsckCommit is git's fsck_commit.
func fsckCommit(data []byte) *FsckError {
	if err := verifyHeaders(data); err != nil {
		return err
	}
	v, rest, ok := headerLine(data, "tree ")
	if !ok {
		return &FsckError{ID: "missingTree", Msg: "invalid format - expected 'tree' line"}
	}
	if !isHexID(v) {
		return &FsckError{ID: "badTreeSha1", Msg: "invalid 'tree' line format - bad sha1"}
	}
	for {
		v, r, ok := headerLine(rest, "parent ")
		if !ok {
			break
		}
		if !isHexID(v) {
			return &FsckError{ID: "badParentSha1", Msg: "invalid 'parent' line format - bad sha1"}
		}
		rest = r
	}
	authors := 0
	for {
		v, r, ok := headerLine(rest, "author ")
		if !ok {
			break
		}
		authors++
		if err := fsckIdent(v); err != nil {
			return err
		}
		rest = r
	}
	switch {
	case authors == 0:
		return &FsckError{ID: "missingAuthor", Msg: "invalid format - expected 'author' line"}
	case authors > 1:
		return &FsckError{ID: "multipleAuthors", Msg: "invalid format - multiple 'author' lines"}
	}
	v, _, ok = headerLine(rest, "committer ")
	if !ok {
		return &FsckError{ID: "missingCommitter", Msg: "invalid format - expected 'committer' line"}
	}
	if err := fsckIdent(v); err != nil {
		return err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return &FsckError{ID: "nulInCommit", Msg: "NUL byte in the commit object body"}
	}
	return nil
}

// fsckTag is git's fsck_tag_standalone. A missing tagger and a tag name
// that is no valid ref name are only informational in git; they pass.
func fsckTag(data []byte) *FsckError {
	if err := verifyHeaders(data); err != nil {
		return err
	}
	v, rest, ok := headerLine(data, "object ")
	if !ok {
		return &FsckError{ID: "missingObject", Msg: "invalid format - expected 'object' line"}
	}
	if !isHexID(v) {
		return &FsckError{ID: "badObjectSha1", Msg: "invalid 'object' line format - bad sha1"}
	}
	after, ok := bytes.CutPrefix(rest, []byte("type "))
	if !ok {
		return &FsckError{ID: "missingTypeEntry", Msg: "invalid format - expected 'type' line"}
	}
	v, rest, ok = bytes.Cut(after, []byte{'\n'})
	if !ok {
		return &FsckError{ID: "missingType", Msg: "invalid format - unexpected end after 'type' line"}
	}
	switch string(v) {
	case "commit", "tree", "blob", "tag":
	default:
		return &FsckError{ID: "badType", Msg: "invalid 'type' value"}
	}
	after, ok = bytes.CutPrefix(rest, []byte("tag "))
	if !ok {
		return &FsckError{ID: "missingTagEntry", Msg: "invalid format - expected 'tag' line"}
	}
	if _, rest, ok = bytes.Cut(after, []byte{'\n'}); !ok {
		return &FsckError{ID: "missingTag", Msg: "invalid format - unexpected end after 'type' line"}
	}
	if v, _, ok := headerLine(rest, "tagger "); ok {
		return fsckIdent(v)
	}
	return nil
}

// fsckIdent is git's fsck_ident on one author, committer or tagger line
// (without its newline): "Name <email> 1700000000 +0000".
func fsckIdent(line []byte) *FsckError {
	bad := func(id, what string) *FsckError {
		return &FsckError{ID: id, Msg: "invalid author/committer line - " + what}
	}
	if len(line) > 0 && line[0] == '<' {
		return bad("missingNameBeforeEmail", "missing space before email")
	}
	p := bytes.IndexAny(line, "<>")
	switch {
	case p >= 0 && line[p] == '>':
		return bad("badName", "bad name")
	case p < 0:
		return bad("missingEmail", "missing email")
	case line[p-1] != ' ':
		return bad("missingSpaceBeforeEmail", "missing space before email")
	}
	line = line[p+1:]
	p = bytes.IndexAny(line, "<>")
	if p < 0 || line[p] != '>' {
		return bad("badEmail", "bad email")
	}
	line = line[p+1:]
	if len(line) == 0 || line[0] != ' ' {
		return bad("missingSpaceBeforeDate", "missing space before date")
	}
	line = line[1:]
	if len(line) > 0 && line[0] == '0' && (len(line) == 1 || line[1] != ' ') {
		return bad("zeroPaddedDate", "zero-padded date")
	}
	digits := 0
	var t uint64
	overflow := false
	for digits < len(line) && '0' <= line[digits] && line[digits] <= '9' {
		d := uint64(line[digits] - '0')
		if t > (math.MaxInt64-d)/10 {
			overflow = true
		}
		t = t*10 + d
		digits++
	}
	if overflow {
		return bad("badDateOverflow", "date causes integer overflow")
	}
	if digits == 0 || digits == len(line) || line[digits] != ' ' {
		return bad("badDate", "bad date")
	}
	tz := line[digits+1:]
	if len(tz) != 5 || tz[0] != '+' && tz[0] != '-' || !isDigits(tz[1:]) {
		return bad("badTimezone", "bad time zone")
	}
	return nil
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
