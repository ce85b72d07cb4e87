package app

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/quire/quire"
)

// The agents' view, continued (agents.go): the caller handed to a door
// that does not authenticate itself, the files of live skills as one
// listing, and what the change feed needs to know of an asset.

type principalKey struct{}

// WithPrincipal returns ctx carrying p: a door that authenticated a
// request hands the caller to a handler it does not call itself (the
// HTTP API mounting MCP's handler).
func WithPrincipal(ctx context.Context, p *quire.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom is the principal WithPrincipal put in ctx, or nil.
func PrincipalFrom(ctx context.Context) *quire.Principal {
	p, _ := ctx.Value(principalKey{}).(*quire.Principal)
	return p
}

// AgentFile is one file of a live skill, in a listing of files.
type AgentFile struct {
	Skill *AgentSkill
	File  SkillFile
}

type fileCursor struct {
	Skill string `json:"s,omitempty"` // AgentSkills cursor of the skill
	File  int    `json:"f,omitempty"` // files of it already listed
}

// AgentSkillFiles is a page (at most limit, MaxAgentPage) of the files of
// the live skills p can read, skill by skill, with the cursor of the
// next page: a skill with more files than a page spans pages.
func (a *App) AgentSkillFiles(ctx context.Context, p *quire.Principal, cursor string, limit int) ([]AgentFile, string, error) {
	if limit <= 0 || limit > MaxAgentPage {
		limit = MaxAgentPage
	}
	var fc fileCursor
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || json.Unmarshal(b, &fc) != nil || fc.File < 0 {
			return nil, "", quire.Errorf(quire.EINVALID, "cursor is not one this server gave")
		}
	}
	encode := func(c fileCursor) string {
		b, _ := json.Marshal(c)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	var out []AgentFile
	cur, off := fc.Skill, fc.File
	for {
		skills, next, err := a.AgentSkills(ctx, p, "", cur, 1)
		if err != nil {
			return nil, "", err
		}
		if len(skills) == 0 {
			return out, "", nil
		}
		sk := &skills[0]
		files := sk.Files[min(off, len(sk.Files)):]
		if room := limit - len(out); len(files) > room {
			for _, f := range files[:room] {
				out = append(out, AgentFile{Skill: sk, File: f})
			}
			return out, encode(fileCursor{Skill: cur, File: off + room}), nil
		}
		for _, f := range files {
			out = append(out, AgentFile{Skill: sk, File: f})
		}
		if next == "" {
			return out, "", nil
		}
		cur, off = next, 0
		if len(out) == limit {
			return out, encode(fileCursor{Skill: cur}), nil
		}
	}
}

// PromptState is what an agent listing shows of a prompt: its name
// ("project/slug"), its project and its live commit ("" with no live
// version).
type PromptState struct {
	Name, ProjectID, Commit string
}

// LiveState is the PromptState of prompt id, for a process acting for no
// one (the change feed). A deleted prompt is ENOTFOUND.
func (a *App) LiveState(ctx context.Context, id string) (PromptState, error) {
	as, pr, err := a.SystemAsset(ctx, quire.KindPrompt, id)
	if err != nil {
		return PromptState{}, err
	}
	commit, err := a.prompts.LiveCommit(ctx, as)
	if err != nil {
		return PromptState{}, err
	}
	return PromptState{Name: pr.Slug + "/" + as.Slug, ProjectID: pr.ID, Commit: commit}, nil
}

// SystemAsset is asset id of kind with its project, for a process that
// acts for no one (a change feed telling open sessions what moved).
func (a *App) SystemAsset(ctx context.Context, kind quire.Kind, id string) (*quire.Asset, *quire.Project, error) {
	as, err := a.meta.Asset(ctx, kind, id)
	if err != nil {
		return nil, nil, err
	}
	pr, err := a.meta.Project(ctx, as.ProjectID)
	if err != nil {
		return nil, nil, err
	}
	return as, pr, nil
}

// SystemProject is project id, for a process that acts for no one (the
// change feed deciding which sessions may hear of a change).
func (a *App) SystemProject(ctx context.Context, id string) (*quire.Project, error) {
	return a.meta.Project(ctx, id)
}
