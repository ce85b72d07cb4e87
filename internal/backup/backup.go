// Package backup takes a consistent copy of a quire data root while
// servers run on it (quire backup), and restores one into a new data root
// (quire restore). A file copy of a live data root can miss objects: a
// repack may remove loose objects and packs between the listing and the
// copy. Here each repository is copied under its write lock (the flock
// every quire process takes before changing refs or removing objects),
// and each project's event log under its own, so every write acknowledged
// before the backup began is in it.
//
// The archive is a gzip-compressed tar holding the data root's files and
// a MANIFEST.json, written last, with each file's size and SHA-256; a
// restore checks every file against it before the new data root appears.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quire/quire/filelock"
)

// Format names the archive layout in the manifest.
const Format = "quire-backup/1"

// ManifestName is the archive's last entry.
const ManifestName = "MANIFEST.json"

// Lock files of the stores (gitstore, eventlog): taken, never copied.
const (
	repoLock   = "quire.lock"
	eventsLock = "events.lock"
	eventsLog  = "events.jsonl"
)

// Manifest describes an archive: what it holds and each file's digest.
type Manifest struct {
	Format       string    `json:"format"`
	CreatedAt    time.Time `json:"created_at"`
	Repositories int       `json:"repositories"`
	Dirs         []string  `json:"dirs"`
	Files        []File    `json:"files"`
}

// File is one file of the archive, by its path relative to the data root.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// writer adds the data root's files to the archive.
type writer struct {
	root     string
	tw       *tar.Writer
	m        *Manifest
	locks    *filelock.Locker
	progress io.Writer
}

// Backup writes an archive of the data root at data to the file to,
// printing progress to progress. The file appears only once complete.
func Backup(ctx context.Context, data, to string, progress io.Writer) (*Manifest, error) {
	root, err := filepath.Abs(data)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "_system.git")); err != nil {
		return nil, fmt.Errorf("%s is not a quire data root (no _system.git): %w", data, err)
	}
	tmp := to + ".partial"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp) // gone once renamed
	zw := gzip.NewWriter(f)
	w := &writer{root: root, tw: tar.NewWriter(zw), locks: filelock.New(), progress: progress,
		m: &Manifest{Format: Format, CreatedAt: time.Now().UTC()}}
	if err := w.all(ctx); err != nil {
		f.Close()
		return nil, err
	}
	body, err := json.MarshalIndent(w.m, "", " ")
	if err != nil {
		f.Close()
		return nil, err
	}
	err = w.tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(body)), ModTime: w.m.CreatedAt})
	if err == nil {
		_, err = w.tw.Write(body)
	}
	for _, c := range []io.Closer{w.tw, zw} {
		if err == nil {
			err = c.Close()
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, to)
	}
	if err != nil {
		return nil, fmt.Errorf("write backup %s: %w", to, err)
	}
	fmt.Fprintf(progress, "quire backup: %d repositories, %d files written to %s\n", w.m.Repositories, len(w.m.Files), to)
	return w.m, nil
}

// all copies the system repository first, then lists and copies every
// other repository, each under its lock, each project's event log under
// its lock, and every other file as it is. The order matters: an asset's
// repository is made before its record is written to the system
// repository, so every asset the copied system repository records was
// there to be listed after it.
func (w *writer) all(ctx context.Context) error {
	system := filepath.Join(w.root, "_system.git")
	n, err := w.locked(filepath.Join(system, repoLock), system, true)
	if err != nil {
		return err
	}
	w.m.Repositories++
	fmt.Fprintf(w.progress, "quire backup: system repository (%d files)\n", n)
	var repos, eventDirs, rest []string
	err = filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == w.root {
			return nil
		}
		if p == system {
			return fs.SkipDir // copied first
		}
		name := d.Name()
		switch {
		case d.IsDir() && strings.HasSuffix(name, ".git"):
			repos = append(repos, p)
			return fs.SkipDir
		case d.IsDir() && w.hasFile(p, eventsLog):
			eventDirs = append(eventDirs, p)
			return fs.SkipDir
		case d.IsDir():
			w.dir(p)
		case d.Type().IsRegular() && !strings.HasSuffix(name, ".lock"):
			rest = append(rest, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, r := range repos {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := w.locked(filepath.Join(r, repoLock), r, true)
		if err != nil {
			return err
		}
		w.m.Repositories++
		fmt.Fprintf(w.progress, "quire backup: repository %d/%d %s (%d files)\n", i+1, len(repos), w.rel(r), n)
	}
	for _, d := range eventDirs {
		if _, err := w.locked(filepath.Join(d, eventsLock), d, false); err != nil {
			return err
		}
	}
	fmt.Fprintf(w.progress, "quire backup: event logs of %d projects\n", len(eventDirs))
	for _, p := range rest {
		if err := w.file(p); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) hasFile(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

func (w *writer) rel(p string) string {
	r, _ := filepath.Rel(w.root, p)
	return filepath.ToSlash(r)
}

// locked copies the tree at dir holding the lock at lockPath. In a
// repository, quarantines and retired packs are left out, and a pack is
// copied only with its index: a repack installing a new pack (which it
// does before it takes the lock) adds objects, never removes any.
func (w *writer) locked(lockPath, dir string, repo bool) (int, error) {
	unlock, err := w.locks.Lock(lockPath)
	if err != nil {
		return 0, err
	}
	defer unlock()
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a repack's temporary directory, gone
			}
			return err
		}
		name := d.Name()
		switch {
		case d.IsDir() && repo && (strings.HasPrefix(name, "incoming-") || name == "quire-retired"):
			return fs.SkipDir
		case d.IsDir():
			w.dir(p)
			return nil
		case !d.Type().IsRegular() || strings.HasSuffix(name, ".lock"):
			return nil
		case repo && (strings.HasSuffix(name, ".pack") || strings.HasSuffix(name, ".idx")):
			base := strings.TrimSuffix(strings.TrimSuffix(p, ".pack"), ".idx")
			if !w.hasFile(filepath.Dir(p), filepath.Base(base)+".pack") || !w.hasFile(filepath.Dir(p), filepath.Base(base)+".idx") {
				return nil
			}
		}
		n++
		return w.file(p)
	})
	return n, err
}

func (w *writer) dir(p string) {
	w.m.Dirs = append(w.m.Dirs, w.rel(p))
}

// file adds the file at p, as it is when opened (stores replace files by
// rename, so an open file keeps one version), with its digest.
func (w *writer) file(p string) error {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed since it was listed: not a locked store's file
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	name := w.rel(p)
	if err := w.tw.WriteHeader(&tar.Header{Name: name, Mode: int64(fi.Mode().Perm()), Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(w.tw, h), f, fi.Size()); err != nil {
		return fmt.Errorf("copy %s: %w", name, err)
	}
	w.m.Files = append(w.m.Files, File{Path: name, Size: fi.Size(), SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// ErrCorrupt is Restore's error for an archive that does not match its
// manifest, or cannot be read to the end.
var ErrCorrupt = errors.New("backup is corrupt")

// Restore unpacks the archive from into a new data root at data, which
// must not exist or be empty. Every file is checked against the
// manifest's size and digest, and every file the manifest lists must be
// there, before data appears: a corrupt archive leaves nothing behind.
func Restore(ctx context.Context, from, data string, progress io.Writer) (*Manifest, error) {
	if ents, err := os.ReadDir(data); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%s is not empty: restore into a new data root", data)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.Open(from)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	parent := filepath.Dir(filepath.Clean(data))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, ".quire-restore-")
	if err != nil {
		return nil, err
	}
	m, err := unpack(ctx, f, tmp, progress)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("restore from %s: %w", from, err)
	}
	os.Remove(data) // empty, if there
	if err := os.Rename(tmp, data); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	fmt.Fprintf(progress, "quire restore: %d repositories, %d files checked and restored into %s\n", m.Repositories, len(m.Files), data)
	return m, nil
}

// unpack extracts the archive into dir and checks it against its
// manifest.
func unpack(ctx context.Context, r io.Reader, dir string, progress io.Writer) (*Manifest, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, corrupt("not a gzip stream: %v", err)
	}
	tr := tar.NewReader(zr)
	got := map[string]File{}
	var m *Manifest
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, corrupt("%v", err)
		}
		if m != nil {
			return nil, corrupt("%s follows the manifest", hdr.Name)
		}
		name := hdr.Name
		if name != path.Clean(name) || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "\\") {
			return nil, corrupt("entry %q is not a clean relative path", name)
		}
		if name == ManifestName {
			body, err := io.ReadAll(io.LimitReader(tr, 256<<20))
			if err != nil {
				return nil, corrupt("manifest: %v", err)
			}
			m = &Manifest{}
			if err := json.Unmarshal(body, m); err != nil || m.Format != Format {
				return nil, corrupt("manifest unreadable or of another format (%v)", err)
			}
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, corrupt("entry %q is not a regular file", name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		out, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(out, h), tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, corrupt("%s: %v", name, err)
		}
		got[name] = File{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	}
	if m == nil {
		return nil, corrupt("no %s: the archive is truncated or not a quire backup", ManifestName)
	}
	for _, want := range m.Files {
		have, ok := got[want.Path]
		if !ok {
			return nil, corrupt("%s is missing", want.Path)
		}
		if have != want {
			return nil, corrupt("%s does not match its digest in the manifest", want.Path)
		}
		delete(got, want.Path)
	}
	if len(got) > 0 {
		extra := slices.Sorted(maps.Keys(got))
		return nil, corrupt("%s is not in the manifest", extra[0])
	}
	for _, d := range m.Dirs {
		if d != path.Clean(d) || strings.HasPrefix(d, "../") || path.IsAbs(d) {
			return nil, corrupt("directory %q is not a clean relative path", d)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(progress, "quire restore: %d files match the manifest\n", len(m.Files))
	return m, nil
}
