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
	"github.com/quire/quire/valid"
)

// Skills are served as the MCP Skills Extension (SEP-2640,
// io.modelcontextprotocol/skills) has them: skills/list and skills/get
// answer Skill entries, every file of a live skill is the resource
// skill://{project}/{slug}/{path}, a skill is named by the URI of its
// SKILL.md, and its directories (skill://{project}/{slug} and below) are
// directory resources that resources/directory/read lists. Hosts without
// the extension see the same files in resources/list.

const skillScheme = "skill://"

// skillRoot is the URI of a skill's directory; a file's is it plus "/"
// and the path, and the skill's own URI is its SKILL.md's.
func skillRoot(project, slug string) string { return skillScheme + project + "/" + slug }

func fileURI(project, slug, p string) string {
	return skillRoot(project, slug) + "/" + (&url.URL{Path: p}).EscapedPath()
}

// skillMD is the URI that names a skill: its SKILL.md's.
func skillMD(project, slug string) string { return fileURI(project, slug, valid.SkillFile) }

// parseSkillURI splits skill://project/slug[/path]; path is "" for the
// skill's directory.
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

// SkillResource is one file of a skill in a Skill entry.
type SkillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Skill is the extension's Skill entry, of skills/list and skills/get:
// the URI of its SKILL.md, that file's front matter as written, and every
// file with its SHA-256 digest and size.
type Skill struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []SkillResource `json:"resources"`
}

// resultComplete is the resultType every answer of the extension's
// methods carries; the SDK sets it only on its own result types.
const resultComplete = "complete"

// listCache is the cache hint (required from protocol 2026-07-28 on) of
// every answer quire builds itself, which depends on the caller and on
// what is live: private, and stale at once (a publish changes it). The
// SDK fills in the hint only on the answers it builds.
var listCache = sdk.Cacheable{TTLMs: 0, CacheScope: "private"}

// ListSkillsParams are skills/list's parameters.
type ListSkillsParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListSkillsResult is skills/list's answer.
type ListSkillsResult struct {
	sdk.ResultBase
	sdk.Cacheable
	ResultType string  `json:"resultType"`
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
	sdk.Cacheable
	ResultType string `json:"resultType"`
	Skill      Skill  `json:"skill"`
}

func skillView(s *app.AgentSkill) Skill {
	out := Skill{
		URI:         skillMD(s.Project.Slug, s.Asset.Slug),
		Frontmatter: s.Frontmatter, Resources: make([]SkillResource, 0, len(s.Files)),
	}
	for _, f := range s.Files {
		out.Resources = append(out.Resources, SkillResource{URI: fileURI(s.Project.Slug, s.Asset.Slug, f.Path), Digest: f.Digest, Size: f.Size})
	}
	return out
}

func (s *Server) addSkillMethods() {
	// No name shadows a standard method, so no call fails.
	sdk.AddReceivingCustomMethod(s.sdk, "skills/list", func(ctx context.Context, _ *sdk.ServerSession, params *ListSkillsParams) (*ListSkillsResult, error) {
		p, cursor, err := listCaller(ctx, params, func(q *ListSkillsParams) string { return q.Cursor })
		if err != nil {
			return nil, err
		}
		page, next, err := s.app.AgentSkills(ctx, p, "", cursor, app.MaxAgentPage)
		if err != nil {
			return nil, s.fail(err)
		}
		out := &ListSkillsResult{Cacheable: listCache, ResultType: resultComplete, Skills: make([]Skill, 0, len(page)), NextCursor: next}
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
			return nil, rpcError(quire.Errorf(quire.EINVALID, "uri is required: skill://{project}/{slug}/SKILL.md"))
		}
		project, slug, rest, err := parseSkillURI(params.URI)
		if err == nil && rest != valid.SkillFile {
			err = quire.Errorf(quire.ENOTFOUND, "no skill is served at %s: a skill is named by its SKILL.md, skill://{project}/{slug}/SKILL.md", params.URI)
		}
		if err != nil {
			return nil, rpcError(err)
		}
		sk, err := s.app.AgentSkill(ctx, p, project, slug)
		if err != nil {
			return nil, s.fail(err)
		}
		return &GetSkillResult{Cacheable: listCache, ResultType: resultComplete, Skill: skillView(sk)}, nil
	})
	sdk.AddReceivingCustomMethod(s.sdk, "resources/directory/read", func(ctx context.Context, _ *sdk.ServerSession, params *ReadDirectoryParams) (*ReadDirectoryResult, error) {
		return s.readDirectory(ctx, params)
	})
}

// listResources answers resources/list: every file of the live skills
// the caller can read.
func (s *Server) listResources(ctx context.Context, params *sdk.ListResourcesParams) (*sdk.ListResourcesResult, error) {
	p, cursor, err := listCaller(ctx, params, func(q *sdk.ListResourcesParams) string { return q.Cursor })
	if err != nil {
		return nil, err
	}
	files, next, err := s.app.AgentSkillFiles(ctx, p, cursor, app.MaxAgentPage)
	if err != nil {
		return nil, s.fail(err)
	}
	out := &sdk.ListResourcesResult{Cacheable: listCache, Resources: make([]*sdk.Resource, 0, len(files)), NextCursor: next}
	for _, f := range files {
		out.Resources = append(out.Resources, fileResource(f.Skill, f.File))
	}
	return out, nil
}

// fileResource is the resources/list entry of file f of skill sk: a
// SKILL.md is named and described by its front matter, as the extension
// asks; any other file by its path.
func fileResource(sk *app.AgentSkill, f app.SkillFile) *sdk.Resource {
	r := &sdk.Resource{
		URI: fileURI(sk.Project.Slug, sk.Asset.Slug, f.Path), Name: sk.Name + "/" + f.Path,
		MIMEType: mimeType(f.Path, nil), Size: f.Size,
		Description: "file of skill " + sk.Name + " (live version " + itoa(sk.Version.Number) + ")",
	}
	if f.Path == valid.SkillFile {
		if name, ok := sk.Frontmatter["name"].(string); ok {
			r.Name = name
		}
		if desc, ok := sk.Frontmatter["description"].(string); ok {
			r.Description = desc
		}
	}
	return r
}

// listResourceTemplates answers resources/templates/list: the one
// template every skill file matches.
func (s *Server) listResourceTemplates(ctx context.Context, _ *sdk.ListResourceTemplatesParams) (*sdk.ListResourceTemplatesResult, error) {
	if _, err := principal(ctx); err != nil {
		return nil, err
	}
	return &sdk.ListResourceTemplatesResult{Cacheable: listCache, ResourceTemplates: []*sdk.ResourceTemplate{{
		URITemplate: "skill://{project}/{slug}/{+path}", Name: "skill-file",
		Description: "a file of the live version of a skill",
	}}}, nil
}

// readResource answers resources/read for skill://project/slug/path; a
// directory (the skill's own, or one below) is not a file to read.
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
		return nil, rpcError(quire.Errorf(quire.ENOTFOUND, "%s is a directory resource: read %s, or list it with resources/directory/read", params.URI, skillMD(project, slug)))
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
	return &sdk.ReadResourceResult{Cacheable: listCache, Contents: []*sdk.ResourceContents{c}}, nil
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

// RegisterSkillMethods lets client c call skills/list, skills/get and
// resources/directory/read (sdk.CallCustomMethod): the bridge and tests speak the extension too.
func RegisterSkillMethods(c *sdk.Client) {
	// No name is a standard method, so no call fails.
	sdk.AddSendingCustomMethod[*ListSkillsParams, *ListSkillsResult](c, "skills/list")
	sdk.AddSendingCustomMethod[*GetSkillParams, *GetSkillResult](c, "skills/get")
	sdk.AddSendingCustomMethod[*ReadDirectoryParams, *ReadDirectoryResult](c, "resources/directory/read")
}
