package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/quire/quire/skillpack"
)

// LockName is the lockfile quire pull and quire skills install keep in
// the working directory.
const LockName = "quire.lock"

// Lock is quire.lock: what each pulled skill was, pinned by version,
// commit and the Agent Skills skill-level digest (the value the
// discovery index shows), so a lockfile, an index and a folder compare by
// one value.
type Lock struct {
	Version int           `json:"version"`
	Skills  []LockedSkill `json:"skills"`
}

// LockedSkill is one skill of the lockfile, in one folder: a skill
// pulled into skills/ and installed into .claude/skills has an entry for
// each, as each folder is its own copy.
type LockedSkill struct {
	Project string `json:"project"`
	Slug    string `json:"slug"`
	// Dir is the folder the skill's own folder is in, as the command was
	// given it (slash-separated); an entry of an older quire has none
	// and stands for any folder until it is written again.
	Dir     string `json:"dir,omitempty"`
	Version int    `json:"version"`
	Commit  string `json:"commit"`
	Digest  string `json:"digest"`
}

// readLock reads the lockfile at p; none is an empty lock.
func readLock(p string) (*Lock, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: 1, Skills: []LockedSkill{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var l Lock
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%s is not a quire lockfile: %v", p, err)
	}
	if l.Version != 1 {
		return nil, fmt.Errorf("%s has version %d; this quire reads version 1", p, l.Version)
	}
	if l.Skills == nil {
		l.Skills = []LockedSkill{}
	}
	return &l, nil
}

// find is the entry of project/slug in folder dir ("" for any folder):
// the one recorded for dir, else an older entry recorded for none.
func (l *Lock) find(project, slug, dir string) *LockedSkill {
	var legacy *LockedSkill
	for i := range l.Skills {
		s := &l.Skills[i]
		if s.Project != project || s.Slug != slug {
			continue
		}
		if dir == "" || s.Dir == dir {
			return s
		}
		if s.Dir == "" && legacy == nil {
			legacy = s
		}
	}
	return legacy
}

func (l *Lock) put(s LockedSkill) {
	if old := l.find(s.Project, s.Slug, s.Dir); old != nil {
		*old = s
		return
	}
	l.Skills = append(l.Skills, s)
	sort.Slice(l.Skills, func(i, j int) bool {
		a, b := l.Skills[i], l.Skills[j]
		return a.Project < b.Project || a.Project == b.Project && (a.Slug < b.Slug || a.Slug == b.Slug && a.Dir < b.Dir)
	})
}

// lockDir is how the lockfile records folder dir.
func lockDir(dir string) string { return filepath.ToSlash(filepath.Clean(dir)) }

// write replaces the lockfile whole (a rename).
func (l *Lock) write(p string) error {
	b, _ := json.MarshalIndent(l, "", "  ")
	return writeFileAtomic(p, append(b, '\n'), 0o644)
}

func writeFileAtomic(p string, b []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// skillFile is one file of a skill folder or archive.
type skillFile struct {
	Path    string
	Content []byte
	Exec    bool
}

// digest is the skill-level digest of files (skillpack.SkillDigest).
func digest(files []skillFile) string {
	m := make([]skillpack.File, len(files))
	for i, f := range files {
		m[i] = skillpack.File{Path: f.Path, Digest: skillpack.Digest(f.Content)}
	}
	return skillpack.SkillDigest(m)
}

// readFolder reads every file under dir, by slash-separated path. Only
// regular files may be there: a symlink (which could point anywhere) or
// a device is an error naming it.
func readFolder(dir string) ([]skillFile, error) {
	var out []skillFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink: a skill folder holds regular files only", p)
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, skillFile{Path: rel, Content: b, Exec: info.Mode()&0o100 != 0})
		return nil
	})
	return out, err
}

// untar reads a skill archive (.tar.gz): regular files at local paths
// only.
func untar(b []byte) ([]skillFile, error) {
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	tr := tar.NewReader(gz)
	var out []skillFile
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(h.Name) || strings.Contains(h.Name, `\`) {
			return nil, fmt.Errorf("archive: entry %q is not a regular file at a relative path", h.Name)
		}
		c, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		out = append(out, skillFile{Path: h.Name, Content: c, Exec: h.Mode&0o100 != 0})
	}
}

// isDir reports whether p is a folder; absent is false, a file an error.
func isDir(p string) (bool, error) {
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !st.IsDir():
		return false, fmt.Errorf("%s is not a folder", p)
	}
	return true, nil
}

// installFolder writes files as dir/slug, whole: into a temporary folder
// beside it first, then renamed into place, so a failure leaves the old
// folder (or none) and never half of the new one.
func installFolder(dir, slug string, files []skillFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, ".quire-"+slug+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := os.WriteFile(p, f.Content, mode); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	target := filepath.Join(dir, slug)
	exists, err := isDir(target)
	if err != nil {
		return err
	}
	if !exists {
		return os.Rename(tmp, target)
	}
	old := tmp + ".old"
	if err := os.Rename(target, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Rename(old, target)
		return err
	}
	return os.RemoveAll(old)
}
