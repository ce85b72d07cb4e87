package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quire/quire/skillpack"
)

// One method per operation of the API (GET /openapi.json lists them).
// Skills and prompts share their version life cycle; the methods take
// the asset's id or slug as ref.

func listQuery(o ListOptions) url.Values {
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// list fetches one page of {key: [...], next_cursor}.
func list[T any](ctx context.Context, c *Client, path, key string, q url.Values) (Page[T], error) {
	var m map[string]json.RawMessage
	if err := c.do(ctx, request{method: "GET", path: path, query: q}, &m); err != nil {
		return Page[T]{}, err
	}
	var pg Page[T]
	if raw, ok := m[key]; ok {
		if err := json.Unmarshal(raw, &pg.Items); err != nil {
			return Page[T]{}, fmt.Errorf("client: GET %s: decode %s: %w", path, key, err)
		}
	}
	if raw, ok := m["next_cursor"]; ok {
		json.Unmarshal(raw, &pg.NextCursor)
	}
	return pg, nil
}

// segments escapes each segment of a file path, keeping its slashes.
func segments(path string) string {
	parts := strings.Split(path, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// assetPath addresses a skill or prompt (plural "skills" or "prompts")
// by ref: an id or a slug at /v1/{plural}/{ref}, or "project/slug" (one
// slash; project by id or slug) at the project-scoped twin
// /v1/projects/{project}/{plural}/{slug}, which needs no global lookup.
func assetPath(plural, ref string) string {
	if project, slug, ok := strings.Cut(ref, "/"); ok && !strings.Contains(slug, "/") {
		return p("/v1/projects/", project, "/"+plural+"/", slug)
	}
	return p("/v1/"+plural+"/", ref)
}

// Operations.

// Health reports whether the process answers (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, request{method: "GET", path: "/healthz"}, nil)
}

// Ready reports whether the server's dependencies are up (GET /readyz).
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, request{method: "GET", path: "/readyz"}, nil)
}

// OpenAPI returns the server's OpenAPI document.
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	res, err := c.send(ctx, request{method: "GET", path: "/openapi.json"})
	if err != nil {
		return nil, err
	}
	return res.body, nil
}

// Authentication.

// Login opens a session with email and password; use Login.Token with
// WithToken.
func (c *Client) Login(ctx context.Context, email, password string) (*Login, error) {
	var out Login
	err := c.do(ctx, request{method: "POST", path: "/v1/auth/login", body: map[string]string{"email": email, "password": password}}, &out)
	return &out, err
}

// Logout revokes the calling session.
func (c *Client) Logout(ctx context.Context) error {
	return c.do(ctx, request{method: "DELETE", path: "/v1/auth/session"}, nil)
}

// Me returns the caller.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	var out Me
	err := c.do(ctx, request{method: "GET", path: "/v1/auth/me"}, &out)
	return &out, err
}

// Sessions lists the live sessions of the caller, or of userID (admin).
func (c *Client) Sessions(ctx context.Context, userID string) ([]Session, error) {
	q := url.Values{}
	if userID != "" {
		q.Set("user_id", userID)
	}
	pg, err := list[Session](ctx, c, "/v1/auth/sessions", "sessions", q)
	return pg.Items, err
}

// RevokeSession revokes a session.
func (c *Client) RevokeSession(ctx context.Context, id string) error {
	return c.do(ctx, request{method: "DELETE", path: p("/v1/auth/sessions/", id)}, nil)
}

// Users.

// CreateUser creates a user (admin).
func (c *Client) CreateUser(ctx context.Context, in UserInput) (*User, error) {
	return unwrap[User](ctx, c, request{method: "POST", path: "/v1/users", body: in}, "user")
}

// Users lists users (admin).
func (c *Client) Users(ctx context.Context) ([]User, error) {
	pg, err := list[User](ctx, c, "/v1/users", "users", nil)
	return pg.Items, err
}

// User returns a user ("me" for the caller).
func (c *Client) User(ctx context.Context, id string) (*User, error) {
	return unwrap[User](ctx, c, request{method: "GET", path: p("/v1/users/", id)}, "user")
}

// UpdateUser changes a user.
func (c *Client) UpdateUser(ctx context.Context, id string, in UserInput) (*UserUpdated, error) {
	var out UserUpdated
	err := c.do(ctx, request{method: "PATCH", path: p("/v1/users/", id), body: in}, &out)
	return &out, err
}

// DeleteUser deletes a user (admin).
func (c *Client) DeleteUser(ctx context.Context, id string) error {
	return c.do(ctx, request{method: "DELETE", path: p("/v1/users/", id)}, nil)
}

// API keys.

// CreateAPIKey creates an API key; its token is in the answer only.
func (c *Client) CreateAPIKey(ctx context.Context, in KeyInput) (*NewAPIKey, error) {
	var out NewAPIKey
	err := c.do(ctx, request{method: "POST", path: "/v1/api-keys", body: in}, &out)
	return &out, err
}

// APIKeys lists the caller's keys (every user's for an admin with all).
func (c *Client) APIKeys(ctx context.Context, all bool) ([]APIKey, error) {
	q := url.Values{}
	if all {
		q.Set("all", "true")
	}
	pg, err := list[APIKey](ctx, c, "/v1/api-keys", "api_keys", q)
	return pg.Items, err
}

// APIKey returns one key.
func (c *Client) APIKey(ctx context.Context, id string) (*APIKey, error) {
	return unwrap[APIKey](ctx, c, request{method: "GET", path: p("/v1/api-keys/", id)}, "api_key")
}

// DeleteAPIKey deletes a key.
func (c *Client) DeleteAPIKey(ctx context.Context, id string) error {
	return c.do(ctx, request{method: "DELETE", path: p("/v1/api-keys/", id)}, nil)
}

// RotateAPIKey gives a key a new secret.
func (c *Client) RotateAPIKey(ctx context.Context, id string) (*NewAPIKey, error) {
	var out NewAPIKey
	err := c.do(ctx, request{method: "POST", path: p("/v1/api-keys/", id, "/rotate")}, &out)
	return &out, err
}

// Projects.

// CreateProject creates a project owned by the caller.
func (c *Client) CreateProject(ctx context.Context, in MetaInput) (*Project, error) {
	return unwrap[Project](ctx, c, request{method: "POST", path: "/v1/projects", body: in}, "project")
}

// Projects lists a page of the projects the caller can see.
func (c *Client) Projects(ctx context.Context, o ListOptions) (Page[Project], error) {
	return list[Project](ctx, c, "/v1/projects", "projects", listQuery(o))
}

// Project returns a project by id or slug.
func (c *Client) Project(ctx context.Context, ref string) (*Project, error) {
	return unwrap[Project](ctx, c, request{method: "GET", path: p("/v1/projects/", ref)}, "project")
}

// UpdateProject changes a project (its visibility too: owners only).
func (c *Client) UpdateProject(ctx context.Context, ref string, in MetaInput) (*Project, error) {
	return unwrap[Project](ctx, c, request{method: "PATCH", path: p("/v1/projects/", ref), body: in}, "project")
}

// DeleteProject deletes a project with its skills and prompts.
func (c *Client) DeleteProject(ctx context.Context, ref string) error {
	return c.do(ctx, request{method: "DELETE", path: p("/v1/projects/", ref)}, nil)
}

// Members lists a project's members.
func (c *Client) Members(ctx context.Context, ref string) ([]Member, error) {
	pg, err := list[Member](ctx, c, p("/v1/projects/", ref, "/members"), "members", nil)
	return pg.Items, err
}

// AddMember adds a member or changes a member's role.
func (c *Client) AddMember(ctx context.Context, ref string, in MemberInput) (*MemberChange, error) {
	var out MemberChange
	err := c.do(ctx, request{method: "POST", path: p("/v1/projects/", ref, "/members"), body: in}, &out)
	return &out, err
}

// SetMemberRole sets a member's role.
func (c *Client) SetMemberRole(ctx context.Context, ref, userID, role string) (*MemberChange, error) {
	var out MemberChange
	err := c.do(ctx, request{method: "PUT", path: p("/v1/projects/", ref, "/members/", userID), body: map[string]string{"role": role}}, &out)
	return &out, err
}

// RemoveMember removes a member.
func (c *Client) RemoveMember(ctx context.Context, ref, userID string) error {
	return c.do(ctx, request{method: "DELETE", path: p("/v1/projects/", ref, "/members/", userID)}, nil)
}

// Activity lists a page of a project's changes, newest first.
func (c *Client) Activity(ctx context.Context, ref string, o ListOptions) (Page[Activity], error) {
	return list[Activity](ctx, c, p("/v1/projects/", ref, "/activity"), "activity", listQuery(o))
}

// Skills and prompts: metadata.

func (c *Client) createAsset(ctx context.Context, plural, key, project string, in MetaInput) (*Asset, error) {
	return unwrap[Asset](ctx, c, request{method: "POST", path: p("/v1/projects/", project, "/"+plural), body: in}, key)
}

// CreateSkill creates a skill in project.
func (c *Client) CreateSkill(ctx context.Context, project string, in MetaInput) (*Skill, error) {
	return c.createAsset(ctx, "skills", "skill", project, in)
}

// CreatePrompt creates a prompt in project.
func (c *Client) CreatePrompt(ctx context.Context, project string, in MetaInput) (*Prompt, error) {
	return c.createAsset(ctx, "prompts", "prompt", project, in)
}

// ProjectSkills lists a page of a project's skills.
func (c *Client) ProjectSkills(ctx context.Context, project string, o ListOptions) (Page[Skill], error) {
	return list[Skill](ctx, c, p("/v1/projects/", project, "/skills"), "skills", listQuery(o))
}

// ProjectPrompts lists a page of a project's prompts. (Prompts is the
// prompt cache.)
func (c *Client) ProjectPrompts(ctx context.Context, project string, o ListOptions) (Page[Prompt], error) {
	return list[Prompt](ctx, c, p("/v1/projects/", project, "/prompts"), "prompts", listQuery(o))
}

// Skill returns a skill by id or slug.
func (c *Client) Skill(ctx context.Context, ref string) (*Skill, error) {
	return unwrap[Asset](ctx, c, request{method: "GET", path: assetPath("skills", ref)}, "skill")
}

// Prompt returns a prompt by id or slug.
func (c *Client) Prompt(ctx context.Context, ref string) (*Prompt, error) {
	return unwrap[Asset](ctx, c, request{method: "GET", path: assetPath("prompts", ref)}, "prompt")
}

// UpdateSkill changes a skill's name, slug or description.
func (c *Client) UpdateSkill(ctx context.Context, ref string, in MetaInput) (*Skill, error) {
	return unwrap[Asset](ctx, c, request{method: "PATCH", path: assetPath("skills", ref), body: in}, "skill")
}

// UpdatePrompt changes a prompt's name, slug or description.
func (c *Client) UpdatePrompt(ctx context.Context, ref string, in MetaInput) (*Prompt, error) {
	return unwrap[Asset](ctx, c, request{method: "PATCH", path: assetPath("prompts", ref), body: in}, "prompt")
}

// DeleteSkill deletes a skill and its repository.
func (c *Client) DeleteSkill(ctx context.Context, ref string) error {
	return c.do(ctx, request{method: "DELETE", path: assetPath("skills", ref)}, nil)
}

// DeletePrompt deletes a prompt and its repository.
func (c *Client) DeletePrompt(ctx context.Context, ref string) error {
	return c.do(ctx, request{method: "DELETE", path: assetPath("prompts", ref)}, nil)
}

// Versions of skills.

func versionPath(plural, ref string, n int, rest string) string {
	return assetPath(plural, ref) + "/versions/" + strconv.Itoa(n) + rest
}

// CreateSkillVersion opens a draft of skill ref from base.
func (c *Client) CreateSkillVersion(ctx context.Context, ref string, base Base) (*SkillVersion, error) {
	return unwrap[SkillVersion](ctx, c, request{method: "POST", path: assetPath("skills", ref) + p("/versions"), body: base.body()}, "version")
}

// UploadSkillVersion opens a draft holding the files of a zip archive.
func (c *Client) UploadSkillVersion(ctx context.Context, ref string, zip []byte) (*SkillVersion, error) {
	return unwrap[SkillVersion](ctx, c, request{method: "POST", path: assetPath("skills", ref) + p("/versions/upload"), body: zip, ctype: "application/zip"}, "version")
}

// SkillVersions lists a page of a skill's versions in state ("" for any).
func (c *Client) SkillVersions(ctx context.Context, ref, state string, o ListOptions) (Page[SkillVersion], error) {
	q := listQuery(o)
	if state != "" {
		q.Set("state", state)
	}
	return list[SkillVersion](ctx, c, assetPath("skills", ref)+p("/versions"), "versions", q)
}

// SkillVersion returns version n of a skill.
func (c *Client) SkillVersion(ctx context.Context, ref string, n int) (*SkillVersion, error) {
	return unwrap[SkillVersion](ctx, c, request{method: "GET", path: versionPath("skills", ref, n, "")}, "version")
}

// DeleteSkillVersion deletes draft n.
func (c *Client) DeleteSkillVersion(ctx context.Context, ref string, n int) error {
	return c.do(ctx, request{method: "DELETE", path: versionPath("skills", ref, n, "")}, nil)
}

// PublishSkillVersion publishes draft n; it goes live.
func (c *Client) PublishSkillVersion(ctx context.Context, ref string, n int) (*SkillVersion, error) {
	return unwrap[SkillVersion](ctx, c, request{method: "POST", path: versionPath("skills", ref, n, "/publish")}, "version")
}

// PromoteSkillVersion makes published version n live.
func (c *Client) PromoteSkillVersion(ctx context.Context, ref string, n int) (*SkillVersion, error) {
	return unwrap[SkillVersion](ctx, c, request{method: "POST", path: versionPath("skills", ref, n, "/promote")}, "version")
}

// ArchiveSkillVersion archives version n.
func (c *Client) ArchiveSkillVersion(ctx context.Context, ref string, n int) (*SkillVersion, error) {
	return unwrap[SkillVersion](ctx, c, request{method: "POST", path: versionPath("skills", ref, n, "/archive")}, "version")
}

func (c *Client) diff(ctx context.Context, plural, ref string, from, to int) (*Diff, error) {
	var out Diff
	q := url.Values{"from": {strconv.Itoa(from)}, "to": {strconv.Itoa(to)}}
	err := c.do(ctx, request{method: "GET", path: assetPath(plural, ref) + "/diff", query: q}, &out)
	return &out, err
}

// SkillDiff compares two versions of a skill.
func (c *Client) SkillDiff(ctx context.Context, ref string, from, to int) (*Diff, error) {
	return c.diff(ctx, "skills", ref, from, to)
}

// SkillHistory lists a page of a skill's changes, newest first.
func (c *Client) SkillHistory(ctx context.Context, ref string, o ListOptions) (Page[Commit], error) {
	return list[Commit](ctx, c, assetPath("skills", ref)+p("/history"), "commits", listQuery(o))
}

// Files of skills.

// FileOptions qualify a file write: the commit message, and the commit
// the draft must be at (If-Match; "*" for any).
type FileOptions struct {
	Message string
	IfMatch string
}

func ifMatch(etag string) map[string]string {
	if etag == "" {
		return nil
	}
	if etag != "*" && !strings.HasPrefix(etag, `"`) {
		etag = `"` + etag + `"`
	}
	return map[string]string{"If-Match": etag}
}

// PutFile creates or replaces one file of draft n (a commit).
func (c *Client) PutFile(ctx context.Context, ref string, n int, path string, content []byte, o FileOptions) (*FileWritten, error) {
	var out FileWritten
	body := map[string]string{"file_path": path, "content": string(content)}
	if o.Message != "" {
		body["message"] = o.Message
	}
	err := c.do(ctx, request{method: "POST", path: versionPath("skills", ref, n, "/files"), body: body, headers: ifMatch(o.IfMatch)}, &out)
	return &out, err
}

// Files lists a page of the files of version n.
func (c *Client) Files(ctx context.Context, ref string, n int, o ListOptions) (Page[File], error) {
	return list[File](ctx, c, versionPath("skills", ref, n, "/files"), "files", listQuery(o))
}

// ReadFile returns one file's bytes.
func (c *Client) ReadFile(ctx context.Context, ref string, n int, path string) ([]byte, error) {
	res, err := c.send(ctx, request{method: "GET", path: versionPath("skills", ref, n, "/files/") + segments(path)})
	if err != nil {
		return nil, err
	}
	return res.body, nil
}

// DeleteFile removes one file of draft n (a commit).
func (c *Client) DeleteFile(ctx context.Context, ref string, n int, path, ifMatchCommit string) (*SkillVersion, error) {
	return unwrap[SkillVersion](ctx, c, request{method: "DELETE", path: versionPath("skills", ref, n, "/files/") + segments(path), headers: ifMatch(ifMatchCommit)}, "version")
}

// DownloadSkillVersion returns a zip of version n, its files under a
// folder named for the slug.
func (c *Client) DownloadSkillVersion(ctx context.Context, ref string, n int) ([]byte, error) {
	res, err := c.send(ctx, request{method: "GET", path: versionPath("skills", ref, n, "/download")})
	if err != nil {
		return nil, err
	}
	return res.body, nil
}

// SkillArchive returns version (a number, "live", or a label) of a skill
// as a deterministic archive, format skillpack.Zip or skillpack.TarGz.
// The bytes are checked against the ETag the server sent.
func (c *Client) SkillArchive(ctx context.Context, ref, version string, f skillpack.Format) (*Archive, error) {
	res, err := c.send(ctx, request{method: "GET", path: assetPath("skills", ref) + p("/versions/", version, "/archive."+string(f))})
	if err != nil {
		return nil, err
	}
	a := &Archive{Bytes: res.body, Digest: skillpack.Digest(res.body), Commit: res.header.Get("X-Quire-Commit")}
	a.Version, _ = strconv.Atoi(res.header.Get("X-Quire-Version"))
	if etag := strings.Trim(res.header.Get("ETag"), `"`); etag != a.Digest {
		return nil, fmt.Errorf("client: archive of %s@%s: digest %s, the server said %s", ref, version, a.Digest, etag)
	}
	return a, nil
}

// Discovery returns the Agent Skills discovery index: the server's
// (project "") or one project's.
func (c *Client) Discovery(ctx context.Context, project string) (*DiscoveryIndex, error) {
	path := "/.well-known/agent-skills/index.json"
	if project != "" {
		path = p("/v1/projects/", project, "/agent-skills/index.json")
	}
	var out DiscoveryIndex
	err := c.do(ctx, request{method: "GET", path: path}, &out)
	return &out, err
}

// DiscoveryFile returns a file of a skill of a discovery index.
func (c *Client) DiscoveryFile(ctx context.Context, project, name, path string) ([]byte, error) {
	base := p("/.well-known/agent-skills/", name, "/")
	if project != "" {
		base = p("/v1/projects/", project, "/agent-skills/", name, "/")
	}
	res, err := c.send(ctx, request{method: "GET", path: base + segments(path)})
	if err != nil {
		return nil, err
	}
	return res.body, nil
}

// Versions of prompts.

// CreatePromptVersion opens a draft of prompt ref with content.
func (c *Client) CreatePromptVersion(ctx context.Context, ref string, in PromptVersionInput) (*PromptVersion, error) {
	return unwrap[PromptVersion](ctx, c, request{method: "POST", path: assetPath("prompts", ref) + p("/versions"), body: in}, "version")
}

// UpdatePromptVersion edits draft n (one commit); ifMatchCommit, when
// set, is the commit the draft must be at.
func (c *Client) UpdatePromptVersion(ctx context.Context, ref string, n int, in PromptVersionInput, ifMatchCommit string) (*PromptVersion, error) {
	return unwrap[PromptVersion](ctx, c, request{method: "PATCH", path: versionPath("prompts", ref, n, ""), body: in, headers: ifMatch(ifMatchCommit)}, "version")
}

// PromptVersions lists a page of a prompt's versions in state ("" for any).
func (c *Client) PromptVersions(ctx context.Context, ref, state string, o ListOptions) (Page[PromptVersion], error) {
	q := listQuery(o)
	if state != "" {
		q.Set("state", state)
	}
	return list[PromptVersion](ctx, c, assetPath("prompts", ref)+p("/versions"), "versions", q)
}

// PromptVersion returns version n of a prompt with its content.
func (c *Client) PromptVersion(ctx context.Context, ref string, n int) (*PromptVersion, error) {
	return unwrap[PromptVersion](ctx, c, request{method: "GET", path: versionPath("prompts", ref, n, "")}, "version")
}

// DeletePromptVersion deletes draft n.
func (c *Client) DeletePromptVersion(ctx context.Context, ref string, n int) error {
	return c.do(ctx, request{method: "DELETE", path: versionPath("prompts", ref, n, "")}, nil)
}

// PublishPromptVersion publishes draft n; it goes live.
func (c *Client) PublishPromptVersion(ctx context.Context, ref string, n int) (*PromptVersion, error) {
	return unwrap[PromptVersion](ctx, c, request{method: "POST", path: versionPath("prompts", ref, n, "/publish")}, "version")
}

// PromotePromptVersion makes published version n live.
func (c *Client) PromotePromptVersion(ctx context.Context, ref string, n int) (*PromptVersion, error) {
	return unwrap[PromptVersion](ctx, c, request{method: "POST", path: versionPath("prompts", ref, n, "/promote")}, "version")
}

// ArchivePromptVersion archives version n.
func (c *Client) ArchivePromptVersion(ctx context.Context, ref string, n int) (*PromptVersion, error) {
	return unwrap[PromptVersion](ctx, c, request{method: "POST", path: versionPath("prompts", ref, n, "/archive")}, "version")
}

// PromptDiff compares two versions of a prompt.
func (c *Client) PromptDiff(ctx context.Context, ref string, from, to int) (*Diff, error) {
	return c.diff(ctx, "prompts", ref, from, to)
}

// PromptHistory lists a page of a prompt's changes, newest first.
func (c *Client) PromptHistory(ctx context.Context, ref string, o ListOptions) (Page[Commit], error) {
	return list[Commit](ctx, c, assetPath("prompts", ref)+p("/history"), "commits", listQuery(o))
}

// PromptVariables returns the variables version n's template uses.
func (c *Client) PromptVariables(ctx context.Context, ref string, n int) (*Variables, error) {
	var out Variables
	err := c.do(ctx, request{method: "GET", path: versionPath("prompts", ref, n, "/variables")}, &out)
	return &out, err
}

// CheckPromptVersion renders version n with every sample payload.
func (c *Client) CheckPromptVersion(ctx context.Context, ref string, n int) (*PromptCheck, error) {
	var out PromptCheck
	err := c.do(ctx, request{method: "POST", path: versionPath("prompts", ref, n, "/check")}, &out)
	return &out, err
}

// PromptDependents lists the prompts that include prompt ref.
func (c *Client) PromptDependents(ctx context.Context, ref string) ([]Dependent, error) {
	pg, err := list[Dependent](ctx, c, assetPath("prompts", ref)+p("/dependents"), "dependents", nil)
	return pg.Items, err
}

// LivePrompt returns the live version of prompt ref. With etag (a commit
// from an earlier answer) set and unchanged, it returns nil, nil: the
// server answered 304 without a body.
func (c *Client) LivePrompt(ctx context.Context, ref, etag string) (*PromptVersion, error) {
	r := request{method: "GET", path: assetPath("prompts", ref) + p("/live")}
	if etag != "" {
		r.headers = map[string]string{"If-None-Match": `"` + etag + `"`}
	}
	return c.promptVersionAnswer(ctx, r)
}

// promptVersionAnswer sends r and decodes {"version": ...}, or nil for 304.
func (c *Client) promptVersionAnswer(ctx context.Context, r request) (*PromptVersion, error) {
	res, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if res.status == http.StatusNotModified {
		return nil, nil
	}
	var m struct {
		Version *PromptVersion `json:"version"`
	}
	if err := json.Unmarshal(res.body, &m); err != nil || m.Version == nil {
		return nil, fmt.Errorf("client: GET %s: answer has no version", r.path)
	}
	return m.Version, nil
}

// RenderPrompt renders prompt ref on the server.
func (c *Client) RenderPrompt(ctx context.Context, ref string, in RenderInput) (*Rendered, error) {
	var out Rendered
	err := c.do(ctx, request{method: "POST", path: assetPath("prompts", ref) + p("/render"), body: in}, &out)
	return &out, err
}

// RenderProjectPrompt renders the prompt slug of project on the server.
func (c *Client) RenderProjectPrompt(ctx context.Context, project, slug string, in RenderInput) (*Rendered, error) {
	var out Rendered
	err := c.do(ctx, request{method: "POST", path: p("/v1/projects/", project, "/prompts/", slug, "/render"), body: in}, &out)
	return &out, err
}

// RunPrompt renders version (a number, "live" or a label name) of
// prompt ref and sends it to a model of the server's providers.
func (c *Client) RunPrompt(ctx context.Context, ref, version string, in RunInput) (*Run, error) {
	return unwrap[Run](ctx, c, request{method: "POST", path: assetPath("prompts", ref) + p("/versions/", version, "/run"), body: in}, "run")
}

// RunProjectPrompt is RunPrompt with the prompt slug of project.
func (c *Client) RunProjectPrompt(ctx context.Context, project, slug, version string, in RunInput) (*Run, error) {
	return unwrap[Run](ctx, c, request{method: "POST", path: p("/v1/projects/", project, "/prompts/", slug, "/versions/", version, "/run"), body: in}, "run")
}

// Payloads.

// CreatePayload stores named sample variables for prompt ref.
func (c *Client) CreatePayload(ctx context.Context, ref string, in PayloadInput) (*Payload, error) {
	return unwrap[Payload](ctx, c, request{method: "POST", path: assetPath("prompts", ref) + p("/payloads"), body: in}, "payload")
}

// Payloads lists a page of prompt ref's payloads.
func (c *Client) Payloads(ctx context.Context, ref string, o ListOptions) (Page[Payload], error) {
	return list[Payload](ctx, c, assetPath("prompts", ref)+p("/payloads"), "payloads", listQuery(o))
}

// Payload returns one payload.
func (c *Client) Payload(ctx context.Context, ref, id string) (*Payload, error) {
	return unwrap[Payload](ctx, c, request{method: "GET", path: assetPath("prompts", ref) + p("/payloads/", id)}, "payload")
}

// UpdatePayload replaces a payload's variables and name.
func (c *Client) UpdatePayload(ctx context.Context, ref, id string, in PayloadInput) (*Payload, error) {
	return unwrap[Payload](ctx, c, request{method: "PUT", path: assetPath("prompts", ref) + p("/payloads/", id), body: in}, "payload")
}

// DeletePayload deletes a payload.
func (c *Client) DeletePayload(ctx context.Context, ref, id string) error {
	return c.do(ctx, request{method: "DELETE", path: assetPath("prompts", ref) + p("/payloads/", id)}, nil)
}

// Cache and usage.

// PurgePromptCache drops a prompt's cached reads on every node.
func (c *Client) PurgePromptCache(ctx context.Context, ref string) error {
	return c.do(ctx, request{method: "POST", path: assetPath("prompts", ref) + p("/cache/purge")}, nil)
}

// PurgeAllCache drops every cached prompt read (admin).
func (c *Client) PurgeAllCache(ctx context.Context) error {
	return c.do(ctx, request{method: "POST", path: "/v1/cache/purge"}, nil)
}

// PromptUsage returns render counts per version of prompt ref.
func (c *Client) PromptUsage(ctx context.Context, ref string) (*PromptUsage, error) {
	return unwrap[PromptUsage](ctx, c, request{method: "GET", path: assetPath("prompts", ref) + p("/usage")}, "usage")
}
