package valid

import (
	"github.com/quire/quire"
)

// The rules on the content of a version, whichever door it comes through:
// a write of the API, a zip upload, a git push. Each door lists what it
// has as entries and asks File, Tree or Totals; none keeps a rule of its
// own.

// Mode is the git mode of a version entry.
type Mode uint32

// The git modes a tree entry may have.
const (
	ModeFile       Mode = 0o100644
	ModeExecutable Mode = 0o100755
	ModeDir        Mode = 0o040000
	ModeSymlink    Mode = 0o120000
	ModeSubmodule  Mode = 0o160000
)

// Entry is one path of a version: a file, or a directory (only where a
// door sees directories, as a push does).
type Entry struct {
	Path string
	Mode Mode
	Size int64
	// Content is the file's bytes, needed only where ContentChecked(Path)
	// is true: a door that must load content to have it (a push) loads
	// only those files.
	Content []byte
}

// File checks one entry: its path, that it is a regular file (or a
// directory), its size, and the content rules (FileContent). A path error
// names the path, as a list of many files needs.
func File(e Entry, l quire.Limits) error {
	if err := FilePath(e.Path); err != nil {
		return quire.Errorf(quire.EINVALID, "%s: %s", Display(e.Path), quire.ErrorMessage(err))
	}
	switch e.Mode {
	case ModeFile, ModeExecutable:
	case ModeDir:
		return nil
	case ModeSymlink:
		return quire.Errorf(quire.EINVALID, "%s: symbolic links are not allowed", e.Path)
	case ModeSubmodule:
		return quire.Errorf(quire.EINVALID, "%s: submodules are not allowed", e.Path)
	default:
		return quire.Errorf(quire.EINVALID, "%s: file mode %o is not allowed", e.Path, uint32(e.Mode))
	}
	if e.Size > l.MaxFile {
		return quire.Errorf(quire.ETOOLARGE, "file %s is %d bytes; the limit is %d", e.Path, e.Size, l.MaxFile)
	}
	return FileContent(e.Path, e.Content)
}

// Totals checks the number of files and bytes of a version.
func Totals(files int, bytes int64, l quire.Limits) error {
	if files > l.MaxVersionFiles {
		return quire.Errorf(quire.ETOOLARGE, "a version may hold at most %d files", l.MaxVersionFiles)
	}
	if bytes > l.MaxVersionBytes {
		return quire.Errorf(quire.ETOOLARGE, "a version may hold at most %d bytes", l.MaxVersionBytes)
	}
	return nil
}

// Tree checks a list of entries as one whole: each entry (File), no path
// given twice, no two paths colliding after folding (PathSet), and the
// totals within the limits. It serves a whole version (a zip upload) and
// the files of one write into a version, which must pass the same rules
// before the store compares them with the version's other files.
func Tree(entries []Entry, l quire.Limits) error {
	seen := make(map[string]bool, len(entries))
	set := NewPathSet(len(entries))
	files, bytes := 0, int64(0)
	for _, e := range entries {
		if err := File(e, l); err != nil {
			return err
		}
		if seen[e.Path] {
			return quire.Errorf(quire.EINVALID, "file %s is given twice", e.Path)
		}
		seen[e.Path] = true
		dir := e.Mode == ModeDir
		if err := set.Add(e.Path, dir); err != nil {
			return err
		}
		if !dir {
			files++
			bytes += e.Size
		}
	}
	return Totals(files, bytes, l)
}

// Files lists files written whole (by the API, or read from a zip) as the
// entries Tree checks.
func Files(files []quire.FileContent) []Entry {
	out := make([]Entry, len(files))
	for i, f := range files {
		out[i] = Entry{Path: f.Path, Mode: ModeFile, Size: int64(len(f.Content)), Content: f.Content}
	}
	return out
}
