package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/quire/quire/client"
	"github.com/quire/quire/skillpack"
	"github.com/spf13/cobra"
)

// quire push and quire diff of a folder: the folder against a version's
// files, compared by git blob id (what the API lists), so no file is
// downloaded to find what changed.

// Changes is what a folder changes against a version.
type Changes struct {
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Deleted []string `json:"deleted"`
}

func (c Changes) empty() bool { return len(c.Added)+len(c.Changed)+len(c.Deleted) == 0 }

func (c Changes) summary() string {
	return fmt.Sprintf("%d added, %d changed, %d deleted", len(c.Added), len(c.Changed), len(c.Deleted))
}

func (c Changes) list(w io.Writer) {
	for _, s := range []struct {
		mark  string
		paths []string
	}{{"A", c.Added}, {"M", c.Changed}, {"D", c.Deleted}} {
		for _, p := range s.paths {
			fmt.Fprintf(w, "  %s %s\n", s.mark, p)
		}
	}
}

// blobID is the git blob id of content, as the API lists a file's sha.
func blobID(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// compare lists what local changes against remote (path → blob id).
func compare(local []skillFile, remote map[string]string) Changes {
	ch := Changes{Added: []string{}, Changed: []string{}, Deleted: []string{}}
	seen := map[string]bool{}
	for _, f := range local {
		seen[f.Path] = true
		sha, ok := remote[f.Path]
		switch {
		case !ok:
			ch.Added = append(ch.Added, f.Path)
		case sha != blobID(f.Content):
			ch.Changed = append(ch.Changed, f.Path)
		}
	}
	for p := range remote {
		if !seen[p] {
			ch.Deleted = append(ch.Deleted, p)
		}
	}
	sort.Strings(ch.Added)
	sort.Strings(ch.Changed)
	sort.Strings(ch.Deleted)
	return ch
}

// remoteFiles lists version n's files by path → blob id.
func remoteFiles(ctx context.Context, sdk *client.Client, ref string, n int) (map[string]string, error) {
	out := map[string]string{}
	opts := client.ListOptions{Limit: 500}
	for {
		pg, err := sdk.Files(ctx, ref, n, opts)
		if err != nil {
			return nil, err
		}
		for _, f := range pg.Items {
			out[f.Path] = f.SHA
		}
		if opts.Cursor = pg.NextCursor; opts.Cursor == "" {
			return out, nil
		}
	}
}

// localSkill reads a skill folder and finds which skill it is: PROJECT/
// <folder name>, the project from --project or from the one lockfile
// entry of that slug.
func (e *env) localSkill(folder, project string) (ref string, files []skillFile, lock *LockedSkill, err error) {
	p := e.path(folder)
	ok, err := isDir(p)
	if err != nil {
		return "", nil, nil, err
	}
	if !ok {
		return "", nil, nil, fmt.Errorf("%s: no such folder", folder)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", nil, nil, err
	}
	slug := filepath.Base(abs)
	l, err := readLock(e.path(LockName))
	if err != nil {
		return "", nil, nil, err
	}
	if project == "" {
		var found []string
		for _, s := range l.Skills {
			if s.Slug == slug {
				found = append(found, s.Project)
			}
		}
		switch len(found) {
		case 1:
			project = found[0]
		case 0:
			return "", nil, nil, usagef("%s is not in %s: say which project it belongs to with --project", folder, LockName)
		default:
			return "", nil, nil, usagef("%s is in %s under %s: say which with --project", slug, LockName, strings.Join(found, " and "))
		}
	}
	if files, err = readFolder(p); err != nil {
		return "", nil, nil, err
	}
	if len(files) == 0 {
		return "", nil, nil, fmt.Errorf("%s holds no files", folder)
	}
	return project + "/" + slug, files, l.find(project, slug), nil
}

// zipFiles packs files for the push route.
func zipFiles(files []skillFile) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		// The executable bit found on disk goes with the file (the
		// server keeps it as git mode 100755).
		h := &zip.FileHeader{Name: f.Path, Method: zip.Deflate}
		h.SetMode(0o644)
		if f.Exec {
			h.SetMode(0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.Content); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Pushed is the answer of quire push.
type Pushed struct {
	Skill   string `json:"skill"`
	Draft   int    `json:"draft"`
	Commit  string `json:"commit"`
	Created bool   `json:"created"`
	Changes
}

func (e *env) pushCmd() *cobra.Command {
	var draft int
	var message, project string
	c := &cobra.Command{
		Use:   "push DIR/<slug>",
		Short: "Upload a skill folder as one commit on a draft",
		Long: `Upload the folder's files as one commit on draft --draft N, or on a new
draft opened from the live version: files added and changed, and the
draft's files the folder lacks deleted. The skill is PROJECT/<folder
name>, the project named by --project or by quire.lock. Prints the draft
number and what changed; nothing to change opens no draft.`,
		Example: "  quire push skills/pdf-tools -m \"Fill forms faster\"\n  quire push skills/pdf-tools --draft 4\n  quire push ./pdf-tools --project demo",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, a []string) error {
			ctx := c.Context()
			ref, files, _, err := e.localSkill(a[0], project)
			if err != nil {
				return err
			}
			sdk, err := e.client()
			if err != nil {
				return err
			}
			// What the folder changes against: the draft, or the live
			// version a new draft starts from (none: every file is new).
			created := draft == 0
			n, base, remote := draft, "", map[string]string{}
			if created {
				info, err := sdk.SkillArchiveInfo(ctx, ref, "live", skillpack.TarGz)
				if err == nil {
					remote, err = remoteFiles(ctx, sdk, ref, info.Version)
				}
				if err != nil && !client.IsNotFound(err) {
					return fail(err, "push %s", ref)
				}
			} else {
				v, err := sdk.SkillVersion(ctx, ref, draft)
				if err == nil && v.State != "draft" {
					return fmt.Errorf("%s version %d is %s, not a draft", ref, draft, v.State)
				}
				if err == nil {
					base = v.Commit
					remote, err = remoteFiles(ctx, sdk, ref, draft)
				}
				if err != nil {
					return fail(err, "push %s", ref)
				}
			}
			ch := compare(files, remote)
			out := Pushed{Skill: ref, Draft: n, Commit: base, Created: created, Changes: ch}
			if ch.empty() {
				return e.print(out, func(w io.Writer) {
					fmt.Fprintf(w, "nothing to push: %s holds what %s has\n", a[0], map[bool]string{true: "the live version", false: "draft " + strconv.Itoa(n)}[created])
				})
			}
			body, err := zipFiles(files)
			if err != nil {
				return err
			}
			// One request, one commit: a new draft holding the folder, or
			// the draft's content replaced if it is still at base.
			var v *client.SkillVersion
			if created {
				v, err = sdk.PushSkillVersion(ctx, ref, body, message)
			} else {
				v, err = sdk.ReplaceFiles(ctx, ref, n, body, message, base)
			}
			if err != nil {
				return fail(err, "push %s", ref)
			}
			n, out.Draft = v.Number, v.Number
			out.Commit = v.Commit
			return e.print(out, func(w io.Writer) {
				verb := "updated"
				if created {
					verb = "opened"
				}
				fmt.Fprintf(w, "draft %d of %s %s: %s\n", n, ref, verb, ch.summary())
				ch.list(w)
			})
		},
	}
	c.Flags().IntVar(&draft, "draft", 0, "the draft to commit on (default: open a new one from the live version)")
	c.Flags().StringVarP(&message, "message", "m", "", "the commit message")
	c.Flags().StringVar(&project, "project", "", "the skill's project (default: from quire.lock)")
	return c
}

func (e *env) diffCmd() *cobra.Command {
	var from, to, draft int
	var project string
	c := &cobra.Command{
		Use:   "diff DIR/<slug> | PROJECT/SLUG --from N --to M",
		Short: "Show what a folder changes, or how two versions differ",
		Long: `With a folder: what quire push would change, against the version
quire.lock pins (or --draft N, or the live version). With PROJECT/SLUG
(a skill or a prompt): the server's diff of two versions, with patches.`,
		Example: "  quire diff skills/pdf-tools\n  quire diff skills/pdf-tools --draft 4\n  quire diff demo/pdf-tools --from 2 --to 3",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, a []string) error {
			ctx := c.Context()
			sdk, err := e.client()
			if err != nil {
				return err
			}
			if ok, _ := isDir(e.path(a[0])); ok {
				ref, files, lock, err := e.localSkill(a[0], project)
				if err != nil {
					return err
				}
				n := draft
				if n == 0 && lock != nil {
					n = lock.Version
				}
				if n == 0 {
					info, err := sdk.SkillArchiveInfo(ctx, ref, "live", skillpack.TarGz)
					if err != nil {
						return fail(err, "diff %s", ref)
					}
					n = info.Version
				}
				remote, err := remoteFiles(ctx, sdk, ref, n)
				if err != nil {
					return fail(err, "diff %s", ref)
				}
				ch := compare(files, remote)
				return e.print(map[string]any{"skill": ref, "version": n, "added": ch.Added, "changed": ch.Changed, "deleted": ch.Deleted}, func(w io.Writer) {
					fmt.Fprintf(w, "%s against %s v%d: %s\n", a[0], ref, n, ch.summary())
					ch.list(w)
				})
			}
			if _, _, err := splitRef(a[0]); err != nil {
				return usagef("%s is neither a folder nor PROJECT/SLUG", a[0])
			}
			if from <= 0 || to <= 0 {
				return usagef("diff of PROJECT/SLUG needs --from N and --to M")
			}
			kind, err := kindOf(ctx, sdk, a[0])
			if err != nil {
				return err
			}
			diff := sdk.SkillDiff
			if kind == client.KindPrompt {
				diff = sdk.PromptDiff
			}
			d, err := diff(ctx, a[0], from, to)
			if err != nil {
				return fail(err, "diff %s", a[0])
			}
			return e.print(d, func(w io.Writer) {
				for _, f := range d.Files {
					fmt.Fprintf(w, "%s %s\n%s", strings.ToUpper(f.Status[:1]), f.Path, f.Patch)
					if f.Patch != "" && !strings.HasSuffix(f.Patch, "\n") {
						fmt.Fprintln(w)
					}
				}
				if len(d.Files) == 0 {
					fmt.Fprintf(w, "versions %d and %d are the same\n", from, to)
				}
			})
		},
	}
	c.Flags().IntVar(&from, "from", 0, "the older version (PROJECT/SLUG)")
	c.Flags().IntVar(&to, "to", 0, "the newer version (PROJECT/SLUG)")
	c.Flags().IntVar(&draft, "draft", 0, "compare the folder with this draft")
	c.Flags().StringVar(&project, "project", "", "the folder's project (default: from quire.lock)")
	return c
}
