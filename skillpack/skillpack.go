// Package skillpack holds the one definition of a skill's published form:
// the deterministic archives (zip and tar.gz) of a version and the
// digests of the Agent Skills discovery index (per file, per skill over
// the sorted manifest, per archive). The server, the SDK and the CLI
// share it, so a lockfile, the index and a pulled folder agree on one
// value. It depends on the standard library and the root types only.
package skillpack

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"sort"

	"github.com/quire/quire"
)

// Format is an archive format.
type Format string

const (
	Zip   Format = "zip"
	TarGz Format = "tar.gz"
)

// ContentType is the media type the discovery RFC asks archives be
// served with.
func (f Format) ContentType() string {
	if f == Zip {
		return "application/zip"
	}
	return "application/gzip"
}

// Write writes snap as an archive of format f: the skill's files at the
// archive root (the RFC's archive structure, no wrapper folder), sorted
// by path, each stamped with the version's commit time and mode 0644 or
// 0755. The same snapshot always yields the same bytes (with one Go
// release: compress/flate's output is stable within a release).
func Write(w io.Writer, f Format, snap *quire.Snapshot) error {
	files := sorted(snap.Files)
	switch f {
	case Zip:
		return writeZip(w, snap, files)
	case TarGz:
		return writeTarGz(w, snap, files)
	}
	return quire.Errorf(quire.EINVALID, "archive format must be zip or tar.gz")
}

// Bytes is Write into memory.
func Bytes(f Format, snap *quire.Snapshot) ([]byte, error) {
	var buf bytes.Buffer
	if err := Write(&buf, f, snap); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sorted(files []quire.SnapshotFile) []quire.SnapshotFile {
	out := append([]quire.SnapshotFile(nil), files...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func mode(f quire.SnapshotFile) int64 {
	if f.Executable {
		return 0o755
	}
	return 0o644
}

func writeZip(w io.Writer, snap *quire.Snapshot, files []quire.SnapshotFile) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Path, Method: zip.Deflate, Modified: snap.Time.UTC()}
		h.SetMode(0o644)
		if f.Executable {
			h.SetMode(0o755)
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.Content); err != nil {
			return err
		}
	}
	return zw.Close()
}

func writeTarGz(w io.Writer, snap *quire.Snapshot, files []quire.SnapshotFile) error {
	// The gzip header keeps no name and no time of its own: the bytes
	// depend on the snapshot alone.
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.Path,
			Size:     int64(len(f.Content)),
			Mode:     mode(f),
			ModTime:  snap.Time.UTC().Truncate(1e9),
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.Content); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// Digest is "sha256:{hex}" of b: the RFC's per-file and archive digest.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ETag is the strong entity tag of an archive: the quoted Digest.
func ETag(b []byte) string { return `"` + Digest(b) + `"` }

// ReprDigest is the RFC 9530 Repr-Digest field value of b.
func ReprDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// File is one entry of a skill's manifest: a path and its "sha256:{hex}".
type File struct {
	Path   string `json:"path"`
	Digest string `json:"digest"`
}

// Files returns the manifest entries of snap, SKILL.md first (as the RFC
// recommends), the rest by path.
func Files(snap *quire.Snapshot) []File {
	out := make([]File, 0, len(snap.Files))
	for _, f := range sorted(snap.Files) {
		out = append(out, File{Path: f.Path, Digest: Digest(f.Content)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path == "SKILL.md" && out[j].Path != "SKILL.md" })
	return out
}

// SkillDigest is the RFC's skill-level digest: SHA-256 over the lines
// "{path}\x00{hex}\n" of every file, sorted by path in byte order, as
// "sha256:{hex}". Entries whose digest is not "sha256:{hex}" count with
// their digest as given.
func SkillDigest(files []File) string {
	s := append([]File(nil), files...)
	sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
	h := sha256.New()
	for _, f := range s {
		hexd := f.Digest
		if len(hexd) > 7 && hexd[:7] == "sha256:" {
			hexd = hexd[7:]
		}
		io.WriteString(h, f.Path)
		h.Write([]byte{0})
		io.WriteString(h, hexd)
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
