// Package gitcli makes commits with the git CLI's plumbing: the baseline
// that quire's own writes are measured against.
package gitcli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Upserter writes one file into a branch of a bare repository per call,
// the way a script around git would: the blob (hash-object -w), the new
// tree through a temporary index (read-tree, update-index --cacheinfo,
// write-tree), the commit (commit-tree) and a compare-and-swap of the
// branch (update-ref with the old value). Six processes per commit.
type Upserter struct {
	dir, ref, parent string
	env              []string
}

// NewUpserter prepares commits to ref of the bare repository dir; tmp
// holds its index file.
func NewUpserter(dir, ref, tmp string) (*Upserter, error) {
	u := &Upserter{dir: dir, ref: ref, env: append(os.Environ(),
		"GIT_INDEX_FILE="+filepath.Join(tmp, "index"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Tess Ter", "GIT_AUTHOR_EMAIL=tess@example.com",
		"GIT_COMMITTER_NAME=Tess Ter", "GIT_COMMITTER_EMAIL=tess@example.com")}
	parent, err := u.run("", "rev-parse", ref)
	if err != nil {
		return nil, err
	}
	u.parent = parent
	return u, nil
}

// Upsert commits content at path on top of the branch.
func (u *Upserter) Upsert(path string, content []byte) error {
	blob, err := u.run(string(content), "hash-object", "-w", "--stdin")
	if err != nil {
		return err
	}
	if _, err := u.run("", "read-tree", u.parent); err != nil {
		return err
	}
	if _, err := u.run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path); err != nil {
		return err
	}
	tree, err := u.run("", "write-tree")
	if err != nil {
		return err
	}
	commit, err := u.run("", "commit-tree", tree, "-p", u.parent, "-m", "Update "+path)
	if err != nil {
		return err
	}
	if _, err := u.run("", "update-ref", u.ref, commit, u.parent); err != nil {
		return err
	}
	u.parent = commit
	return nil
}

func (u *Upserter) run(stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", u.dir}, args...)...)
	cmd.Env = u.env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
