package crashtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// git runs the git binary in dir.
func git(dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git -C %s %s: %v\n%s", dir, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// diskReport is what a look at the data root found besides errors.
type diskReport struct {
	repos     int
	refLocks  []string // *.lock files left under refs/ or packed-refs.lock
	staged    []string // quire-ref-* files of ref writes a death interrupted
	initDirs  []string // .init-* leftovers of interrupted repository creation
	trashDirs []string // .trash-* leftovers of interrupted deletion
}

// findRepos lists every bare repository under root: directories named
// *.git holding a HEAD file. Hidden directories (.init-*, .trash-*) are
// leftovers, not repositories, and are reported separately.
func findRepos(root string, rep *diskReport) ([]string, error) {
	var repos []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == root {
			return nil
		}
		name := d.Name()
		switch {
		case strings.HasPrefix(name, ".init-"):
			rep.initDirs = append(rep.initDirs, p)
			return fs.SkipDir
		case strings.HasPrefix(name, ".trash-"):
			rep.trashDirs = append(rep.trashDirs, p)
			return fs.SkipDir
		case strings.HasSuffix(name, ".git"):
			if _, err := os.Stat(filepath.Join(p, "HEAD")); err == nil {
				repos = append(repos, p)
			}
			return fs.SkipDir
		}
		return nil
	})
	return repos, err
}

// checkDisk checks every repository under root: git fsck --strict is
// clean, every ref resolves to an object that exists, HEAD is main.
func checkDisk(root string) (*diskReport, error) {
	rep := &diskReport{}
	repos, err := findRepos(root, rep)
	if err != nil {
		return rep, err
	}
	rep.repos = len(repos)
	var errs []string
	for _, r := range repos {
		if err := checkRepo(r, rep); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return rep, fmt.Errorf("%d of %d repositories are damaged:\n%s", len(errs), len(repos), strings.Join(errs, "\n"))
	}
	return rep, nil
}

func checkRepo(repo string, rep *diskReport) error {
	if out, err := exec.Command("git", "-C", repo, "fsck", "--strict", "--no-dangling", "--no-progress").CombinedOutput(); err != nil {
		return fmt.Errorf("%s: git fsck --strict: %v\n%s", repo, err, out)
	} else if bytes.Contains(out, []byte("error")) || bytes.Contains(out, []byte("broken")) {
		return fmt.Errorf("%s: git fsck --strict reports:\n%s", repo, out)
	}
	head, err := os.ReadFile(filepath.Join(repo, "HEAD"))
	if err != nil || strings.TrimSpace(string(head)) != "ref: refs/heads/main" {
		return fmt.Errorf("%s: HEAD is %q (%v), want ref: refs/heads/main", repo, head, err)
	}
	// Every ref names an object that exists. for-each-ref warns on stderr
	// about refs it cannot read; treat that as damage too.
	cmd := exec.Command("git", "-C", repo, "for-each-ref", "--format=%(objectname) %(refname)")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		return fmt.Errorf("%s: git for-each-ref: %v\n%s", repo, err, stderr.Bytes())
	}
	var ids bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, _, ok := strings.Cut(line, " "); ok {
			ids.WriteString(id + "\n")
		}
	}
	if ids.Len() > 0 {
		check, err := git(repo, ids.Bytes(), "cat-file", "--batch-check")
		if err != nil {
			return err
		}
		if bytes.Contains(check, []byte("missing")) {
			return fmt.Errorf("%s: a ref points at a missing object:\n%s\nrefs:\n%s", repo, check, out)
		}
	}
	return filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		if !d.IsDir() && strings.HasSuffix(p, ".lock") && (strings.HasPrefix(rel, "refs"+string(filepath.Separator)) || rel == "packed-refs.lock") {
			rep.refLocks = append(rep.refLocks, p)
		}
		if !d.IsDir() && filepath.Dir(rel) == "." && strings.HasPrefix(d.Name(), "quire-ref-") {
			rep.staged = append(rep.staged, p)
		}
		if d.IsDir() && rel == "objects" {
			return fs.SkipDir
		}
		return nil
	})
}

// gitRef is one ref: the object it names and, for a tag, the commit.
type gitRef struct {
	object string
	commit string
}

// gitView is what git itself says about one repository.
type gitView struct {
	path    string
	refs    map[string]gitRef
	parents map[string][]string // commit -> parents, for every reachable commit
}

func readGitView(repo string) (*gitView, error) {
	v := &gitView{path: repo, refs: map[string]gitRef{}, parents: map[string][]string{}}
	out, err := git(repo, nil, "for-each-ref", "--format=%(refname) %(objectname) %(objecttype) %(*objectname)")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		r := gitRef{object: f[1], commit: f[1]}
		if f[2] == "tag" && len(f) > 3 {
			r.commit = f[3]
		}
		v.refs[f[0]] = r
	}
	if len(v.refs) == 0 {
		return v, nil
	}
	out, err = git(repo, nil, "rev-list", "--all", "--parents")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			v.parents[f[0]] = f[1:]
		}
	}
	return v, nil
}

// version returns the state and commit of version n as its refs say.
func (v *gitView) version(n int) (state, commit string) {
	s := strconv.Itoa(n)
	if r, ok := v.refs["refs/tags/archive/v"+s]; ok {
		return "archived", r.commit
	}
	if r, ok := v.refs["refs/tags/v"+s]; ok {
		return "published", r.commit
	}
	if r, ok := v.refs["refs/heads/draft/"+s]; ok {
		return "draft", r.commit
	}
	return "", ""
}

// chain returns the first-parent history of commit, newest first.
func (v *gitView) chain(commit string) []string {
	var out []string
	for c := commit; c != ""; {
		out = append(out, c)
		ps := v.parents[c]
		c = ""
		if len(ps) > 0 {
			c = ps[0]
		}
	}
	return out
}

// catFiles reads "<rev>:<path>" specs with git cat-file --batch. A spec
// that names nothing maps to nil.
func catFiles(repo string, specs []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(specs) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	for _, s := range specs {
		in.WriteString(s + "\n")
	}
	raw, err := git(repo, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	rd := bufio.NewReader(bytes.NewReader(raw))
	for _, s := range specs {
		header, err := rd.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("cat-file --batch: short output at %q", s)
		}
		f := strings.Fields(header)
		if len(f) == 2 && f[1] == "missing" || len(f) != 3 {
			out[s] = nil
			continue
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("cat-file --batch: bad header %q", header)
		}
		b := make([]byte, size+1)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		if f[1] == "blob" {
			out[s] = b[:size]
		} else {
			out[s] = nil
		}
	}
	return out, nil
}
