package odb

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// Fuzz targets for the object checks of fsck.go. The seeds in
// testdata/fuzz/ are the fsckCases (which TestFsckAgreesWithGit checks
// against git index-pack --strict) and objects git itself wrote; they
// are written by TestWriteFsckFuzzSeeds.

// FuzzFsckTree checks any bytes as a tree: never a panic, and a tree it
// accepts is what go-git decodes and encodes back byte for byte (git's
// canonical form, so the API and a clone see the same entries).
func FuzzFsckTree(f *testing.F) {
	addFsckSeeds(f, plumbing.TreeObject)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := FsckTree(data, FsckOptions{NoGitmodules: true}); err != nil {
			if err.ID == "" && err.Entry == "" {
				t.Fatalf("refusal without a message id or entry: %v", err)
			}
			return
		}
		if FsckTree(data, FsckOptions{}) != nil {
			t.Fatal("NoGitmodules accepts what git's rules alone refuse")
		}
		checkTreeRoundTrip(t, data)
	})
}

// FuzzFsckCommit checks any bytes as a commit: never a panic, and a
// commit it accepts go-git decodes, with one author and one committer
// line in its header.
func FuzzFsckCommit(f *testing.F) {
	addFsckSeeds(f, plumbing.CommitObject)
	f.Fuzz(func(t *testing.T, data []byte) {
		if fsckCommit(data) != nil {
			return
		}
		obj := &plumbing.MemoryObject{}
		obj.SetType(plumbing.CommitObject)
		obj.Write(data)
		var c object.Commit
		if err := c.Decode(obj); err != nil {
			t.Fatalf("go-git cannot decode an accepted commit: %v\n%q", err, data)
		}
		header, _, _ := bytes.Cut(data, []byte("\n\n"))
		if n := countLines(header, "author "); n != 1 {
			t.Fatalf("accepted a commit with %d author lines:\n%q", n, data)
		}
	})
}

// FuzzFsckTag checks any bytes as a tag: never a panic.
func FuzzFsckTag(f *testing.F) {
	addFsckSeeds(f, plumbing.TagObject)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := fsckTag(data); err == nil && !bytes.HasPrefix(data, []byte("object ")) {
			t.Fatalf("accepted a tag without an object line:\n%q", data)
		}
	})
}

// FuzzSignature makes commits and tags with any actor and message the
// way quire writes them: each must pass the checks, with the one author
// line the actor gave.
func FuzzSignature(f *testing.F) {
	f.Add("Eve\ncommitter Mallory <m@example.com> 1 +0000", "eve@example.com>", "Edit SKILL.md\n")
	f.Add("", "", "")
	f.Add("<>", "\x00\r\n", "key\x00name\n")
	f.Add(" J\u00fcrgen \u0085 ", "j@example.com", "x")
	f.Fuzz(func(t *testing.T, name, email, msg string) {
		when := time.Unix(1700000000, 0).In(time.FixedZone("", -90*60))
		sig := Signature(quire.Actor{Name: name, Email: email}, when)
		c := &object.Commit{Author: sig, Committer: sig, Message: ObjectMessage(msg), TreeHash: plumbing.NewHash(fsckTree0)}
		data := encodeObject(t, c)
		if err := fsckCommit(data); err != nil {
			t.Fatalf("quire's commit for %q <%q>: %v\n%q", name, email, err, data)
		}
		header, _, _ := bytes.Cut(data, []byte("\n\n"))
		if countLines(header, "author ") != 1 || countLines(header, "committer ") != 1 || bytes.Count(header, []byte("\n")) != 2 {
			t.Fatalf("header:\n%q", header)
		}
		tag := &object.Tag{Name: "v1", Tagger: sig, Message: ObjectMessage(msg), TargetType: plumbing.CommitObject, Target: plumbing.NewHash(fsckRoot)}
		if err := fsckTag(encodeObject(t, tag)); err != nil {
			t.Fatalf("quire's tag for %q <%q>: %v", name, email, err)
		}
	})
}

func encodeObject(t *testing.T, o interface {
	Encode(plumbing.EncodedObject) error
}) []byte {
	obj := &plumbing.MemoryObject{}
	if err := o.Encode(obj); err != nil {
		t.Fatal(err)
	}
	rd, _ := obj.Reader()
	var b bytes.Buffer
	b.ReadFrom(rd)
	return b.Bytes()
}

func countLines(header []byte, prefix string) int {
	n := 0
	for line := range bytes.SplitSeq(header, []byte("\n")) {
		if bytes.HasPrefix(line, []byte(prefix)) {
			n++
		}
	}
	return n
}

func addFsckSeeds(f *testing.F, t plumbing.ObjectType) {
	for _, tc := range fsckCases {
		if tc.typ == t {
			f.Add(tc.data)
		}
	}
}

// TestWriteFsckFuzzSeeds writes the fsckCases, and a tree, commits and a
// tag git wrote, as seeds of the fuzz targets. It runs only when asked:
//
//	QUIRE_WRITE_FUZZ_SEEDS=1 go test -run TestWriteFsckFuzzSeeds ./gitstore
func TestWriteFsckFuzzSeeds(t *testing.T) {
	if os.Getenv("QUIRE_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set QUIRE_WRITE_FUZZ_SEEDS=1 to write the fsck fuzz seeds")
	}
	targets := map[plumbing.ObjectType]string{
		plumbing.TreeObject: "FuzzFsckTree", plumbing.CommitObject: "FuzzFsckCommit", plumbing.TagObject: "FuzzFsckTag",
	}
	for _, target := range targets {
		os.RemoveAll(filepath.Join("testdata", "fuzz", target))
	}
	write := func(typ plumbing.ObjectType, name string, data []byte) {
		path := filepath.Join("testdata", "fuzz", targets[typ], name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(path, []byte(seed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slug := regexp.MustCompile(`[^a-z0-9]+`)
	for i, tc := range fsckCases {
		write(tc.typ, fmt.Sprintf("%02d-", i)+strings.Trim(slug.ReplaceAllString(strings.ToLower(tc.name), "-"), "-"), tc.data)
	}
	// Objects git wrote.
	dir, wt := t.TempDir(), t.TempDir()
	git := func(stdin string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=A U Thor", "GIT_AUTHOR_EMAIL=author@example.com", "GIT_AUTHOR_DATE=1700000000 +0100",
			"GIT_COMMITTER_NAME=C O Mitter", "GIT_COMMITTER_EMAIL=committer@example.com", "GIT_COMMITTER_DATE=1700000000 -0230")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	git("", "init", "-q", "--bare")
	for i, p := range []string{"SKILL.md", "a.c", "a/x", "b/c/d", ".gitignore", "caf\u00e9.md", "scripts/run.py"} {
		full := filepath.Join(wt, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(fmt.Sprint(i)), 0o644)
	}
	git("", "--work-tree", wt, "add", "-A")
	tree := git("", "write-tree")
	c1 := git("first\n", "commit-tree", tree)
	c2 := git("second\n\nwith a body\n", "commit-tree", tree, "-p", c1, "-p", c1)
	tag := git("object "+c2+"\ntype commit\ntag v1\ntagger T <t@example.com> 1700000000 +0000\n\nv1\n", "mktag")
	write(plumbing.TreeObject, "git-tree", gitObjectBytes(t, dir, plumbing.TreeObject, tree))
	write(plumbing.CommitObject, "git-commit", gitObjectBytes(t, dir, plumbing.CommitObject, c1))
	write(plumbing.CommitObject, "git-merge", gitObjectBytes(t, dir, plumbing.CommitObject, c2))
	write(plumbing.TagObject, "git-tag", gitObjectBytes(t, dir, plumbing.TagObject, tag))
}
