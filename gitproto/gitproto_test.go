package gitproto

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/gitstore"
)

var tester = quire.Actor{Name: "Tess Ter", Email: "tess@example.com"}

// gitCLI runs the real git binary in dir and returns its trimmed output.
func gitCLI(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestPktLineRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	pw := newPktWriter(&buf)
	pw.line("want %s", strings.Repeat("a", 40))
	pw.enc.EncodeString("raw")
	pw.flush()
	if got := buf.String(); got != "0032want "+strings.Repeat("a", 40)+"\n0007raw0000" {
		t.Fatalf("encoded %q", got)
	}
	pr := newPktReader(&buf)
	line, flush, err := pr.readLine()
	if err != nil || flush || line != "want "+strings.Repeat("a", 40) {
		t.Fatalf("line %q flush %v err %v", line, flush, err)
	}
	if line, _, _ := pr.readLine(); line != "raw" {
		t.Fatalf("line %q", line)
	}
	if _, flush, _ := pr.readLine(); !flush {
		t.Fatal("want flush")
	}
	if _, _, err := pr.readLine(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
	for _, bad := range []string{"zzzz", "0003", "00", "0009abc"} {
		if _, _, err := newPktReader(strings.NewReader(bad)).readLine(); err == nil || err == io.EOF {
			t.Errorf("%q: want a pkt-line error, got %v", bad, err)
		}
	}
}

func TestSidebandFraming(t *testing.T) {
	var buf bytes.Buffer
	sb := newSideband(&buf, true, false)
	data := bytes.Repeat([]byte("x"), 65515+10) // one side-band-64k payload and more
	sb.Write(data)
	sb.progress("hello\n")
	sb.close()
	pr := newPktReader(&buf)
	var got []byte
	var bands []byte
	for {
		kind, b, err := pr.read()
		if err != nil {
			t.Fatal(err)
		}
		if kind == pktFlush {
			break
		}
		bands = append(bands, b[0])
		if b[0] == 1 { // the data band
			got = append(got, b[1:]...)
		}
	}
	if !bytes.Equal(got, data) || string(bands) != "\x01\x01\x02" {
		t.Fatalf("bands %v, %d data bytes", bands, len(got))
	}
}

var uploadRequests = []struct {
	name, body string
	wantErr    bool
	check      func(*uploadRequest) bool
}{
	{"nothing wanted", "0000", false, func(r *uploadRequest) bool { return len(r.wants) == 0 }},
	{"clone", pkts("want "+hexA+" multi_ack_detailed side-band-64k ofs-delta\n") + "0000" + pkts("done\n"), false,
		func(r *uploadRequest) bool {
			return r.done && len(r.wants) == 1 && r.caps["side-band-64k"] && r.caps["multi_ack_detailed"]
		}},
	{"round", pkts("want "+hexA+"\n") + "0000" + pkts("have "+hexB+"\n") + "0000", false,
		func(r *uploadRequest) bool { return !r.done && len(r.haves) == 1 && !r.wantsOnly }},
	{"deepen probe", pkts("want "+hexA+"\n", "shallow "+hexB+"\n", "deepen 1\n") + "0000", false,
		func(r *uploadRequest) bool { return r.wantsOnly && r.depth == 1 && len(r.shallows) == 1 }},
	{"filter is ignored", pkts("want "+hexA+" filter\n", "filter blob:none\n") + "0000" + pkts("done\n"), false,
		func(r *uploadRequest) bool { return r.done && r.refuse == "" }},
	{"deepen-since is refused in-protocol", pkts("want "+hexA+"\n", "deepen-since 1700000000\n") + "0000" + pkts("done\n"), false,
		func(r *uploadRequest) bool { return r.refuse != "" }},
	{"bad id", pkts("want xyz\n") + "0000", true, nil},
	{"unknown line", pkts("want "+hexA+"\n", "frobnicate\n") + "0000", true, nil},
	{"have before flush is an error", pkts("want "+hexA+"\n") + "0000" + pkts("nope "+hexB+"\n"), true, nil},
	{"not pkt-lines", "PACK....", true, nil},
}

const (
	hexA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	hexB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func pkts(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%04x%s", len(l)+4, l)
	}
	return b.String()
}

func TestParseUploadRequest(t *testing.T) {
	for _, tc := range uploadRequests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := parseUploadRequest(strings.NewReader(tc.body))
			if tc.wantErr {
				if quire.ErrorCode(err) != quire.EINVALID {
					t.Fatalf("want EINVALID, got %v", err)
				}
				return
			}
			if err != nil || !tc.check(req) {
				t.Fatalf("got %+v, %v", req, err)
			}
		})
	}
}

// pushEnv is a store with skill s, draft 1 at base, and its git service.
type pushEnv struct {
	s    *gitstore.Store
	g    *Server
	a    *quire.Asset
	dir  string // the skill's repository
	base plumbing.Hash
}

func newPushEnv(t testing.TB, opts gitstore.GitOptions) *pushEnv {
	t.Helper()
	ctx := context.Background()
	s, err := gitstore.Open(gitstore.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p := &quire.Project{Name: "P", Slug: "p"}
	if err := s.CreateProject(ctx, tester, p); err != nil {
		t.Fatal(err)
	}
	a := &quire.Asset{ProjectID: p.ID, Kind: quire.KindSkill, Name: "S", Slug: "s"}
	if err := s.CreateAsset(ctx, tester, a); err != nil {
		t.Fatal(err)
	}
	v, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, []quire.FileContent{{Path: "a.md", Content: []byte("a\n")}})
	if err != nil {
		t.Fatal(err)
	}
	opts.RepackPacks, opts.RepackLoose = 1<<20, 1<<30
	g := New(gitstore.NewGit(s, opts))
	t.Cleanup(func() { g.Close() })
	return &pushEnv{s: s, g: g, a: a, dir: s.RepoPath(a), base: plumbing.NewHash(v.Commit)}
}

// repo opens the skill's repository with go-git.
func (pe *pushEnv) repo(t testing.TB) *git.Repository {
	t.Helper()
	r, err := git.PlainOpen(pe.dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// commitPack returns a pack holding one new commit on top of parent (with
// parent's tree) and the commit's id.
func (pe *pushEnv) commitPack(t testing.TB, parent plumbing.Hash, msg string) ([]byte, plumbing.Hash) {
	t.Helper()
	pc, err := pe.repo(t).CommitObject(parent)
	if err != nil {
		t.Fatal(err)
	}
	sig := object.Signature{Name: "T", Email: "t@example.com", When: time.Unix(1700000000, 0).UTC()}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg + "\n", TreeHash: pc.TreeHash, ParentHashes: []plumbing.Hash{parent}}
	mem := memory.NewStorage()
	obj := mem.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := mem.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := packfile.NewEncoder(&buf, mem, false).Encode([]plumbing.Hash{h}, 0); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), h
}

// push sends one command and its pack, and returns the report.
func (pe *pushEnv) push(t *testing.T, old, new plumbing.Hash, ref string, pack []byte) string {
	t.Helper()
	body := pkts(fmt.Sprintf("%s %s %s\x00report-status\n", old, new, ref)) + "0000" + string(pack)
	var out bytes.Buffer
	if err := pe.g.ReceivePack(context.Background(), quire.GitPush{Asset: pe.a, By: tester, Hooks: draftRule{}}, strings.NewReader(body), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestReceivePackCompareAndSwap(t *testing.T) {
	pe := newPushEnv(t, gitstore.GitOptions{})
	const n = 8
	reports := make([]string, n)
	commits := make([]plumbing.Hash, n)
	packs := make([][]byte, n)
	for i := range n {
		packs[i], commits[i] = pe.commitPack(t, pe.base, fmt.Sprintf("racer %d", i))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = pe.push(t, pe.base, commits[i], "refs/heads/draft/1", packs[i])
		}()
	}
	// The API writes to the same draft meanwhile, without If-Match.
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := pe.s.PutFiles(context.Background(), tester, pe.a, 1, []quire.FileContent{{Path: "api.md", Content: []byte("api\n")}}, "", ""); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	won := -1
	for i, rep := range reports {
		switch {
		case strings.Contains(rep, "ok refs/heads/draft/1"):
			if won >= 0 {
				t.Fatalf("two pushes from the same base won: %d and %d", won, i)
			}
			won = i
		case strings.Contains(rep, "fetch and retry"):
		default:
			t.Fatalf("push %d: unexpected report %q", i, rep)
		}
	}
	v, err := pe.s.Version(context.Background(), pe.a, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Whichever order the lock gave, the draft holds the API's file, and
	// the winning push (if the API did not move the draft first) is in it.
	if files, _ := pe.s.Files(context.Background(), pe.a, 1); len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	if won >= 0 {
		if err := exec.Command("git", "-C", pe.dir, "merge-base", "--is-ancestor", commits[won].String(), v.Commit).Run(); err != nil {
			t.Fatalf("the winning push %s was lost (draft at %s): %v", commits[won], v.Commit, err)
		}
	}
	gitCLI(t, pe.dir, "fsck", "--strict")
}

func TestReceivePackStaleOld(t *testing.T) {
	pe := newPushEnv(t, gitstore.GitOptions{})
	v, err := pe.s.PutFiles(context.Background(), tester, pe.a, 1, []quire.FileContent{{Path: "b.md", Content: []byte("b\n")}}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	cur := plumbing.NewHash(v.Commit)
	pack, c := pe.commitPack(t, cur, "on top")
	rep := pe.push(t, pe.base, c, "refs/heads/draft/1", pack)
	want := fmt.Sprintf("ng refs/heads/draft/1 draft 1 is at %s, not %s: fetch and retry", cur.String()[:12], pe.base.String()[:12])
	if !strings.Contains(rep, want) {
		t.Fatalf("report %q, want %q", rep, want)
	}
	if rep := pe.push(t, cur, c, "refs/heads/draft/1", pack); !strings.Contains(rep, "ok refs/heads/draft/1") {
		t.Fatalf("report %q", rep)
	}
}

// rawPack builds a pack from raw entries (header and zlib data each).
func rawPack(entries ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(entries)))
	for _, e := range entries {
		b.Write(e)
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

func deflate(p []byte) []byte {
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(p)
	zw.Close()
	return b.Bytes()
}

func TestReceivePackRefusesBadPacks(t *testing.T) {
	pe := newPushEnv(t, gitstore.GitOptions{MaxPushBytes: 1 << 20})
	c, _ := pe.repo(t).CommitObject(pe.base)
	tree, _ := c.Tree()
	base := tree.Entries[0].Hash // a.md, on the server

	// A REF_DELTA against a server object: thin, which no-thin forbids.
	delta := []byte{2, 3, 0x83, 'x', 'y', 'z'} // source 2 bytes, target 3: insert "xyz"
	thin := append(entryHeader(plumbing.REFDeltaObject, int64(len(delta))), base[:]...)
	thin = append(thin, deflate(delta)...)
	newID := plumbing.NewHash(strings.Repeat("1", 40))
	rep := pe.push(t, pe.base, newID, "refs/heads/draft/1", rawPack(thin))
	if !strings.Contains(rep, "unpack thin packs are not accepted") || !strings.Contains(rep, "ng refs/heads/draft/1 unpacker error") {
		t.Fatalf("thin pack: report %q", rep)
	}

	// An object declaring more than quire will inflate.
	huge := make([]byte, max(pe.s.Limits().MaxFile, 16<<20)+1) // gitstore's maxPushObject
	blob := append(entryHeader(plumbing.BlobObject, int64(len(huge))), deflate(huge)...)
	rep = pe.push(t, pe.base, newID, "refs/heads/draft/1", rawPack(blob))
	if !strings.Contains(rep, "unpack the pack holds an object of") {
		t.Fatalf("huge object: report %q", rep)
	}

	// A pack over the push limit.
	big := bytes.Repeat([]byte{0}, 2<<20)
	rep = pe.push(t, pe.base, newID, "refs/heads/draft/1", big)
	if !strings.Contains(rep, "unpack the pack is larger than the push limit") {
		t.Fatalf("big pack: report %q", rep)
	}

	// Garbage.
	rep = pe.push(t, pe.base, newID, "refs/heads/draft/1", []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01garbage"))
	if !strings.Contains(rep, "unpack invalid pack") {
		t.Fatalf("garbage: report %q", rep)
	}
	if v, _ := pe.s.Version(context.Background(), pe.a, 1); v.Commit != pe.base.String() {
		t.Fatalf("draft moved to %s", v.Commit)
	}
	gitCLI(t, pe.dir, "fsck", "--strict")
}

// entryHeader is a pack entry's header: type and size.
func entryHeader(typ plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(typ)<<4 | byte(size&0x0f)}
	for size >>= 4; size > 0; size >>= 7 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
	}
	return b
}

func TestReceivePackMissingObjects(t *testing.T) {
	pe := newPushEnv(t, gitstore.GitOptions{})
	// A commit whose parent the server does not have.
	pack, c := pe.commitPack(t, pe.base, "x")
	_ = c
	orphan := plumbing.NewHash(strings.Repeat("2", 40))
	rep := pe.push(t, pe.base, orphan, "refs/heads/draft/1", pack)
	if !strings.Contains(rep, "ng refs/heads/draft/1 missing necessary objects") {
		t.Fatalf("report %q", rep)
	}
}

// TestUploadPackNegotiation checks the answers of stateless rounds.
func TestUploadPackNegotiation(t *testing.T) {
	pe := newPushEnv(t, gitstore.GitOptions{})
	ctx := context.Background()
	var commits []string
	for i := range 3 {
		v, err := pe.s.PutFiles(ctx, tester, pe.a, 1, []quire.FileContent{{Path: fmt.Sprintf("f%d.md", i), Content: []byte("x\n")}}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, v.Commit)
	}
	tip, mid := commits[2], commits[0]
	unknown := strings.Repeat("3", 40)
	ask := func(body string) string {
		var out bytes.Buffer
		if err := pe.g.UploadPack(ctx, pe.a, 0, strings.NewReader(body), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := pkts("want "+tip+" multi_ack_detailed no-done side-band-64k ofs-delta\n") + "0000"

	// A round with an unknown have: common ACKed, no ready, NAK, no pack.
	got := ask(want + pkts("have "+unknown+"\n", "have "+mid+"\n") + "0000")
	if got != pkts("ACK "+mid+" common\n", "NAK\n") {
		t.Fatalf("round 1: %q", got)
	}
	// Only commons: ready, NAK, then with no-done the final ACK and the pack.
	got = ask(want + pkts("have "+mid+"\n") + "0000")
	prefix := pkts("ACK "+mid+" common\n", "ACK "+mid+" ready\n", "NAK\n", "ACK "+mid+"\n")
	if !strings.HasPrefix(got, prefix) || !strings.Contains(got, "PACK") {
		t.Fatalf("round 2: %q", got)
	}
	// done with a common have: ACK common, ACK, then the pack of what is
	// new: 2 commits and 2 trees (their files' blob is the client's already).
	got = ask(want + pkts("have "+mid+"\n", "done\n"))
	if !strings.HasPrefix(got, pkts("ACK "+mid+" common\n", "ACK "+mid+"\n")) || !strings.Contains(got, "quire: 4 objects") {
		t.Fatalf("done: %q", got)
	}
	// Nothing in common: NAK then the whole pack.
	got = ask(want + pkts("have "+unknown+"\n", "done\n"))
	if !strings.HasPrefix(got, pkts("NAK\n")) || !strings.Contains(got, "PACK") {
		t.Fatalf("no common: %q", got)
	}
	// A want nobody advertises, such as the hidden version log.
	hidden := plumbing.NewHash(gitCLI(t, pe.dir, "rev-parse", "refs/quire/versions"))
	got = ask(pkts("want "+hidden.String()+" side-band-64k\n") + "0000" + pkts("done\n"))
	if got != pkts("ERR upload-pack: not our ref "+hidden.String()+"\n") {
		t.Fatalf("hidden want: %q", got)
	}
}

// draftRule are push hooks with app's draft rule alone: the protocol's
// tests push as app.Push would, without its events.
type draftRule struct{ admitAll }

func (draftRule) Admit(refs quire.DraftRefs, m quire.DraftMove) error {
	return app.AdmitDraftMove(refs, m)
}
