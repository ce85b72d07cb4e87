package odb

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Object ids the fsck cases point at; the agreement test writes them.
const (
	fsckBlob  = "45b983be36b73c0788dc9cbcb76cbb80fc7bb057" // "hi\n"
	fsckTree0 = "4b825dc642cb6eb9a060e54bf8d69288fbee4904" // the empty tree
	fsckRoot  = "4577a1372eb53a62bc02b5c91cdbc1e1bb475dde" // case "commit root"
)

// rawTree builds a tree object from "mode name" entries (a mode of
// 40000 or 040000 points at the empty tree, others at fsckBlob), in the
// order given: nothing is sorted or checked.
func rawTree(entries ...string) []byte {
	var b []byte
	for _, e := range entries {
		mode, name, _ := strings.Cut(e, " ")
		id := fsckBlob
		if strings.TrimLeft(mode, "0") == "40000" {
			id = fsckTree0
		}
		raw, _ := hex.DecodeString(id)
		b = append(b, mode...)
		b = append(b, ' ')
		b = append(b, name...)
		b = append(b, 0)
		b = append(b, raw...)
	}
	return b
}

const (
	fsckAuthor    = "author A U Thor <author@example.com> 1700000000 +0000\n"
	fsckCommitter = "committer C O Mitter <committer@example.com> 1700000000 +0100\n"
	fsckParent    = "parent 4577a1372eb53a62bc02b5c91cdbc1e1bb475dde\n"
)

// rawCommit builds a commit of the empty tree with the given author line
// (and the usual committer and message).
func rawCommit(author string) []byte {
	return []byte("tree " + fsckTree0 + "\n" + fsckParent + author + fsckCommitter + "\nmessage\n")
}

// rawTag builds a tag object of a commit with the given tagger line.
func rawTag(tagger string) []byte {
	return []byte("object 4577a1372eb53a62bc02b5c91cdbc1e1bb475dde\ntype commit\ntag v1\n" + tagger + "\nPublish version 1\n")
}

// fsckCase is an object and the message id git fsck --strict reports for
// it ("" when it finds nothing). stricter marks objects git lets through
// (at most with a warning) that quire refuses.
type fsckCase struct {
	name     string
	typ      plumbing.ObjectType
	data     []byte
	want     string
	stricter bool
}

var tree, commit, tag = plumbing.TreeObject, plumbing.CommitObject, plumbing.TagObject

var fsckCases = []fsckCase{
	// Trees git accepts.
	{"tree files dirs links", tree, rawTree("100644 a", "100755 b", "120000 c", "40000 d", "160000 e"), "", false},
	{"tree file sorts before dir of same prefix", tree, rawTree("100644 a.c", "40000 a"), "", false},
	{"tree file then longer file", tree, rawTree("100644 a", "100644 a.c", "100644 ab"), "", false},
	{"tree dot names git allows", tree, rawTree("100644 ...", "100644 .git-foo", "40000 .github", "100644 .gitignore", "100644 .gitmodules", "100644 gitx", "100644 git~2"), "", false},
	{"tree non-ASCII names", tree, rawTree("100644 caf\u00e9.md", "100644 \u65e5\u672c.md"), "", false},
	{"empty tree", tree, nil, "", false},
	// Trees git refuses.
	{"tree name with slash", tree, rawTree("100644 a/b"), "fullPathname", false},
	{"tree empty name", tree, rawTree("100644 "), "badTree", false},
	{"tree dot", tree, rawTree("40000 ."), "hasDot", false},
	{"tree dot dot", tree, rawTree("40000 .."), "hasDotdot", false},
	{"tree .git", tree, rawTree("40000 .git"), "hasDotgit", false},
	{"tree .GIT", tree, rawTree("40000 .GIT"), "hasDotgit", false},
	{"tree .gIt file", tree, rawTree("100644 .gIt"), "hasDotgit", false},
	{"tree NTFS short name git~1", tree, rawTree("40000 git~1"), "hasDotgit", false},
	{"tree NTFS short name GIT~1", tree, rawTree("40000 GIT~1"), "hasDotgit", false},
	{"tree NTFS trailing dot", tree, rawTree("40000 .git."), "hasDotgit", false},
	{"tree NTFS trailing space", tree, rawTree("40000 .git "), "hasDotgit", false},
	{"tree NTFS trailing dots and spaces", tree, rawTree("40000 .git. . "), "hasDotgit", false},
	{"tree NTFS stream", tree, rawTree("40000 .git::$INDEX_ALLOCATION"), "hasDotgit", false},
	{"tree NTFS backslash", tree, rawTree(`100644 a\.git`), "hasDotgit", false},
	{"tree HFS zero-width non-joiner", tree, rawTree("40000 .g\u200cit"), "hasDotgit", false},
	{"tree HFS byte order mark", tree, rawTree("40000 \ufeff.git"), "hasDotgit", false},
	{"tree HFS left-to-right mark upper case", tree, rawTree("40000 .GI\u200eT"), "hasDotgit", false},
	{"tree zero-padded dir mode", tree, rawTree("040000 d"), "zeroPaddedFilemode", false},
	{"tree zero-padded file mode", tree, rawTree("0100644 a"), "zeroPaddedFilemode", false},
	{"tree mode 100664", tree, rawTree("100664 a"), "badFilemode", true},
	{"tree mode 100600", tree, rawTree("100600 a"), "badFilemode", true},
	{"tree mode over 16 bits", tree, rawTree("1100644 a"), "badFilemode", true},
	{"tree mode not octal", tree, rawTree("100648 a"), "badTree", false},
	{"tree mode empty", tree, rawTree(" a"), "badTree", false},
	{"tree duplicate files", tree, rawTree("100644 a", "100644 a"), "duplicateEntries", false},
	{"tree duplicate file and dir", tree, rawTree("100644 a", "40000 a"), "duplicateEntries", false},
	{"tree duplicate file and dir apart", tree, rawTree("100644 a", "100644 a.c", "40000 a"), "duplicateEntries", false},
	{"tree out of order", tree, rawTree("100644 b", "100644 a"), "treeNotSorted", false},
	{"tree dir sorted as a file", tree, rawTree("40000 a", "100644 a.c"), "treeNotSorted", false},
	{"tree null id", tree, append(rawTree("100644 a")[:len("100644 a")+1], make([]byte, 20)...), "nullSha1", false},
	{"tree truncated", tree, rawTree("100644 a")[:20], "badTree", false},
	{"tree trailing garbage", tree, append(rawTree("100644 a"), "100644 b"...), "badTree", false},
	{"tree .gitmodules symlink", tree, rawTree("120000 .gitmodules"), "gitmodulesSymlink", false},
	{"tree .gitmodules directory", tree, rawTree("40000 .gitmodules"), "gitmodulesBlob", false},
	{"tree NTFS .gitmodules symlink", tree, rawTree("120000 GITMOD~1"), "gitmodulesSymlink", false},
	{"tree .gitattributes symlink", tree, rawTree("120000 .gitattributes"), "gitattributesSymlink", true},
	{"tree .gitignore symlink", tree, rawTree("120000 .gitignore"), "gitignoreSymlink", true},
	{"tree .mailmap symlink", tree, rawTree("120000 .mailmap"), "mailmapSymlink", true},

	// Commits git accepts.
	{"commit", commit, rawCommit(fsckAuthor), "", false},
	{"commit root", commit, []byte("tree " + fsckTree0 + "\n" + fsckAuthor + fsckCommitter + "\nroot\n"), "", false},
	{"commit merge", commit, []byte("tree " + fsckTree0 + "\n" + fsckParent + fsckParent + fsckAuthor + fsckCommitter + "\nmerge\n"), "", false},
	{"commit extra headers", commit, []byte("tree " + fsckTree0 + "\n" + fsckAuthor + fsckCommitter + "encoding ISO-8859-1\ngpgsig -----BEGIN-----\n x\n -----END-----\n\nsigned\n"), "", false},
	{"commit no message", commit, []byte("tree " + fsckTree0 + "\n" + fsckAuthor + fsckCommitter), "", false},
	{"commit epoch zero", commit, rawCommit("author A <a@example.com> 0 +0000\n"), "", false},
	{"commit upper-case tree id", commit, []byte("tree " + strings.ToUpper(fsckTree0) + "\n" + fsckAuthor + fsckCommitter + "\nx\n"), "", false},
	{"commit name with spaces and unicode", commit, rawCommit("author  J\u00fcrgen  <j@example.com> 1 -0130\n"), "", false},
	// Commits git refuses.
	{"commit no tree", commit, []byte(fsckAuthor + fsckCommitter + "\nx\n"), "missingTree", false},
	{"commit bad tree id", commit, []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee490\n" + fsckAuthor + fsckCommitter + "\nx\n"), "badTreeSha1", false},
	{"commit bad parent id", commit, []byte("tree " + fsckTree0 + "\nparent xyz\n" + fsckAuthor + fsckCommitter + "\nx\n"), "badParentSha1", false},
	{"commit no author", commit, []byte("tree " + fsckTree0 + "\n" + fsckCommitter + "\nx\n"), "missingAuthor", false},
	{"commit two authors", commit, rawCommit(fsckAuthor + fsckAuthor), "multipleAuthors", false},
	{"commit no committer", commit, []byte("tree " + fsckTree0 + "\n" + fsckAuthor + "\nx\n"), "missingCommitter", false},
	{"commit forged author line", commit, rawCommit("author Eve\nauthor A <a@example.com> 1 +0000\n"), "missingEmail", false},
	{"commit ident no name", commit, rawCommit("author <a@example.com> 1700000000 +0000\n"), "missingNameBeforeEmail", false},
	{"commit ident name with >", commit, rawCommit("author A > B <a@example.com> 1700000000 +0000\n"), "badName", false},
	{"commit ident no email", commit, rawCommit("author A U Thor 1700000000 +0000\n"), "missingEmail", false},
	{"commit ident no space before email", commit, rawCommit("author A<a@example.com> 1700000000 +0000\n"), "missingSpaceBeforeEmail", false},
	{"commit ident email unclosed", commit, rawCommit("author A <a@example.com 1700000000 +0000\n"), "badEmail", false},
	{"commit ident email with <", commit, rawCommit("author A <a<b@example.com> 1700000000 +0000\n"), "badEmail", false},
	{"commit ident no space before date", commit, rawCommit("author A <a@example.com>1700000000 +0000\n"), "missingSpaceBeforeDate", false},
	{"commit date zero-padded", commit, rawCommit("author A <a@example.com> 01700000000 +0000\n"), "zeroPaddedDate", false},
	{"commit date overflows", commit, rawCommit("author A <a@example.com> 99999999999999999999 +0000\n"), "badDateOverflow", false},
	{"commit date unparsable", commit, rawCommit("author A <a@example.com> yesterday +0000\n"), "badDate", false},
	{"commit date missing", commit, rawCommit("author A <a@example.com> \n"), "badDate", false},
	{"commit no time zone", commit, rawCommit("author A <a@example.com> 1700000000\n"), "badDate", false},
	{"commit short time zone", commit, rawCommit("author A <a@example.com> 1700000000 +01\n"), "badTimezone", false},
	{"commit time zone without sign", commit, rawCommit("author A <a@example.com> 1700000000 0100\n"), "badTimezone", false},
	{"commit junk after time zone", commit, rawCommit("author A <a@example.com> 1700000000 +0100 x\n"), "badTimezone", false},
	{"commit NUL in header", commit, rawCommit("author A\x00 <a@example.com> 1700000000 +0000\n"), "nulInHeader", false},
	{"commit NUL in message", commit, []byte("tree " + fsckTree0 + "\n" + fsckAuthor + fsckCommitter + "\nmessage\x00hidden\n"), "nulInCommit", false},
	{"commit unterminated header", commit, []byte("tree " + fsckTree0), "unterminatedHeader", false},

	// Tags git accepts.
	{"tag", tag, rawTag("tagger T <t@example.com> 1700000000 +0000\n"), "", false},
	{"tag without tagger", tag, rawTag(""), "", false},
	{"tag of a tree", tag, []byte("object " + fsckTree0 + "\ntype tree\ntag t\ntagger T <t@example.com> 1 +0000\n\nx\n"), "", false},
	// Tags git refuses.
	{"tag no object", tag, []byte("type commit\ntag v1\n\nx\n"), "missingObject", false},
	{"tag bad object id", tag, []byte("object 12345\ntype commit\ntag v1\n\nx\n"), "badObjectSha1", false},
	{"tag no type", tag, []byte("object " + fsckTree0 + "\ntag v1\n\nx\n"), "missingTypeEntry", false},
	{"tag bad type", tag, []byte("object " + fsckTree0 + "\ntype car\ntag v1\n\nx\n"), "badType", false},
	{"tag no tag line", tag, []byte("object " + fsckTree0 + "\ntype tree\ntagger T <t@example.com> 1 +0000\n\nx\n"), "missingTagEntry", false},
	{"tag bad tagger", tag, rawTag("tagger T <t@example.com> soon +0000\n"), "badDate", false},
	{"tag tagger without email", tag, rawTag("tagger T\n"), "missingEmail", false},
	{"tag NUL in header", tag, []byte("object " + fsckTree0 + "\ntype tree\x00\ntag v1\n\nx\n"), "nulInHeader", false},
}

func TestFsckCases(t *testing.T) {
	for _, tc := range fsckCases {
		got := ""
		if err := FsckObject(tc.typ, tc.data, FsckOptions{}); err != nil {
			got = err.ID
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFsckNoGitmodules checks quire's own rule: with NoGitmodules, an
// entry git reads as .gitmodules is refused whatever it holds.
func TestFsckNoGitmodules(t *testing.T) {
	for _, name := range []string{".gitmodules", ".GITMODULES", "GITMOD~1", "gi7eba~1", ".gitmodules.", ".gitmodules::$DATA", ".g\u200citmodules"} {
		data := rawTree("100644 " + name)
		if err := FsckTree(data, FsckOptions{}); err != nil {
			t.Errorf("%q without NoGitmodules: %v", name, err)
		}
		err := FsckTree(data, FsckOptions{NoGitmodules: true})
		if err == nil || err.Entry != name || !strings.Contains(err.Error(), "quire keeps no submodules") {
			t.Errorf("%q with NoGitmodules: %v", name, err)
		}
	}
}

// TestFsckAgreesWithGit puts each case alone in a pack and has git
// index-pack --strict (what receive-pack runs with receive.fsckObjects)
// take it into a repository: git must refuse the case with the case's
// message id, and take a case quire accepts (or one quire is stricter
// about, with at most a warning). git fsck --strict then passes on what
// git took. Objects git itself wrote pass quire's checks.
func TestFsckAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	src, dst := t.TempDir(), t.TempDir()
	git := func(dir string, stdin []byte, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=A U Thor", "GIT_AUTHOR_EMAIL=author@example.com",
			"GIT_COMMITTER_NAME=C O Mitter", "GIT_COMMITTER_EMAIL=committer@example.com")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	must := func(dir string, stdin []byte, args ...string) string {
		t.Helper()
		out, err := git(dir, stdin, args...)
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	for _, dir := range []string{src, dst} {
		must(dir, nil, "init", "-q", "--bare")
		if id := must(dir, []byte("hi\n"), "hash-object", "-w", "--stdin"); id != fsckBlob {
			t.Fatalf("blob %s", id)
		}
		must(dir, nil, "mktree")
	}
	root := rawCommit("")
	for _, tc := range fsckCases {
		if tc.name == "commit root" {
			root = tc.data
		}
	}
	if id := must(dst, root, "hash-object", "-t", "commit", "-w", "--stdin"); id != fsckRoot {
		t.Fatalf("root commit %s", id)
	}
	msgID := regexp.MustCompile(`(?m)^(error|warning): object [0-9a-f]{40}: ([a-zA-Z0-9]+): `)
	for _, tc := range fsckCases {
		id := must(src, tc.data, "hash-object", "-t", tc.typ.String(), "--literally", "-w", "--stdin")
		cmd := exec.Command("git", "-C", src, "pack-objects", "-q", "--stdout")
		cmd.Stdin = strings.NewReader(id + "\n")
		pack, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: pack-objects: %v", tc.name, err)
		}
		// As receive-pack does: index the pack into a quarantine, and
		// move it in only when git took it.
		q := t.TempDir()
		cmd = exec.Command("git", "-C", dst, "index-pack", "--strict", "--stdin")
		cmd.Stdin = bytes.NewReader(pack)
		cmd.Env = append(os.Environ(), "GIT_OBJECT_DIRECTORY="+q, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(dst, "objects"))
		os.MkdirAll(filepath.Join(q, "pack"), 0o755)
		b, err := cmd.CombinedOutput()
		out := string(b)
		var errs, warns []string
		for _, m := range msgID.FindAllStringSubmatch(out, -1) {
			if m[1] == "error" {
				errs = append(errs, m[2])
			} else {
				warns = append(warns, m[2])
			}
		}
		// git refuses some objects it cannot parse before its fsck
		// rules run: quire's message id is then fsck_commit's or
		// fsck_tag's, what receive-pack says for it varies.
		unparsable := err != nil && len(errs) == 0 && regexp.MustCompile(`fatal: invalid (commit|tag)`).MatchString(out)
		switch {
		case (tc.want == "" || tc.stricter) && err != nil:
			t.Errorf("%s: git index-pack --strict refuses it (%v), quire wants %q:\n%s", tc.name, errs, tc.want, out)
		case tc.want != "" && !tc.stricter && !unparsable && (err == nil || !slices.Contains(errs, tc.want)):
			t.Errorf("%s: quire reports %s, git index-pack --strict %v (warnings %v):\n%s", tc.name, tc.want, errs, warns, out)
		}
		if err == nil {
			packs, _ := filepath.Glob(filepath.Join(q, "pack", "*"))
			for _, f := range packs {
				if err := os.Rename(f, filepath.Join(dst, "objects", "pack", filepath.Base(f))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if out, err := git(dst, nil, "fsck", "--strict"); err != nil {
		t.Errorf("git fsck --strict after the objects git took: %v\n%s", err, out)
	}

	// Objects git wrote: a tree with files and directories, commits, a tag.
	wt := t.TempDir()
	for i, p := range []string{"a.c", "a/x", "b/c/d", ".gitignore", "caf\u00e9", "z"} {
		full := filepath.Join(wt, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(fmt.Sprint(i)), 0o644)
	}
	must(src, nil, "--work-tree", wt, "add", "-A")
	treeID := must(src, nil, "write-tree")
	c1 := must(src, []byte("first\n"), "commit-tree", treeID)
	c2 := must(src, []byte("second\n\nbody\n"), "commit-tree", treeID, "-p", c1)
	tagID := must(src, []byte("object "+c2+"\ntype commit\ntag v1\ntagger T <t@example.com> 1700000000 +0000\n\nv1\n"), "mktag")
	for _, o := range []struct {
		typ plumbing.ObjectType
		id  string
	}{{tree, treeID}, {commit, c1}, {commit, c2}, {tag, tagID}} {
		data := gitObjectBytes(t, src, o.typ, o.id)
		if err := FsckObject(o.typ, data, FsckOptions{}); err != nil {
			t.Errorf("git's %s %s: %v\n%q", o.typ, o.id, err, data)
		}
	}
}

// gitObjectBytes reads an object's exact bytes with git cat-file.
func gitObjectBytes(t *testing.T, dir string, typ plumbing.ObjectType, id string) []byte {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "cat-file", typ.String(), id).Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFsckTreeRoundTrip checks what quire accepts against go-git: a tree
// FsckTree accepts decodes into entries that encode back to the same
// bytes (it is in git's canonical form).
func TestFsckTreeRoundTrip(t *testing.T) {
	for _, tc := range fsckCases {
		if tc.typ == tree && tc.want == "" {
			checkTreeRoundTrip(t, tc.data)
		}
	}
}

func checkTreeRoundTrip(t *testing.T, data []byte) {
	t.Helper()
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TreeObject)
	obj.Write(data)
	var tr object.Tree
	if err := tr.Decode(obj); err != nil {
		t.Fatalf("go-git cannot decode a tree fsck accepts: %v\n%q", err, data)
	}
	out := &plumbing.MemoryObject{}
	if err := tr.Encode(out); err != nil {
		t.Fatal(err)
	}
	rd, _ := out.Reader()
	var b bytes.Buffer
	b.ReadFrom(rd)
	if !bytes.Equal(b.Bytes(), data) {
		t.Fatalf("accepted tree is not canonical:\n%q\nre-encoded\n%q", data, b.Bytes())
	}
}
