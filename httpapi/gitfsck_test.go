package httpapi_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostileObject is a push of objects git fsck refuses, built in a clone
// of draft 2 with git's plumbing, and what quire must say about it.
type hostileObject struct {
	name string
	// build writes the objects into the clone w and returns the refspecs
	// to push (git push) or, with raw, the ids of the objects to send in
	// a pack the test makes (git's own pack-objects walks trees and dies
	// on some of these before it sends anything).
	build func(h *hostileBuilder) []string
	raw   bool
	// reason is the end of what git prints for draft/2.
	reason string
}

// hostileBuilder makes objects in a work tree with git hash-object
// --literally, which writes whatever it is given.
type hostileBuilder struct {
	f    *gitFixture
	w    string
	blob string // a blob with "x\n"
	sub  string // a tree holding one file
	head string // the draft's commit
}

func (h *hostileBuilder) object(typ string, data []byte) string {
	h.f.t.Helper()
	cmd := exec.Command("git", "hash-object", "-t", typ, "--literally", "-w", "--stdin")
	cmd.Dir = h.w
	cmd.Env = h.f.g.env
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.f.t.Fatalf("hash-object: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// tree writes a tree of "mode name" entries in the order given; a mode
// ending in 40000 points at h.sub, others at h.blob.
func (h *hostileBuilder) tree(entries ...string) string {
	var b []byte
	for _, e := range entries {
		mode, name, _ := strings.Cut(e, " ")
		id := h.blob
		if strings.HasSuffix(mode, "40000") {
			id = h.sub
		}
		raw, _ := hex.DecodeString(id)
		b = append(append(append(append(append(b, mode...), ' '), name...), 0), raw...)
	}
	return h.object("tree", b)
}

// commitOf commits tree on top of the draft and returns the commit.
func (h *hostileBuilder) commitOf(tree string) string {
	return h.f.g.must(h.w, "commit-tree", tree, "-p", h.head, "-m", "hostile")
}

// treePush pushes a commit of a tree of entries.
func (h *hostileBuilder) treePush(entries ...string) []string {
	return []string{h.commitOf(h.tree(entries...)) + ":refs/heads/draft/2"}
}

// commitPush pushes a hand-written commit of the draft's tree with the
// given author line(s) and message.
func (h *hostileBuilder) commitPush(author, msg string) []string {
	tree := h.f.g.must(h.w, "rev-parse", h.head+"^{tree}")
	c := h.object("commit", []byte("tree "+tree+"\nparent "+h.head+"\n"+author+
		"committer C O Mitter <c@example.com> 1700000000 +0000\n\n"+msg))
	return []string{c + ":refs/heads/draft/2"}
}

const goodAuthor = "author A U Thor <a@example.com> 1700000000 +0000\n"

var hostileObjects = []hostileObject{
	{name: "name with slash", build: func(h *hostileBuilder) []string { return h.treePush("100644 SKILL.md", "100644 dir/x.md") },
		reason: "fullPathname: contains full pathnames (entry \"dir/x.md\")"},
	{name: "duplicate names", build: func(h *hostileBuilder) []string { return h.treePush("100644 SKILL.md", "100644 a.md", "100644 a.md") },
		reason: "duplicateEntries: contains duplicate file entries (entry \"a.md\")"},
	{name: "file and directory of one name", build: func(h *hostileBuilder) []string {
		return h.treePush("100644 SKILL.md", "100644 a", "100644 a.md", "40000 a")
	}, reason: "duplicateEntries: contains duplicate file entries (entry \"a\")"},
	{name: "entries out of order", build: func(h *hostileBuilder) []string { return h.treePush("100644 b.md", "100644 SKILL.md") },
		reason: "treeNotSorted: not properly sorted (entry \"SKILL.md\")"},
	{name: "zero-padded mode", build: func(h *hostileBuilder) []string { return h.treePush("100644 SKILL.md", "040000 docs") },
		reason: "zeroPaddedFilemode: contains zero-padded file modes (entry \"docs\")"},
	{name: "dot git", build: func(h *hostileBuilder) []string { return h.treePush("40000 .git", "100644 SKILL.md") },
		reason: "hasDotgit: contains '.git' (entry \".git\")"},
	{name: "dot git upper case", build: func(h *hostileBuilder) []string { return h.treePush("40000 .GIT", "100644 SKILL.md") },
		reason: "hasDotgit: contains '.git' (entry \".GIT\")"},
	{name: "dot git mixed case file", build: func(h *hostileBuilder) []string { return h.treePush("100644 .gIt", "100644 SKILL.md") },
		reason: "hasDotgit: contains '.git' (entry \".gIt\")"},
	{name: "NTFS short name", build: func(h *hostileBuilder) []string { return h.treePush("100644 SKILL.md", "40000 git~1") },
		reason: "hasDotgit: contains '.git' (entry \"git~1\")"},
	{name: "NTFS trailing dot", build: func(h *hostileBuilder) []string { return h.treePush("40000 .git.", "100644 SKILL.md") },
		reason: "hasDotgit: contains '.git' (entry \".git.\")"},
	{name: "NTFS trailing space", build: func(h *hostileBuilder) []string { return h.treePush("40000 .git ", "100644 SKILL.md") },
		reason: "hasDotgit: contains '.git' (entry \".git \")"},
	{name: "NTFS stream", build: func(h *hostileBuilder) []string {
		return h.treePush("40000 .git::$INDEX_ALLOCATION", "100644 SKILL.md")
	},
		reason: "hasDotgit: contains '.git' (entry \".git::$INDEX_ALLOCATION\")"},
	{name: "HFS ignorable code point", build: func(h *hostileBuilder) []string { return h.treePush("40000 .g\u200cit", "100644 SKILL.md") },
		reason: "hasDotgit: contains '.git' (entry \".g\\u200cit\")"},
	{name: "dot dot", build: func(h *hostileBuilder) []string { return h.treePush("40000 ..", "100644 SKILL.md") },
		reason: "hasDotdot: contains '..' (entry \"..\")"},
	{name: "dot", build: func(h *hostileBuilder) []string { return h.treePush("40000 .", "100644 SKILL.md") },
		reason: "hasDot: contains '.' (entry \".\")"},
	{name: "empty name", raw: true, build: func(h *hostileBuilder) []string {
		t := h.tree("100644 ", "100644 SKILL.md")
		return []string{h.commitOf(t), t, h.blob}
	}, reason: "badTree: cannot be parsed as a tree"},
	{name: "gitmodules in an unreachable tree", build: func(h *hostileBuilder) []string {
		// The pushed commit is fine; a tree no commit names rides along.
		t := h.tree("100644 .gitmodules")
		return []string{h.commitOf(h.tree("100644 SKILL.md")) + ":refs/heads/draft/2", t + ":refs/heads/draft/9"}
	}, reason: "contains '.gitmodules'; quire keeps no submodules (entry \".gitmodules\")"},
	{name: "commit date unparsable", build: func(h *hostileBuilder) []string {
		return h.commitPush("author A U Thor <a@example.com> yesterday +0000\n", "x\n")
	}, reason: "badDate: invalid author/committer line - bad date"},
	{name: "commit date overflows", build: func(h *hostileBuilder) []string {
		return h.commitPush("author A U Thor <a@example.com> 99999999999999999999 +0000\n", "x\n")
	}, reason: "badDateOverflow: invalid author/committer line - date causes integer overflow"},
	{name: "commit bad time zone", build: func(h *hostileBuilder) []string {
		return h.commitPush("author A U Thor <a@example.com> 1700000000 0100\n", "x\n")
	}, reason: "badTimezone: invalid author/committer line - bad time zone"},
	{name: "commit without author", build: func(h *hostileBuilder) []string { return h.commitPush("", "x\n") },
		reason: "missingAuthor: invalid format - expected 'author' line"},
	{name: "commit with two authors", build: func(h *hostileBuilder) []string { return h.commitPush(goodAuthor+goodAuthor, "x\n") },
		reason: "multipleAuthors: invalid format - multiple 'author' lines"},
	{name: "ident with a forged line", build: func(h *hostileBuilder) []string {
		return h.commitPush("author Eve\nauthor A U Thor <a@example.com> 1700000000 +0000\n", "x\n")
	}, reason: "missingEmail: invalid author/committer line - missing email"},
	{name: "ident email with <", build: func(h *hostileBuilder) []string {
		return h.commitPush("author A U Thor <a<b@example.com> 1700000000 +0000\n", "x\n")
	}, reason: "badEmail: invalid author/committer line - bad email"},
	{name: "ident name with >", build: func(h *hostileBuilder) []string {
		return h.commitPush("author A > B <a@example.com> 1700000000 +0000\n", "x\n")
	}, reason: "badName: invalid author/committer line - bad name"},
	{name: "NUL in commit header", build: func(h *hostileBuilder) []string {
		return h.commitPush("author A U\x00Thor <a@example.com> 1700000000 +0000\n", "x\n")
	}, reason: "nulInHeader: unterminated header: NUL at offset"},
	{name: "NUL in commit message", build: func(h *hostileBuilder) []string { return h.commitPush(goodAuthor, "x\x00y\n") },
		reason: "nulInCommit: NUL byte in the commit object body"},
	{name: "tag with a malformed tagger", build: func(h *hostileBuilder) []string {
		tag := h.object("tag", []byte("object "+h.head+"\ntype commit\ntag v9\ntagger T <t@example.com> soon +0000\n\nx\n"))
		return []string{h.commitOf(h.tree("100644 SKILL.md")) + ":refs/heads/draft/2", tag + ":refs/tags/v9"}
	}, reason: "badDate: invalid author/committer line - bad date"},
	{name: "tag of an unknown type", raw: true, build: func(h *hostileBuilder) []string {
		tag := h.object("tag", []byte("object "+h.head+"\ntype car\ntag v9\ntagger T <t@example.com> 1700000000 +0000\n\nx\n"))
		c := h.commitOf(h.tree("100644 SKILL.md"))
		return []string{c, tag, h.f.g.must(h.w, "rev-parse", c+"^{tree}"), h.blob}
	}, reason: "badType: invalid 'type' value"},
}

// TestGitPushHostileObjects pushes objects git fsck refuses: each push is
// refused whole, with git's message id, no ref moves, nothing is
// installed, and git fsck --strict passes on the repository afterwards.
func TestGitPushHostileObjects(t *testing.T) {
	sequentialHeavy(t)
	f := newGitFixture(t)
	w := f.clone(f.e.Admin, "-b", "draft/2")
	h := &hostileBuilder{f: f, w: w, head: f.g.must(w, "rev-parse", "HEAD")}
	h.blob = f.g.must(w, "hash-object", "-w", "--stdin") // the empty blob
	h.sub = mktree(f, w, "100644 blob "+h.blob+"\tx.md")
	before := f.serverRefs()
	packs := func() string {
		m, _ := filepath.Glob(filepath.Join(f.repo(), "objects", "pack", "*"))
		return strings.Join(m, " ")
	}
	packsBefore := packs()
	for _, tc := range hostileObjects {
		t.Run(tc.name, func(t *testing.T) {
			specs := tc.build(h)
			var out string
			if tc.raw {
				out = rawReceivePack(t, h, specs[0], specs)
			} else {
				out = f.g.fails(w, append([]string{"push", "origin"}, specs...)...)
				if !strings.Contains(out, "! [remote rejected]") || !strings.Contains(out, "draft/2 (fsck error in packed object: ") {
					t.Errorf("git said:\n%s", out)
				}
				if !strings.Contains(out, "remote: error: object ") || !strings.Contains(out, "remote: fatal: fsck error in packed object") ||
					!strings.Contains(out, "error: remote unpack failed: fsck error in packed object") {
					t.Errorf("git said:\n%s", out)
				}
			}
			if !strings.Contains(out, tc.reason) {
				t.Errorf("want %q; the server said:\n%s", tc.reason, out)
			}
			if after := f.serverRefs(); after != before {
				t.Errorf("refs changed:\n%s\nwant\n%s", after, before)
			}
			if now := packs(); now != packsBefore {
				t.Errorf("a refused push installed packs: %s", now)
			}
			f.fsck()
		})
	}
	if got := f.version(2)["commit"]; got != h.head {
		t.Errorf("draft 2 at %v, want %s", got, h.head)
	}
}

// rawReceivePack sends a receive-pack request moving draft/2 to tip with
// a pack of exactly objects (git pack-objects without walking) and
// returns the report.
func rawReceivePack(t *testing.T, h *hostileBuilder, tip string, objects []string) string {
	t.Helper()
	cmd := exec.Command("git", "pack-objects", "-q", "--stdout")
	cmd.Dir = h.w
	cmd.Env = h.f.g.env
	cmd.Stdin = strings.NewReader(strings.Join(objects, "\n") + "\n")
	pack, err := cmd.Output()
	if err != nil {
		t.Fatalf("pack-objects: %v", err)
	}
	line := fmt.Sprintf("%s %s refs/heads/draft/2\x00report-status side-band-64k agent=git/2.39.5\n", h.head, tip)
	body := append([]byte(fmt.Sprintf("%04x%s0000", len(line)+4, line)), pack...)
	r := h.f.e.Do("POST", "/git/demo/skills/pdf.git/git-receive-pack", h.f.e.Admin, body, "Content-Type: application/x-git-receive-pack-request")
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	out := string(r.Body)
	if !strings.Contains(out, "unpack fsck error in packed object") || !strings.Contains(out, "ng refs/heads/draft/2 fsck error in packed object: ") {
		t.Errorf("report:\n%q", out)
	}
	return out
}
