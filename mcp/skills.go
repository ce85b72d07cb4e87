package mcp

import (
	"context"
	"mime"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Skills are served as the MCP Skills Extension has them (skills/list,
// skills/get) and, for hosts without it, as resources: every file of a
// live skill is skill://{project}/{slug}/{path}; the skill itself is
// skill://{project}/{slug}.

const skillScheme = "skill://"

// skillURI is the URI of a skill; a file's is it plus "/" and the path.
func skillURI(project, slug string) string { return skillScheme + project + "/" + slug }

func fileURI(project, slug, p string) string {
	return skillURI(project, slug) + "/" + (&url.URL{Path: p}).EscapedPath()
}

// parseSkillURI splits skill://project/slug[/path]; path is "" for the
// skill itself.
func parseSkillURI(uri string) (project, slug, p string, err error) {
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if !ok {
		return "", "", "", quire.Errorf(quire.ENOTFOUND, "resource %q not found: quire serves skill://{project}/{slug}/{path}", uri)
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", "", quire.Errorf(quire.ENOTFOUND, "resource %q not found: quire serves skill://{project}/{slug}/{path}", uri)
	}
	if len(parts) == 3 {
		if p, err = url.PathUnescape(parts[2]); err != nil {
			return "", "", "", quire.Errorf(quire.EINVALID, "resource %q: the path is not escaped properly", uri)
		}
	}
	return parts[0], parts[1], p, nil
}

// SkillResource is one file of a skill in a skills/list entry.
type SkillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Skill is a skills/list entry and the skill of skills/get.
type Skill struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Version     int             `json:"version"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []SkillResource `json:"resources"`
}

// ListSkillsParams are skills/list's parameters.
type ListSkillsParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListSkillsResult is skills/list's answer.
type ListSkillsResult struct {
	sdk.ResultBase
	Skills     []Skill `json:"skills"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

// GetSkillParams are skills/get's parameters.
type GetSkillParams struct {
	sdk.ParamsBase
	URI string `json:"uri"`
}

// GetSkillResult is skills/get's answer.
type GetSkillResult struct {
	sdk.ResultBase
	Skill Skill `json:"skill"`
}

func skillView(s *app.AgentSkill) Skill {
	out := Skill{
		URI: skillURI(s.Project.Slug, s.Asset.Slug), Name: s.Name, Version: s.Version.Number,
		Frontmatter: s.Frontmatter, Resources: make([]SkillResource, 0, len(s.Files)),
	}
	for _, f := range s.Files {
		out.Resources = append(out.Resources, SkillResource{URI: fileURI(s.Project.Slug, s.Asset.Slug, f.Path), Digest: f.Digest, Size: f.Size})
	}
	return out
}

func (s *Server) addSkillMethods() {
	// Neither name shadows a standard method, so neither call fails.
	sdk.AddReceivingCustomMethod(s.sdk, "skills/list", func(ctx context.Context, _ *sdk.ServerSession, params *ListSkillsParams) (*ListSkillsResult, error) {
		p, err := principal(ctx)
		if err != nil {
			return nil, err
		}
		cursor := ""
		if params != nil {
			cursor = params.Cursor
		}
		page, next, err := s.app.AgentSkills(ctx, p, "", cursor, app.MaxAgentPage)
		if err != nil {
			return nil, s.fail(err)
		}
		out := &ListSkillsResult{Skills: make([]Skill, 0, len(page)), NextCursor: next}
		for i := range page {
			out.Skills = append(out.Skills, skillView(&page[i]))
		}
		return out, nil
	})
	sdk.AddReceivingCustomMethod(s.sdk, "skills/get", func(ctx context.Context, _ *sdk.ServerSession, params *GetSkillParams) (*GetSkillResult, error) {
		p, err := principal(ctx)
		if err != nil {
			return nil, err
		}
		if params == nil || params.URI == "" {
			return nil, rpcError(quire.Errorf(quire.EINVALID, "uri is required: skill://{project}/{slug}"))
		}
		project, slug, rest, err := parseSkillURI(params.URI)
		if err == nil && rest != "" && rest != "SKILL.md" {
			err = quire.Errorf(quire.ENOTFOUND, "%q names a file, not a skill: use skill://%s/%s", params.URI, project, slug)
		}
		if err != nil {
			return nil, rpcError(err)
		}
		sk, err := s.app.AgentSkill(ctx, p, project, slug)
		if err != nil {
			return nil, s.fail(err)
		}
		return &GetSkillResult{Skill: skillView(sk)}, nil
	})
}

// listResources answers resources/list: every file of the live skills
// the caller can read.
func (s *Server) listResources(ctx context.Context, params *sdk.ListResourcesParams) (*sdk.ListResourcesResult, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	cursor := ""
	if params != nil {
		cursor = params.Cursor
	}
	files, next, err := s.app.AgentSkillFiles(ctx, p, cursor, app.MaxAgentPage)
	if err != nil {
		return nil, s.fail(err)
	}
	out := &sdk.ListResourcesResult{Resources: make([]*sdk.Resource, 0, len(files)), NextCursor: next}
	for _, f := range files {
		sk := f.Skill
		out.Resources = append(out.Resources, &sdk.Resource{
			URI: fileURI(sk.Project.Slug, sk.Asset.Slug, f.File.Path), Name: sk.Name + "/" + f.File.Path,
			MIMEType: mimeType(f.File.Path, nil), Size: f.File.Size,
			Description: "file of skill " + sk.Name + " (live version " + itoa(sk.Version.Number) + ")",
		})
	}
	return out, nil
}

// listResourceTemplates answers resources/templates/list: the one
// template every skill file matches.
func (s *Server) listResourceTemplates(ctx context.Context, _ *sdk.ListResourceTemplatesParams) (*sdk.ListResourceTemplatesResult, error) {
	if _, err := principal(ctx); err != nil {
		return nil, err
	}
	return &sdk.ListResourceTemplatesResult{ResourceTemplates: []*sdk.ResourceTemplate{{
		URITemplate: "skill://{project}/{slug}/{+path}", Name: "skill-file",
		Description: "a file of the live version of a skill",
	}}}, nil
}

// readResource answers resources/read for skill://project/slug/path
// (the skill itself reads as its SKILL.md).
func (s *Server) readResource(ctx context.Context, params *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	project, slug, fp, err := parseSkillURI(params.URI)
	if err != nil {
		return nil, rpcError(err)
	}
	if fp == "" {
		fp = "SKILL.md"
	}
	b, _, err := s.app.AgentSkillFile(ctx, p, project, slug, fp)
	if err != nil {
		return nil, s.fail(err)
	}
	c := &sdk.ResourceContents{URI: params.URI, MIMEType: mimeType(fp, b)}
	if utf8.Valid(b) {
		c.Text = string(b)
	} else {
		c.Blob = b
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// mimeType is a file's type by its extension (text/markdown for .md),
// else text/plain for UTF-8 and application/octet-stream for the rest.
// MCP hosts do not run what they read, so unlike the HTTP API's raw
// files no type needs to be defused.
func mimeType(p string, b []byte) string {
	ext := strings.ToLower(path.Ext(p))
	switch ext {
	case ".md", ".markdown":
		return "text/markdown"
	case ".py":
		return "text/x-python"
	case ".sh":
		return "text/x-shellscript"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	if b != nil && !utf8.Valid(b) {
		return "application/octet-stream"
	}
	return "text/plain"
}

// RegisterSkillMethods lets client c call skills/list and skills/get
// (sdk.CallCustomMethod): the bridge and tests speak the extension too.
func RegisterSkillMethods(c *sdk.Client) {
	// Neither name is a standard method, so neither call fails.
	sdk.AddSendingCustomMethod[*ListSkillsParams, *ListSkillsResult](c, "skills/list")
	sdk.AddSendingCustomMethod[*GetSkillParams, *GetSkillResult](c, "skills/get")
}
