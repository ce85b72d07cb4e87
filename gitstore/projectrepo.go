package gitstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
	"github.com/quire/quire/valid"
)

// The project repository: one read-only git repository per project whose
// main holds the live version of each of its skills, so that skill
// installers can take a whole project from one URL (the skills CLI reads
// skills/*/SKILL.md of a clone, Claude Code a marketplace):
//
//	skills/<slug>/…                    the live version's files, modes kept
//	README.md                          an index of the skills
//	.claude-plugin/marketplace.json    each skill as a Claude Code plugin
//
// It is a view derived from the skill repositories, kept up to date by
// the write path rather than rebuilt on read: every publish, promote,
// rollback, archive or delete of a skill syncs it (SyncProject), one
// commit by the actor naming the change, so its log is the project's
// release history and a pull brings what changed. A sync computes the
// whole view from the skills' live refs, not just the one change, so any
// drift -- a crash between a skill's publish and its sync, a sync that
// failed -- is mended by the next one; start-up runs one per project.
// The objects of every skill's tree are copied in (not borrowed through
// alternates), so the repository stands alone: a clone, fsck or backup
// needs nothing else, and deleting a skill breaks none of its history.
// A change's new objects (the changed skill's new blobs and trees, the
// README, marketplace.json, the root trees, the commit: five to a dozen)
// are written as one pack before main moves (odb's batch), not as loose
// objects one file each; the repacker folds the packs together.
const (
	projectRepoName = "project.git"
	marketplaceDir  = ".claude-plugin"
	marketplaceFile = "marketplace.json"
)

// SyncProject makes main of project pr's repository hold the live
// version of each of skills (the project's skills, any order), reading
// every skill's live ref: what start-up runs to mend any drift. It
// returns the commit it made, "" when the view was already right. by and
// msg are the commit's author and message.
func (s *Store) SyncProject(ctx context.Context, by quire.Actor, pr *quire.Project, skills []*quire.Asset, msg string) (_ string, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "SyncProject")(&err)
	w, err := s.beginProject(pr)
	if err != nil {
		return "", err
	}
	defer w.done()
	db := w.r.Batch()
	// What the view holds, and which skill commit each entry came from:
	// a skill whose live commit is the one recorded for the entry the
	// view has is not opened (start-up syncs every project).
	var have map[string]plumbing.Hash
	if tip, err := w.r.ref(mainRef); err == nil && !tip.IsZero() {
		if have, err = viewEntries(w.r, tip); err != nil {
			return "", err
		}
	}
	rec := readViewSources(w.r.path)
	next := viewSources{}
	entries := map[string]plumbing.Hash{}
	for _, a := range skills {
		if a.Kind != quire.KindSkill {
			continue
		}
		if live, ok := looseRefAt(s.RepoPath(a), mainRef); ok {
			if src, ok := rec[a.Slug]; ok && src.Commit == live && have[a.Slug] == src.Tree && !src.Tree.IsZero() {
				entries[a.Slug], next[a.Slug] = src.Tree, src
				continue
			}
		}
		src, err := s.assetRepo(a)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			continue // deleted meanwhile
		}
		if err != nil {
			return "", err
		}
		live, err := src.ref(mainRef)
		if err != nil {
			return "", err
		}
		if live.IsZero() {
			continue // nothing published
		}
		tree, err := copyCommitTree(src, db, live)
		if err != nil {
			return "", err
		}
		entries[a.Slug], next[a.Slug] = tree, viewSource{Commit: live, Tree: tree}
	}
	c, err := s.commitView(&w, db, by, pr, entries, msg)
	if err == nil && !maps.Equal(rec, next) {
		writeViewSources(w.r.path, next)
	}
	return c, err
}

// viewSources records, by slug, the skill commit each entry of the view
// was copied from, in the file viewSourcesFile of the project
// repository: a cache beside the repository, never part of it. Only
// SyncProject (start-up) writes it, so a view change costs no file for
// it; an entry it records stays true (a commit's tree never changes)
// and is used only where the view still holds that tree.
type viewSources map[string]viewSource

type viewSource struct {
	Commit plumbing.Hash `json:"commit"`
	Tree   plumbing.Hash `json:"tree"`
}

const viewSourcesFile = "quire-view-sources.json"

// readViewSources reads the record; a missing or unreadable one is
// empty, and every skill is read.
func readViewSources(repoPath string) viewSources {
	var rec viewSources
	b, err := os.ReadFile(filepath.Join(repoPath, viewSourcesFile))
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return viewSources{}
	}
	return rec
}

// writeViewSources replaces the record (a temporary file renamed over
// it, so a reader sees the old or the new one). A failure only costs
// the next start-up the reads it would save.
func writeViewSources(repoPath string, rec viewSources) {
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	f, err := os.CreateTemp(repoPath, viewSourcesFile+".tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(repoPath, viewSourcesFile))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// ApplyProjectChange applies ch to the view of project pr as it stands,
// as one commit by by with message msg ("" when it changes nothing), the
// other skills as the view has them: so each change is its own commit,
// in the order they are applied, however quickly they came. A view that
// does not exist yet is made whole from skills, the project's skills
// (SyncProject).
func (s *Store) ApplyProjectChange(ctx context.Context, by quire.Actor, pr *quire.Project, skills []*quire.Asset, ch quire.ProjectChange, msg string) (_ string, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "ApplyProjectChange")(&err)
	w, err := s.beginProject(pr)
	if err != nil {
		return "", err
	}
	tip, err := w.r.ref(mainRef)
	if err != nil || tip.IsZero() {
		w.done()
		if err != nil {
			return "", err
		}
		return s.SyncProject(ctx, by, pr, skills, msg)
	}
	defer w.done()
	entries, err := viewEntries(w.r, tip)
	if err != nil {
		return "", err
	}
	// The view's own entry: under the old slug for a rename.
	had, kept := entries[ch.Slug]
	if ch.OldSlug != "" {
		had, kept = entries[ch.OldSlug]
		delete(entries, ch.OldSlug)
	}
	delete(entries, ch.Slug)
	db := w.r.Batch()
	if h, ok := odb.ParseHash(ch.Commit); ok && ch.Skill != nil {
		src, err := s.assetRepo(ch.Skill)
		switch {
		case quire.ErrorCode(err) == quire.ENOTFOUND:
			// The skill was deleted after this change was queued, and
			// its removal is queued behind it: the view keeps its own
			// entry, under the new slug for a rename (a rename does not
			// change the live commit), and the removal takes it out.
			if kept {
				entries[ch.Slug] = had
			}
		case err != nil:
			return "", err
		default:
			if entries[ch.Slug], err = copyCommitTree(src, db, h); err != nil {
				return "", err
			}
		}
	}
	return s.commitView(&w, db, by, pr, entries, msg)
}

// HasProjectRepo reports whether project pr's repository exists.
func (s *Store) HasProjectRepo(pr *quire.Project) bool {
	_, err := os.Stat(filepath.Join(s.RepoPath(quire.ProjectRepo(pr.ID)), "HEAD"))
	return err == nil
}

// beginProject opens (making it if need be) and locks project pr's
// repository.
func (s *Store) beginProject(pr *quire.Project) (write, error) {
	pa := quire.ProjectRepo(pr.ID)
	if _, err := s.initRepo(s.RepoPath(pa)); err != nil {
		return write{}, err
	}
	return s.begin(pa)
}

// copyCommitTree copies the tree of commit c of src into dst and returns
// it.
func copyCommitTree(src *repo, dst *odb.DB, c plumbing.Hash) (plumbing.Hash, error) {
	commit, err := src.Commit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return commit.TreeHash, copyTree(src, dst, commit.TreeHash)
}

// viewEntries reads the skills/ entries of the view at commit tip, by
// slug.
func viewEntries(r *repo, tip plumbing.Hash) (map[string]plumbing.Hash, error) {
	c, err := r.Commit(tip)
	if err != nil {
		return nil, err
	}
	out := map[string]plumbing.Hash{}
	root, err := r.Entries(c.TreeHash)
	if err != nil {
		return nil, err
	}
	i := odb.FindEntry(root, "skills") // Lookup finds files, not folders
	if i < 0 || root[i].Mode != filemode.Dir {
		return out, nil
	}
	es, err := r.Entries(root[i].Hash)
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if e.Mode == filemode.Dir {
			out[e.Name] = e.Hash
		}
	}
	return out, nil
}

// commitView writes the view of entries (slug -> skill tree, objects in
// w's repository or the batch dst over it) and commits it on main unless
// main has that tree. The batch's objects are stored as one pack before
// main moves.
func (s *Store) commitView(w *write, dst *odb.DB, by quire.Actor, pr *quire.Project, entries map[string]plumbing.Hash, msg string) (string, error) {
	var tree []object.TreeEntry
	var listed []listedSkill
	for slug, h := range entries {
		tree = append(tree, object.TreeEntry{Name: slug, Mode: filemode.Dir, Hash: h})
		listed = append(listed, listedSkill{slug: slug, description: s.viewDescription(dst, h)})
	}
	sort.Slice(tree, func(i, j int) bool { return tree[i].Name+"/" < tree[j].Name+"/" })
	sort.Slice(listed, func(i, j int) bool { return listed[i].slug < listed[j].slug })
	root, err := projectTree(dst, pr, tree, listed)
	if err != nil {
		return "", err
	}
	tip, err := w.r.ref(mainRef)
	if err != nil {
		return "", err
	}
	if !tip.IsZero() {
		c, err := dst.Commit(tip)
		if err != nil {
			return "", err
		}
		if c.TreeHash == root {
			return "", nil
		}
	}
	commit, err := dst.WriteCommit(by, s.opts.Now(), root, tip, strings.TrimRight(msg, "\n")+"\n")
	if err != nil {
		return "", err
	}
	if _, err := dst.Flush(); err != nil {
		return "", err
	}
	if err := w.cas(mainRef, tip, commit); errors.Is(err, storage.ErrReferenceHasChanged) {
		return "", quire.Errorf(quire.ECONFLICT, "the project repository changed concurrently; retry")
	} else if err != nil {
		return "", err
	}
	s.projectChanged(pr.ID)
	return commit.String(), nil
}

// viewDescription is the description in the SKILL.md of skill tree h,
// remembered by tree (a tree's content never changes).
func (s *Store) viewDescription(r *odb.DB, h plumbing.Hash) string {
	if d, ok := s.descriptions.Get(h); ok {
		return d
	}
	d := ""
	if e, ok, err := r.Lookup(h, valid.SkillFile); err == nil && ok {
		if b, err := r.ReadBlob(e.Hash); err == nil {
			d = valid.SkillDescription(b)
		}
	}
	s.descriptions.Add(h, d)
	return d
}

// listedSkill is what README.md and marketplace.json say of a skill.
type listedSkill struct {
	slug, description string
}

// projectTree writes the project repository's root tree: skills/,
// README.md and .claude-plugin/marketplace.json.
func projectTree(r *odb.DB, pr *quire.Project, skills []object.TreeEntry, listed []listedSkill) (plumbing.Hash, error) {
	skillsTree, err := r.WriteTree(skills)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	readme, err := r.WriteBlob([]byte(projectReadme(pr, listed)))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	mj, err := marketplace(pr, listed)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	mblob, err := r.WriteBlob(mj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	plugin, err := r.WriteTree([]object.TreeEntry{{Name: marketplaceFile, Mode: filemode.Regular, Hash: mblob}})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	root := []object.TreeEntry{
		{Name: marketplaceDir, Mode: filemode.Dir, Hash: plugin},
		{Name: "README.md", Mode: filemode.Regular, Hash: readme},
	}
	if len(skills) > 0 {
		root = append(root, object.TreeEntry{Name: "skills", Mode: filemode.Dir, Hash: skillsTree})
	}
	return r.WriteTree(root)
}

// projectReadme is the repository's README.md: the project and a table
// of its skills.
func projectReadme(pr *quire.Project, listed []listedSkill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", oneLine(pr.Name))
	if pr.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", oneLine(pr.Description))
	}
	fmt.Fprintf(&b, "The live version of each skill of project `%s`, kept by quire: every publish,\nrollback or archive is a commit here. Read-only: change a skill through its own\nrepository, the API or the web UI.\n\n", pr.Slug)
	if len(listed) == 0 {
		b.WriteString("No skill has a live version yet.\n")
		return b.String()
	}
	b.WriteString("| Skill | Description |\n|---|---|\n")
	for _, s := range listed {
		fmt.Fprintf(&b, "| [%s](skills/%s/SKILL.md) | %s |\n", s.slug, s.slug, strings.ReplaceAll(oneLine(s.description), "|", `\|`))
	}
	return b.String()
}

// marketplaceDoc is .claude-plugin/marketplace.json: the project as a
// Claude Code plugin marketplace holding each skill as a plugin, in the
// form the documented schema gives (name, owner, plugins; a plugin whose
// source is the repository root, strict false, with its skill's folder).
type marketplaceDoc struct {
	Name     string              `json:"name"`
	Owner    marketplaceOwner    `json:"owner"`
	Metadata marketplaceMetadata `json:"metadata"`
	Plugins  []marketplacePlugin `json:"plugins"`
}

type marketplaceOwner struct {
	Name string `json:"name"`
}

type marketplaceMetadata struct {
	Description string `json:"description,omitempty"`
}

type marketplacePlugin struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Source      string   `json:"source"`
	Strict      bool     `json:"strict"`
	Skills      []string `json:"skills"`
}

// reservedMarketplaces are names Claude Code keeps for official
// marketplaces; a project of such a slug is published under quire-<slug>.
var reservedMarketplaces = map[string]bool{
	"claude-code-marketplace": true, "claude-code-plugins": true, "claude-plugins-official": true,
	"anthropic-marketplace": true, "anthropic-plugins": true, "agent-skills": true, "life-sciences": true,
}

func marketplace(pr *quire.Project, listed []listedSkill) ([]byte, error) {
	name := pr.Slug
	if reservedMarketplaces[name] {
		name = "quire-" + name
	}
	doc := marketplaceDoc{Name: name, Owner: marketplaceOwner{Name: pr.Name}, Metadata: marketplaceMetadata{Description: pr.Description}, Plugins: []marketplacePlugin{}}
	for _, s := range listed {
		doc.Plugins = append(doc.Plugins, marketplacePlugin{Name: s.slug, Description: s.description, Source: "./", Skills: []string{"./skills/" + s.slug}})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n'), err
}

// copyTree copies tree h of src, with everything under it, into dst:
// children first, so an object dst holds always has its children, and a
// subtree dst has is skipped whole.
func copyTree(src *repo, dst *odb.DB, h plumbing.Hash) error {
	if dst.Has(h) {
		return nil
	}
	entries, err := src.Entries(h)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch {
		case e.Mode == filemode.Dir:
			err = copyTree(src, dst, e.Hash)
		case !dst.Has(e.Hash):
			err = copyObject(src, dst, plumbing.BlobObject, e.Hash)
		}
		if err != nil {
			return err
		}
	}
	return copyObject(src, dst, plumbing.TreeObject, h)
}

// copyObject stores object h of src in dst.
func copyObject(src *repo, dst *odb.DB, t plumbing.ObjectType, h plumbing.Hash) error {
	o, err := src.Object(t, h)
	if err != nil {
		return fmt.Errorf("copy %s %s: %w", t, h, err)
	}
	got, err := dst.Store(o)
	if err == nil && got != h {
		err = fmt.Errorf("copy %s %s: stored as %s", t, h, got)
	}
	return err
}
