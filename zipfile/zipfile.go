// Package zipfile turns version content into zip archives and back, with
// archive/zip, under quire's path and size rules: an upload can neither
// escape the version (zip slip) nor expand past the limits (zip bomb).
package zipfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// Read unpacks a zip archive into files. A single top-level folder that
// holds every entry is stripped, so a zip of "my-skill/..." imports as the
// folder's content. Directories are skipped; symlinks and other special
// entries are refused.
func Read(data []byte, l quire.Limits) ([]quire.FileContent, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, quire.Errorf(quire.EINVALID, "not a valid zip archive")
	}
	var entries []*zip.File
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasSuffix(f.Name, "/") {
			continue
		}
		if !f.Mode().IsRegular() {
			return nil, quire.Errorf(quire.EINVALID, "zip entry %q is not a regular file", f.Name)
		}
		entries = append(entries, f)
	}
	// The headers' count, checked before anything is inflated.
	if err := valid.Totals(len(entries), 0, l); err != nil {
		return nil, err
	}
	strip := commonFolder(entries)
	var total int64
	out := make([]quire.FileContent, 0, len(entries))
	for _, f := range entries {
		// The whole name obeys the path rules, the stripped folder too: a
		// lone top folder named .git must not vanish into a strip.
		if err := valid.FilePath(f.Name); err != nil {
			return nil, quire.Errorf(quire.EINVALID, "zip entry %q: %s", f.Name, quire.ErrorMessage(err))
		}
		name := strings.TrimPrefix(f.Name, strip)
		if f.UncompressedSize64 > uint64(l.MaxFile) {
			return nil, quire.Errorf(quire.ETOOLARGE, "zip entry %q is larger than %d bytes", f.Name, l.MaxFile)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, quire.Errorf(quire.EINVALID, "zip entry %q cannot be read", f.Name)
		}
		// The header's size may lie: read at most one byte past the limit.
		b, err := io.ReadAll(io.LimitReader(rc, l.MaxFile+1))
		rc.Close()
		if err != nil {
			if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) {
				return nil, quire.Errorf(quire.EINVALID, "zip entry %q is corrupt", f.Name)
			}
			return nil, quire.Errorf(quire.EINVALID, "zip entry %q cannot be read", f.Name)
		}
		if int64(len(b)) > l.MaxFile {
			return nil, quire.Errorf(quire.ETOOLARGE, "zip entry %q is larger than %d bytes", f.Name, l.MaxFile)
		}
		// Stop inflating once the version is too large.
		if total += int64(len(b)); total > l.MaxVersionBytes {
			return nil, valid.Totals(0, total, l)
		}
		// An entry made executable on a Unix system stays executable;
		// any other is a regular file (an archive made elsewhere says
		// nothing of modes).
		mode := quire.ModeRegular
		if f.Mode()&0o100 != 0 {
			mode = quire.ModeExecutable
		}
		out = append(out, quire.FileContent{Path: name, Content: b, Mode: mode})
	}
	// The version's rules, as the API and a push apply them: names that a
	// checkout on macOS or Windows would merge are refused, not one of
	// them dropped.
	if err := valid.Tree(valid.Files(out), l); err != nil {
		return nil, err
	}
	return out, nil
}

// commonFolder returns "dir/" when every entry lies under one folder.
func commonFolder(entries []*zip.File) string {
	if len(entries) == 0 {
		return ""
	}
	dir, _, ok := strings.Cut(entries[0].Name, "/")
	if !ok || dir == "" || dir == "." || dir == ".." {
		return ""
	}
	for _, f := range entries[1:] {
		if !strings.HasPrefix(f.Name, dir+"/") {
			return ""
		}
	}
	return dir + "/"
}

// Write writes files as a zip archive under folder (no folder when "").
func Write(w io.Writer, folder string, files map[string][]byte) error {
	zw := zip.NewWriter(w)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		name := p
		if folder != "" {
			name = folder + "/" + p
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			return err
		}
		if _, err := fw.Write(files[p]); err != nil {
			return err
		}
	}
	return zw.Close()
}
