package skillpack_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/skillpack"
)

// The worked example of the Agent Skills Discovery RFC v0.2.0
// (Integrity and Verification, Skill-Level Digest).
func TestRFCWorkedExample(t *testing.T) {
	files := []skillpack.File{
		{Path: "scripts/run.sh", Digest: skillpack.Digest([]byte("#!/bin/sh\n"))},
		{Path: "SKILL.md", Digest: skillpack.Digest([]byte("# Hello\n"))},
	}
	checks := []struct{ got, want string }{
		{files[1].Digest, "sha256:90f8ec5669cd34183b9b0fdf8b94f5efb4c3672876330f4aa76088c2b4ad17be"},
		{files[0].Digest, "sha256:a8076d3d28d21e02012b20eaf7dbf75409a6277134439025f282e368e3305abf"},
		{skillpack.SkillDigest(files), "sha256:34f7a8c484e9991f3e71a309f31332d6335efc01f544105c4185a7c4ab12eb1e"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("digest %s, want %s", c.got, c.want)
		}
	}
}

func snapshot() *quire.Snapshot {
	return &quire.Snapshot{
		Version: 3, Commit: "abc", Time: time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600)),
		Files: []quire.SnapshotFile{
			{Path: "scripts/run.sh", Content: []byte("#!/bin/sh\n"), Executable: true},
			{Path: "SKILL.md", Content: []byte("# Hello\n")},
			{Path: "a/b.txt", Content: []byte("b")},
		},
	}
}

func TestArchivesDeterministic(t *testing.T) {
	for _, f := range []skillpack.Format{skillpack.Zip, skillpack.TarGz} {
		a, err := skillpack.Bytes(f, snapshot())
		if err != nil {
			t.Fatal(err)
		}
		s := snapshot()
		s.Files[0], s.Files[2] = s.Files[2], s.Files[0] // order of input does not matter
		b, err := skillpack.Bytes(f, s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two archives of one snapshot differ", f)
		}
	}
}

type entry struct {
	name string
	mode int64
	mod  time.Time
	body string
}

func TestArchiveEntries(t *testing.T) {
	want := []entry{
		{"SKILL.md", 0o644, snapshot().Time, "# Hello\n"},
		{"a/b.txt", 0o644, snapshot().Time, "b"},
		{"scripts/run.sh", 0o755, snapshot().Time, "#!/bin/sh\n"},
	}
	zb, _ := skillpack.Bytes(skillpack.Zip, snapshot())
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatal(err)
	}
	var got []entry
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		got = append(got, entry{f.Name, int64(f.Mode().Perm()), f.Modified, string(b)})
	}
	compare(t, "zip", got, want)

	tb, _ := skillpack.Bytes(skillpack.TarGz, snapshot())
	gz, err := gzip.NewReader(bytes.NewReader(tb))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	got = nil
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got = append(got, entry{h.Name, h.Mode, h.ModTime, string(b)})
	}
	compare(t, "tar.gz", got, want)
}

func compare(t *testing.T, what string, got, want []entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.name != w.name || g.mode != w.mode || !g.mod.Equal(w.mod) || g.body != w.body {
			t.Errorf("%s entry %d = %+v, want %+v", what, i, g, w)
		}
	}
}

func TestFilesSkillFirst(t *testing.T) {
	fs := skillpack.Files(snapshot())
	if fs[0].Path != "SKILL.md" || fs[1].Path != "a/b.txt" || fs[2].Path != "scripts/run.sh" {
		t.Errorf("files order %v", fs)
	}
}

func TestReprDigest(t *testing.T) {
	// sha-256 of the empty string (printf "" | sha256sum | xxd -r -p | base64).
	if got := skillpack.ReprDigest(nil); got != "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:" {
		t.Errorf("ReprDigest = %s", got)
	}
}
