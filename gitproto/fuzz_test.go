package gitproto

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore"
)

// Fuzz targets for what a git client sends over smart HTTP. The seeds in
// testdata/fuzz/ include requests the real git client sent to quire
// (captured by httpapi's TestWriteGitFuzzSeeds); f.Add adds requests
// built from the fixture's own commits, so their ids match.

// FuzzUploadRequest parses any upload-pack request: never a panic, every
// refusal EINVALID (400 before any response is written), and what parses
// is a request upload-pack can act on.
func FuzzUploadRequest(f *testing.F) {
	for _, tc := range uploadRequests {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseUploadRequest(bytes.NewReader(body))
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID {
				t.Fatalf("%v is %s, want invalid", err, quire.ErrorCode(err))
			}
			return
		}
		if len(req.wants) == 0 && (req.done || len(req.haves) > 0 || req.wantsOnly) {
			t.Fatalf("haves or done without wants: %+v", req)
		}
		if req.wantsOnly && (req.done || len(req.haves) > 0) {
			t.Fatalf("a deepen probe with haves or done: %+v", req)
		}
		if req.depth < 0 {
			t.Fatalf("depth %d", req.depth)
		}
		if n := len(req.wants) + len(req.haves) + len(req.shallows); n > len(body)/45 {
			t.Fatalf("%d object ids from %d bytes", n, len(body))
		}
	})
}

// FuzzPushCommands parses any receive-pack command list: never a panic,
// every refusal EINVALID, at most maxPushCommands commands, each naming a
// ref.
func FuzzPushCommands(f *testing.F) {
	zero := plumbing.ZeroHash.String()
	f.Add([]byte(pkts(zero+" "+hexA+" refs/heads/draft/1\x00report-status side-band-64k atomic quiet agent=git/2.39.5\n") + "0000PACK"))
	f.Add([]byte(pkts(hexA+" "+hexB+" refs/heads/draft/1\n", hexA+" "+zero+" refs/tags/v1\n", "shallow "+hexB+"\n") + "0000"))
	f.Add([]byte(pkts(hexA+" "+hexB+"\n") + "0000"))
	f.Add([]byte(pkts(hexA+" "+hexB+" \n") + "0000"))
	f.Add([]byte(pkts(hexA + " " + hexB + " refs/heads/draft/1\x00\x00\n")))
	f.Add([]byte("0000"))
	f.Add([]byte(strings.Repeat(pkts(hexA+" "+hexB+" refs/heads/x\n"), 3) + "0000"))
	f.Fuzz(func(t *testing.T, body []byte) {
		cmds, caps, err := parseCommands(newPktReader(bytes.NewReader(body)))
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID {
				t.Fatalf("%v is %s, want invalid", err, quire.ErrorCode(err))
			}
			return
		}
		if caps == nil {
			t.Fatal("nil capabilities without an error")
		}
		if len(cmds) > maxPushCommands {
			t.Fatalf("%d commands", len(cmds))
		}
		for _, c := range cmds {
			if c.ref == "" || c.reason != "" || c.draft != 0 {
				t.Fatalf("command %+v", c)
			}
			classify(c)
			if c.reason == "" && (c.draft <= 0 || c.ref != fmt.Sprintf("refs/heads/draft/%d", c.draft)) {
				t.Fatalf("accepted %q as draft %d", c.ref, c.draft)
			}
		}
	})
}

// FuzzReceivePack sends any body as a push to a skill with draft 1:
// never a panic, never an internal error, no ref moves unless the report
// says "ok" for it, and nothing is left behind: no quarantine, no
// temporary file, no pack file from a push that was refused.
func FuzzReceivePack(f *testing.F) {
	pe := newPushEnv(f, gitstore.GitOptions{MaxPushBytes: 1 << 20})
	pack, c := pe.commitPack(f, pe.base, "fuzz seed")
	cmd := func(old, new plumbing.Hash, ref, caps string) string {
		return pkts(fmt.Sprintf("%s %s %s\x00%s\n", old, new, ref, caps)) + "0000"
	}
	caps := "report-status side-band-64k agent=git/2.39.5"
	f.Add([]byte(cmd(pe.base, c, "refs/heads/draft/1", caps) + string(pack)))
	f.Add([]byte(cmd(pe.base, c, "refs/heads/draft/1", "report-status atomic quiet") + string(pack[:len(pack)/2])))
	f.Add([]byte(cmd(pe.base, c, "refs/heads/draft/2", caps) + string(pack)))
	f.Add([]byte(cmd(pe.base, c, "refs/heads/main", caps) + string(pack)))
	f.Add([]byte(cmd(pe.base, plumbing.ZeroHash, "refs/heads/draft/1", caps)))
	f.Add([]byte(cmd(plumbing.ZeroHash, c, "refs/tags/v9", "report-status") + string(pack)))
	f.Add([]byte(cmd(c, c, "refs/heads/draft/1", "report-status") + "PACK\x00\x00\x00\x02\x00\x00\x00\x01garbage"))
	f.Add([]byte(cmd(pe.base, c, "refs/heads/draft/1", "report-status") + string(rawPack())))
	f.Add([]byte("0000"))
	f.Fuzz(func(t *testing.T, body []byte) {
		before := refFiles(t, pe.dir)
		packs := listDir(t, filepath.Join(pe.dir, "objects", "pack"))
		var out bytes.Buffer
		err := pe.g.ReceivePack(context.Background(), quire.GitPush{Asset: pe.a, By: tester, Hooks: draftRule{}}, bytes.NewReader(body), &out)
		if err != nil && quire.ErrorCode(err) != quire.EINVALID {
			t.Fatalf("%v is %s, want invalid", err, quire.ErrorCode(err))
		}
		accepted := strings.Contains(out.String(), "ok refs/heads/draft/1")
		after := refFiles(t, pe.dir)
		for name, v := range after {
			// An accepted push moves the draft, and records itself on the versions log.
			if before[name] != v && !(accepted && (name == "refs/heads/draft/1" || name == "refs/quire/versions")) {
				t.Fatalf("%s moved from %q to %q; report %q", name, before[name], v, out.String())
			}
		}
		if len(after) != len(before) {
			t.Fatalf("refs %v became %v", before, after)
		}
		if got := listDir(t, filepath.Join(pe.dir, "objects", "pack")); !accepted && got != packs {
			t.Fatalf("a refused push left pack files: %s, before %s", got, packs)
		}
		top := listDir(t, pe.dir)
		for _, leftover := range []string{"incoming-", "quire-obj-", "quire-ref-"} {
			if strings.Contains(top, leftover) {
				t.Fatalf("left behind in the repository: %s", top)
			}
		}
	})
}

// refFiles reads every loose ref, packed-refs and HEAD of a bare
// repository, by path.
func refFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	refs := map[string]string{}
	for _, name := range []string{"HEAD", "packed-refs"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			refs[name] = string(b)
		}
	}
	err := filepath.WalkDir(filepath.Join(dir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		refs[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// listDir names a directory's entries, sorted, one string.
func listDir(t testing.TB, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// FuzzUploadRequestV2 parses any protocol v2 request, and a fetch's
// arguments: never a panic, every refusal EINVALID, every filter either
// parsed or refused with a message for git.
func FuzzUploadRequestV2(f *testing.F) {
	pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
	h := strings.Repeat("a", 40)
	f.Add([]byte(pkt("command=ls-refs\n") + pkt("agent=git/2.39.5\n") + "0001" + pkt("peel\n") + pkt("ref-prefix refs/heads/\n") + "0000"))
	f.Add([]byte(pkt("command=fetch\n") + "0001" + pkt("want "+h+"\n") + pkt("filter blob:limit=1k\n") + pkt("deepen 1\n") + pkt("done\n") + "0000"))
	f.Add([]byte(pkt("command=fetch\n") + "0001" + pkt("want "+h+"\n") + pkt("filter tree:0\n") + pkt("have "+h+"\n") + "0000"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseV2Request(bytes.NewReader(body))
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID {
				t.Fatalf("%v is %s, want invalid", err, quire.ErrorCode(err))
			}
			return
		}
		fr, err := parseFetchV2(req.args)
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID {
				t.Fatalf("fetch: %v is %s, want invalid", err, quire.ErrorCode(err))
			}
			return
		}
		if len(fr.wants) == 0 || !fr.caps["side-band-64k"] {
			t.Fatalf("fetch parsed without a want or side-band: %+v", fr)
		}
		if fr.filter != nil && (fr.refuse != "" || fr.filter.kind == 0) {
			t.Fatalf("filter %+v with refusal %q", fr.filter, fr.refuse)
		}
	})
}
