package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/quire/quire/client"
	"github.com/quire/quire/skillpack"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

// Pulling skills into folders: quire pull and quire skills install. Both
// plan first (what is live, what the folder and the lockfile hold),
// refuse before writing anything, download and check every archive, and
// only then write each folder whole and the lockfile last.

// pullFlags are the options of a pull or an install.
type pullFlags struct {
	dir    string
	dirSet bool // --dir was given
	label  string
	skills []string
	force  bool
	frozen bool
}

// target is one skill a pull considers.
type target struct {
	project, slug string
	// version is what to fetch: "live", a label or a number.
	version string
	// named is set when the user named the skill: a missing live version
	// is then an error, not a skip.
	named bool
	lock  *LockedSkill // the lockfile's entry, if any
	// dir is the folder the skill's folder goes into, as given.
	dir string
	// existed says whether the skill's folder was there before.
	existed bool

	status string // installed, updated, unchanged, kept, skipped
	info   *client.ArchiveInfo
	files  []skillFile
	digest string
	local  string // the folder's digest ("" when absent)
}

// PulledSkill is one skill in the answer of pull and install.
type PulledSkill struct {
	Project string `json:"project"`
	Slug    string `json:"slug"`
	Version int    `json:"version,omitempty"`
	Commit  string `json:"commit,omitempty"`
	Digest  string `json:"digest,omitempty"`
	Path    string `json:"path"`
	// Status is installed, updated, unchanged, kept (local edits kept:
	// nothing changed on the server) or skipped (no such version).
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

func (e *env) pullCmd() *cobra.Command {
	var f pullFlags
	c := &cobra.Command{
		Use:   "pull [PROJECT]",
		Short: "Pull a project's skills into folders, with a lockfile",
		Long: `Write each skill's live version (or the one --label names) into DIR/<slug>/
and record it in quire.lock in the current directory: {"version": 1,
"skills": [{project, slug, version, commit, digest}]}, digest the Agent
Skills skill-level digest. Without PROJECT, the skills quire.lock lists
are brought up to date. Only what changed is downloaded; a folder whose
files differ from the lockfile's digest (local edits) is never
overwritten unless --force. --frozen installs exactly what quire.lock
pins, failing when an archive's digest differs from it.`,
		Example: "  quire pull demo\n  quire pull demo --dir .claude/skills --skill pdf-tools --skill xlsx\n  quire pull demo --label stable\n  quire pull --frozen",
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, a []string) error {
			project := ""
			if len(a) == 1 {
				project = a[0]
			}
			if f.frozen && f.label != "" {
				return usagef("--frozen installs what quire.lock pins: not with --label")
			}
			f.dirSet = c.Flags().Changed("dir")
			return e.pull(c.Context(), project, f)
		},
	}
	c.Flags().StringVar(&f.dir, "dir", "skills", "the folder the skills go into, one folder each")
	c.Flags().StringVar(&f.label, "label", "", "pull the version this label names instead of the live one")
	c.Flags().StringArrayVar(&f.skills, "skill", nil, "pull only this skill (repeatable)")
	c.Flags().BoolVar(&f.force, "force", false, "overwrite folders with local edits")
	c.Flags().BoolVar(&f.frozen, "frozen", false, "install exactly what quire.lock pins (CI); fail when a digest differs")
	return c
}

func (e *env) installCmd() *cobra.Command {
	var f pullFlags
	c := &cobra.Command{
		Use:   "install PROJECT/SKILL[@VERSION]",
		Short: "Install one skill into an agent's skills folder",
		Long: `Install a skill's live version (or VERSION: a number or a label) into
DIR/<slug>/ (default .claude/skills) and record it in quire.lock, as
quire pull does.`,
		Example: "  quire skills install demo/pdf-tools\n  quire skills install demo/pdf-tools@3 --to ~/.codex/skills",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, a []string) error {
			ref, version, _ := strings.Cut(a[0], "@")
			project, slug, err := splitRef(ref)
			if err != nil {
				return err
			}
			if version == "" {
				version = "live"
			}
			t := &target{project: project, slug: slug, version: version, named: true, dir: f.dir}
			return e.fetchSkills(c.Context(), []*target{t}, f)
		},
	}
	c.Flags().StringVar(&f.dir, "to", ".claude/skills", "the agent's skills folder")
	c.Flags().BoolVar(&f.force, "force", false, "overwrite a folder with local edits")
	return c
}

// splitRef reads PROJECT/SLUG.
func splitRef(ref string) (project, slug string, err error) {
	project, slug, ok := strings.Cut(ref, "/")
	if !ok || project == "" || slug == "" || strings.Contains(slug, "/") {
		return "", "", usagef("%q: name it PROJECT/SLUG", ref)
	}
	return project, slug, nil
}

// pull picks the targets: the project's skills, or the lockfile's.
func (e *env) pull(ctx context.Context, project string, f pullFlags) error {
	lock, err := readLock(e.path(LockName))
	if err != nil {
		return err
	}
	version := "live"
	if f.label != "" {
		version = f.label
	}
	want, missing := map[string]bool{}, map[string]bool{}
	for _, s := range f.skills {
		want[s], missing[s] = true, true
	}
	var targets []*target
	if project == "" || f.frozen {
		for _, s := range lock.Skills {
			if project != "" && s.Project != project || len(want) > 0 && !want[s.Slug] {
				continue
			}
			delete(missing, s.Slug)
			v := version
			if f.frozen {
				v = strconv.Itoa(s.Version)
			}
			dir := f.dir
			if s.Dir != "" && !f.dirSet {
				dir = s.Dir // each entry back where it was written
			}
			targets = append(targets, &target{project: s.Project, slug: s.Slug, version: v, named: true, dir: dir})
		}
		if len(targets) == 0 && len(missing) == 0 {
			return usagef("%s lists no skills to pull: name a PROJECT", LockName)
		}
	} else {
		sdk, err := e.client()
		if err != nil {
			return err
		}
		opts := client.ListOptions{Limit: 500}
		for {
			pg, err := sdk.ProjectSkills(ctx, project, opts)
			if err != nil {
				return fail(err, "list the skills of %s", project)
			}
			for _, s := range pg.Items {
				if len(want) > 0 && !want[s.Slug] {
					continue
				}
				named := want[s.Slug]
				delete(missing, s.Slug)
				targets = append(targets, &target{project: project, slug: s.Slug, version: version, named: named, dir: f.dir})
			}
			if opts.Cursor = pg.NextCursor; opts.Cursor == "" {
				break
			}
		}
	}
	for s := range missing {
		return fmt.Errorf("no skill %s to pull", s)
	}
	return e.fetchSkills(ctx, targets, f)
}

// fetchSkills plans, checks, downloads and writes targets into their
// folders.
func (e *env) fetchSkills(ctx context.Context, targets []*target, f pullFlags) error {
	for _, t := range targets {
		if _, err := isDir(e.path(t.dir)); err != nil {
			return err
		}
	}
	lockPath := e.path(LockName)
	lock, err := readLock(lockPath)
	if err != nil {
		return err
	}
	sdk, err := e.client()
	if err != nil {
		return err
	}
	seen := map[string]string{}
	for _, t := range targets {
		folder := filepath.Join(t.dir, t.slug)
		if p, dup := seen[folder]; dup {
			return fmt.Errorf("%s/%s and %s/%s would both go into %s", p, t.slug, t.project, t.slug, folder)
		}
		seen[folder] = t.project
	}

	// Plan: what the server has, what the folder holds.
	var edited, fetch []*target
	for _, t := range targets {
		t.lock = lock.find(t.project, t.slug, lockDir(t.dir))
		folder := filepath.Join(e.path(t.dir), t.slug)
		exists, err := isDir(folder)
		if err != nil {
			return err
		}
		t.existed = exists
		local := ""
		if exists {
			files, err := readFolder(folder)
			if err != nil {
				return err
			}
			local = digest(files)
		}
		t.local = local
		dirty := exists && (t.lock == nil || local != t.lock.Digest)
		ref := t.project + "/" + t.slug
		if f.frozen {
			if exists && !dirty {
				t.status = "unchanged"
				continue
			}
			t.info = &client.ArchiveInfo{Version: t.lock.Version, Commit: t.lock.Commit}
		} else {
			t.info, err = sdk.SkillArchiveInfo(ctx, ref, t.version, skillpack.TarGz)
			if client.IsNotFound(err) && !t.named {
				t.status = "skipped"
				continue
			}
			if client.IsNotFound(err) {
				// A HEAD answer has no body to say what is missing.
				if _, serr := sdk.Skill(ctx, ref); serr != nil {
					return fail(serr, "%s", ref)
				}
				return fmt.Errorf("%s has no version %s", ref, t.version)
			}
			if err != nil {
				return fail(err, "%s@%s", ref, t.version)
			}
			if t.lock != nil && t.lock.Commit == t.info.Commit && exists && (!dirty || !f.force) {
				t.status = "unchanged"
				if dirty {
					t.status = "kept" // --force would restore it
				}
				continue
			}
		}
		if dirty {
			edited = append(edited, t)
		}
		fetch = append(fetch, t)
	}
	// Download and check everything before writing anything.
	var bar *progressbar.ProgressBar
	if e.Terminal && !e.json && len(fetch) > 3 {
		bar = progressbar.NewOptions(len(fetch), progressbar.OptionSetWriter(e.Stderr), progressbar.OptionSetDescription("pulling"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	}
	for _, t := range fetch {
		ref := t.project + "/" + t.slug
		ar, err := sdk.SkillArchive(ctx, ref, strconv.Itoa(t.info.Version), skillpack.TarGz)
		if err != nil {
			return fail(err, "download %s@%d", ref, t.info.Version)
		}
		if ar.Commit != t.info.Commit {
			return fmt.Errorf("download %s@%d: the server sent commit %s, not %s", ref, t.info.Version, ar.Commit, t.info.Commit)
		}
		if t.files, err = untar(ar.Bytes); err != nil {
			return fmt.Errorf("download %s@%d: %w", ref, t.info.Version, err)
		}
		t.digest = digest(t.files)
		if f.frozen && t.digest != t.lock.Digest {
			return fmt.Errorf("%s@%d: the archive's digest %s is not the one %s pins (%s)", ref, t.info.Version, t.digest, LockName, t.lock.Digest)
		}
		if bar != nil {
			bar.Add(1)
		}
	}
	if bar != nil {
		bar.Finish()
	}
	// A folder that differs from the lockfile but holds what is coming
	// (pushed and published) loses nothing; any other would.
	var refused []string
	for _, t := range edited {
		if t.local != t.digest && !f.force {
			refused = append(refused, filepath.Join(t.dir, t.slug))
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("local edits in %s would be overwritten: push them (quire push) or pass --force", strings.Join(refused, ", "))
	}

	// Write: each folder whole, then the lockfile.
	for _, t := range fetch {
		if err := installFolder(e.path(t.dir), t.slug, t.files); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(t.dir, t.slug), err)
		}
		// A folder that was not there is installed, whatever the lock
		// said of another folder.
		t.status = "updated"
		if !t.existed {
			t.status = "installed"
		}
		lock.put(LockedSkill{Project: t.project, Slug: t.slug, Dir: lockDir(t.dir), Version: t.info.Version, Commit: t.info.Commit, Digest: t.digest})
	}
	if len(fetch) > 0 {
		if err := lock.write(lockPath); err != nil {
			return fmt.Errorf("write %s: %w", LockName, err)
		}
	}
	return e.printPulled(targets, f.dir)
}

// printPulled says what happened to each target; dir is the folder the
// command was given (each skill's own is in its path).
func (e *env) printPulled(targets []*target, dir string) error {
	out := make([]PulledSkill, 0, len(targets))
	counts := map[string]int{}
	for _, t := range targets {
		p := PulledSkill{Project: t.project, Slug: t.slug, Path: filepath.Join(t.dir, t.slug), Status: t.status}
		if l := t.lock; t.status == "unchanged" || t.status == "kept" {
			p.Version, p.Commit, p.Digest = l.Version, l.Commit, l.Digest
		} else if t.status != "skipped" {
			p.Version, p.Commit, p.Digest = t.info.Version, t.info.Commit, t.digest
		}
		switch t.status {
		case "kept":
			p.Note = "local edits kept: nothing changed on the server"
		case "skipped":
			p.Note = "no version " + t.version
		}
		counts[t.status]++
		out = append(out, p)
	}
	return e.print(map[string]any{"lockfile": LockName, "dir": dir, "skills": out}, func(w io.Writer) {
		for _, p := range out {
			switch p.Status {
			case "skipped":
				fmt.Fprintf(w, "%-9s %s/%s (%s)\n", p.Status, p.Project, p.Slug, p.Note)
			case "kept":
				fmt.Fprintf(w, "%-9s %s/%s v%d in %s (%s)\n", p.Status, p.Project, p.Slug, p.Version, p.Path, p.Note)
			default:
				fmt.Fprintf(w, "%-9s %s/%s v%d in %s\n", p.Status, p.Project, p.Slug, p.Version, p.Path)
			}
		}
		var parts []string
		for _, s := range []string{"installed", "updated", "unchanged", "kept", "skipped"} {
			if counts[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			}
		}
		if len(parts) == 0 {
			parts = []string{"no skills"}
		}
		fmt.Fprintln(w, strings.Join(parts, ", "))
	})
}
