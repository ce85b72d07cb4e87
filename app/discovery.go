package app

import (
	"context"
	"sort"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/quire/quire"
	"github.com/quire/quire/skillpack"
	"github.com/quire/quire/valid"
)

// Agent Skills discovery (docs/clients.md): the live version of every
// skill a caller can read whose slug is a valid Agent Skills name, with
// the digests of skillpack, server-wide or for one project. Where two
// visible projects hold a skill of the same name, the older project's
// wins (then the lower id), in the index and for its files alike.

// DiscoverySkill is one skill of a discovery index.
type DiscoverySkill struct {
	Asset   *quire.Asset
	Project *quire.Project
	// Name is the skill's slug; Description comes from SKILL.md's front
	// matter (the asset's description when it has none).
	Name, Description string
	Version           int
	Commit            string
	// Digest is the skill-level digest over Files; PackageDigest the
	// digest of the version's tar.gz archive.
	Digest        string
	Files         []skillpack.File
	PackageDigest string
}

// discoveryEntry is what a version's digests cost to compute, kept by
// commit (content at a commit never changes).
type discoveryEntry struct {
	description   string
	digest        string
	files         []skillpack.File
	packageDigest string
}

const maxDiscoveryMemo = 4096

func newDiscoveryMemo() *lru.Cache[string, *discoveryEntry] {
	c, _ := lru.New[string, *discoveryEntry](maxDiscoveryMemo) // fails only for a size <= 0
	return c
}

// discoveryProjects are the projects an index covers, oldest first: one
// project (project != "") or every project p can read.
func (a *App) discoveryProjects(ctx context.Context, p *quire.Principal, project string) ([]*quire.Project, error) {
	if project != "" {
		pr, err := a.Project(ctx, p, project, quire.AccessRead)
		if err != nil {
			return nil, err
		}
		return []*quire.Project{pr}, nil
	}
	prs, err := a.Projects(ctx, p)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(prs, func(i, j int) bool {
		if !prs[i].CreatedAt.Equal(prs[j].CreatedAt) {
			return prs[i].CreatedAt.Before(prs[j].CreatedAt)
		}
		return prs[i].ID < prs[j].ID
	})
	return prs, nil
}

// DiscoveryIndex lists the skills of the discovery index of project (""
// for the server-wide index), ordered by name.
func (a *App) DiscoveryIndex(ctx context.Context, p *quire.Principal, project string) ([]DiscoverySkill, error) {
	prs, err := a.discoveryProjects(ctx, p, project)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := []DiscoverySkill{}
	for _, pr := range prs {
		assets, err := a.meta.Assets(ctx, quire.KindSkill, pr.ID)
		if err != nil {
			return nil, err
		}
		for _, as := range assets {
			if seen[as.Slug] || !valid.SkillName(as.Slug) {
				continue
			}
			ds, ok, err := a.discoverySkill(ctx, pr, as)
			if err != nil {
				return nil, err
			}
			if ok {
				seen[as.Slug] = true
				out = append(out, ds)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// discoverySkill describes the live version of as, or ok=false when it
// has none.
func (a *App) discoverySkill(ctx context.Context, pr *quire.Project, as *quire.Asset) (DiscoverySkill, bool, error) {
	v, err := a.versions.LiveVersion(ctx, as)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return DiscoverySkill{}, false, nil
	}
	if err != nil {
		return DiscoverySkill{}, false, err
	}
	e, ok := a.discovery.Get(as.ID + "@" + v.Commit)
	if !ok {
		snap, err := a.versions.Snapshot(ctx, as, v.Number)
		if err != nil {
			return DiscoverySkill{}, false, err
		}
		tgz, err := skillpack.Bytes(skillpack.TarGz, snap)
		if err != nil {
			return DiscoverySkill{}, false, err
		}
		e = &discoveryEntry{files: skillpack.Files(snap), packageDigest: skillpack.Digest(tgz)}
		e.digest = skillpack.SkillDigest(e.files)
		for _, f := range snap.Files {
			if f.Path == valid.SkillFile {
				e.description = valid.SkillDescription(f.Content)
			}
		}
		a.discovery.Add(as.ID+"@"+v.Commit, e)
	}
	desc := e.description
	if desc == "" {
		desc = as.Description
	}
	return DiscoverySkill{
		Asset: as, Project: pr, Name: as.Slug, Description: desc, Version: v.Number, Commit: v.Commit,
		Digest: e.digest, Files: e.files, PackageDigest: e.packageDigest,
	}, true, nil
}

// DiscoveryFile reads one file of the live version of the skill named
// name in the index of project ("" for the server-wide one): the skill
// that index lists under that name.
func (a *App) DiscoveryFile(ctx context.Context, p *quire.Principal, project, name, path string) ([]byte, quire.File, error) {
	if !valid.SkillName(name) {
		return nil, quire.File{}, quire.Errorf(quire.ENOTFOUND, "skill not found")
	}
	prs, err := a.discoveryProjects(ctx, p, project)
	if err != nil {
		return nil, quire.File{}, err
	}
	found, err := a.meta.FindAssets(ctx, quire.KindSkill, name)
	if err != nil {
		return nil, quire.File{}, err
	}
	for _, pr := range prs {
		for _, as := range found {
			if as.ProjectID != pr.ID || as.Slug != name {
				continue
			}
			v, err := a.versions.LiveVersion(ctx, as)
			if quire.ErrorCode(err) == quire.ENOTFOUND {
				continue
			}
			if err != nil {
				return nil, quire.File{}, err
			}
			return a.versions.ReadFile(ctx, as, v.Number, path)
		}
	}
	return nil, quire.File{}, quire.Errorf(quire.ENOTFOUND, "skill not found")
}
