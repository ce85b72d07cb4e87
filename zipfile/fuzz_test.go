package zipfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// fuzzLimits are small so the fuzzer reaches every limit.
var fuzzLimits = quire.Limits{MaxFile: 4 << 10, MaxVersionFiles: 8, MaxVersionBytes: 16 << 10, MaxBody: 1 << 20, MaxName: 200}

// entry is one member of a seed archive.
type entry struct {
	name    string
	content string
	mode    fs.FileMode
	method  uint16
}

func makeZip(t testing.TB, entries ...entry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: e.method}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// seedZips are archives a hostile or careless upload may hold.
func seedZips(t testing.TB) [][]byte {
	bomb := strings.Repeat("0", 1<<20)
	return [][]byte{
		makeZip(t, entry{name: "SKILL.md", content: "---\nname: x\ndescription: y\n---\n"}, entry{name: "scripts/run.py", content: "print(1)\n"}),
		makeZip(t, entry{name: "my-skill/SKILL.md", content: "a"}, entry{name: "my-skill/", mode: fs.ModeDir | 0o755}, entry{name: "my-skill/a/b.txt", content: "b"}),
		makeZip(t, entry{name: "../../etc/passwd", content: "root"}),
		makeZip(t, entry{name: "dir/../../escape", content: "x"}),
		makeZip(t, entry{name: "/abs/path", content: "x"}),
		makeZip(t, entry{name: "a\\..\\..\\win", content: "x"}),
		makeZip(t, entry{name: ".git/config", content: "[core]"}, entry{name: "x/.GIT/hooks/post-checkout", content: "#!/bin/sh"}),
		makeZip(t, entry{name: "git~1/config", content: "x"}, entry{name: ".gitmodules", content: "[submodule]"}),
		makeZip(t, entry{name: "link", content: "/etc/passwd", mode: fs.ModeSymlink | 0o777}),
		makeZip(t, entry{name: "bomb.txt", content: bomb, method: zip.Deflate}),
		makeZip(t, entry{name: "a", content: "1"}, entry{name: "a", content: "2"}),
		makeZip(t, entry{name: "a", content: "1"}, entry{name: "a/b", content: "2"}),
		makeZip(t, entry{name: "README.md", content: "1"}, entry{name: "readme.md", content: "2"}),
		makeZip(t, entry{name: "s/Docs/a.md", content: "1"}, entry{name: "s/docs/b.md", content: "2"}),
		makeZip(t, entry{name: "caf\u00e9.md", content: "1"}, entry{name: "cafe\u0301.md", content: "2"}),
		makeZip(t, entry{name: "evil\u202etxt.exe", content: "1"}),
		makeZip(t, entry{name: "top/", mode: fs.ModeDir | 0o755}),
		makeZip(t, entry{name: "nul\x00byte", content: "x"}, entry{name: "\xff\xfe", content: "y"}),
		makeZip(t, entry{name: "f1"}, entry{name: "f2"}, entry{name: "f3"}, entry{name: "f4"}, entry{name: "f5"},
			entry{name: "f6"}, entry{name: "f7"}, entry{name: "f8"}, entry{name: "f9"}),
		makeZip(t, entry{name: "big1", content: bomb[:3000], method: zip.Deflate}, entry{name: "big2", content: bomb[:3000], method: zip.Deflate},
			entry{name: "big3", content: bomb[:3000], method: zip.Deflate}, entry{name: "big4", content: bomb[:3000], method: zip.Deflate},
			entry{name: "big5", content: bomb[:3000], method: zip.Deflate}, entry{name: "big6", content: bomb[:3000], method: zip.Deflate}),
		{},
		[]byte("PK\x05\x06" + strings.Repeat("\x00", 18)),
		[]byte("not a zip"),
	}
}

func FuzzRead(f *testing.F) {
	for _, z := range seedZips(f) {
		f.Add(z)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := Read(data, fuzzLimits)
		if err != nil {
			var qe *quire.Error
			if !errors.As(err, &qe) || qe.Code != quire.EINVALID && qe.Code != quire.ETOOLARGE && qe.Code != quire.ECONFLICT {
				t.Fatalf("error %#v is not EINVALID, ETOOLARGE or ECONFLICT", err)
			}
			return
		}
		if len(files) > fuzzLimits.MaxVersionFiles {
			t.Fatalf("%d files; the limit is %d", len(files), fuzzLimits.MaxVersionFiles)
		}
		var total int64
		seen := map[string]bool{}
		unique := true
		for _, f := range files {
			if err := valid.FilePath(f.Path); err != nil {
				t.Fatalf("returned path %q: %v", f.Path, err)
			}
			if int64(len(f.Content)) > fuzzLimits.MaxFile {
				t.Fatalf("%s: %d bytes; the limit is %d", f.Path, len(f.Content), fuzzLimits.MaxFile)
			}
			total += int64(len(f.Content))
			unique = unique && !seen[f.Path]
			seen[f.Path] = true
		}
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = f.Path
		}
		if err := valid.Paths(paths); err != nil {
			t.Fatalf("returned paths that collide: %v", err)
		}
		if total > fuzzLimits.MaxVersionBytes {
			t.Fatalf("%d bytes in all; the limit is %d", total, fuzzLimits.MaxVersionBytes)
		}
		if !unique || len(files) == 0 {
			return
		}
		// What was read writes back (under a folder, as downloads are) and
		// reads again the same.
		m := map[string][]byte{}
		for _, f := range files {
			m[f.Path] = f.Content
		}
		var buf bytes.Buffer
		if err := Write(&buf, "skill", m); err != nil {
			t.Fatal(err)
		}
		again, err := Read(buf.Bytes(), fuzzLimits)
		if err != nil {
			t.Fatalf("reading what Write wrote: %v", err)
		}
		if len(again) != len(files) {
			t.Fatalf("round trip: %d files, then %d", len(files), len(again))
		}
		for _, f := range again {
			if !bytes.Equal(m[f.Path], f.Content) {
				t.Fatalf("round trip changed %s", f.Path)
			}
		}
	})
}
