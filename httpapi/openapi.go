package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// GET /openapi.json is an OpenAPI 3.1 document built from route tables
// and from the Go types the handlers send and receive: schemas are
// generated from the types (openapischema.go says how required fields,
// formats and enums are read), never written by hand. Tests keep it true:
// TestOpenAPIMatchesRouter checks the tables against the router both ways
// and validates the document; internal/testenv checks every answer the
// suite receives against it; internal/apiclient is a client generated
// from it (go generate ./internal/apiclient after a change).
//
// To document routes:
//
//   - Put a table in the file that registers them, one line per route:
//
//     var reviewAPIRoutes = []apiRoute{
//     route("POST", "/v1/skills/{id}/reviews", "reviews", "Open a review",
//     body("ReviewRequest"), wrap(201, "review", "Review"), idempotent()),
//     }
//
//     method; path as OpenAPI writes it ({name} for a parameter; {projectID}
//     is shown as {project}); tag; summary; then what it takes (body,
//     optionalBody, query, zip, ifMatchHeader, conditional, idempotent) and
//     answers (ok, wrap, list, text, fails, etag). Statuses every route of
//     its kind can answer (401, 404, 400, 409 for writes, …) are added by
//     addOperation.
//   - Add the table to apiRouteTables, and a map of the types named in it
//     to apiSchemaTables (a name ending in Request is a request body:
//     additionalProperties false, required only where tagged
//     openapi:"required").
//   - A route under one skill or prompt (/v1/skills/{id}/…,
//     /v1/prompts/{id}/…) is documented once: its project-scoped twin
//     (/v1/projects/{project}/skills/{slug}/…) is added from the same line,
//     as Server.mountAsset serves both from one registration.
//   - A change to the API bumps APIVersion and gets a CHANGELOG.md entry.

// apiRouteTables are the route tables of every file; apiSchemaTables the
// component schemas they name.
var (
	apiRouteTables  = [][]apiRoute{apiRoutes, reviewAPIRoutes(), mcpAPIRoutes, clientRoutes, webhookAPIRoutes, oauthAPIRoutes}
	apiSchemaTables = []map[string]any{apiSchemas, reviewAPISchemas, webhookAPISchemas, oauthAPISchemas}
)

// APIVersion is the version of the API contract (info.version).
const APIVersion = "2.2.0"

// apiRoutes documents the routes of the core files.
var apiRoutes = []apiRoute{
	// Operations.
	route("GET", "/healthz", "operations", "The process answers", public(), ok(200, "Status")),
	route("GET", "/readyz", "operations", "Dependencies are up (data root writable, Redis reachable); 503 with the reason otherwise", public(), ok(200, "Status"), fails(503)),
	route("GET", "/openapi.json", "operations", "This document", public(), ok(200, "")),

	// Git smart HTTP (see docs/git.md): {path} is {project}/skills/{skill}.git/info/refs,
	// …/git-upload-pack or …/git-receive-pack (and the same for prompts).
	route("GET", "/git/{path}", "git", "Ref advertisement for git clone, fetch and push (info/refs?service=…); Basic auth with a token as password, or Bearer", text(200, "application/x-git-upload-pack-advertisement"), fails(401), fails(404)),
	route("POST", "/git/{path}", "git", "git-upload-pack (clone, fetch) or git-receive-pack (push to a draft)", text(200, "application/x-git-upload-pack-result"), fails(401), fails(404)),

	// Authentication.
	route("POST", "/v1/auth/login", "auth", "Log in with email and password; the token is a sess_ bearer token. Failed logins are throttled per account and per address: 429 with Retry-After", public(), body("LoginRequest"), ok(200, "LoginResponse"), fails(401), fails(429)),
	route("DELETE", "/v1/auth/session", "auth", "Log out: revoke the calling session", ok(204, "")),
	route("GET", "/v1/auth/me", "auth", "The caller: user, and the session or API key used", ok(200, "Me")),
	route("GET", "/v1/auth/sessions", "auth", "The caller's live sessions (an admin may ask for another user's)", query("user_id"), ok(200, "SessionList")),
	route("DELETE", "/v1/auth/sessions/{sessionID}", "auth", "Revoke a session", ok(204, "")),

	// Users.
	route("POST", "/v1/users", "users", "Create a user (admin); a name with a line break, NUL, '<' or '>' is 400 (it becomes a git author name)", body("UserCreateRequest"), wrap(201, "user", "User"), fails(409), idempotent()),
	route("GET", "/v1/users", "users", "List users (admin)", ok(200, "UserList")),
	route("GET", "/v1/users/{userID}", "users", "A user (\"me\" for the caller)", wrap(200, "user", "User")),
	route("PATCH", "/v1/users/{userID}", "users", "Update a user. A new password ends the user's other sessions, disabling ends all of them (sessions_revoked; 503 if they could not be ended). 409: the email is in use, or the change would leave no enabled admin", body("UserRequest"), ok(200, "UserUpdated"), fails(409), fails(503)),
	route("DELETE", "/v1/users/{userID}", "users", "Delete a user, the user's keys and sessions (admin); 409 for oneself, the last admin, or the last owner of a project", ok(204, ""), fails(409)),

	// API keys.
	route("POST", "/v1/api-keys", "api-keys", "Create an API key; its token is shown once. expires_at not in the future is 422", body("KeyRequest"), ok(201, "KeyWithToken"), fails(422), idempotent()),
	route("GET", "/v1/api-keys", "api-keys", "The caller's API keys (all of them for an admin with all=true)", query("all"), ok(200, "KeyList")),
	route("GET", "/v1/api-keys/{keyID}", "api-keys", "An API key, with last_used_at", wrap(200, "api_key", "APIKey")),
	route("DELETE", "/v1/api-keys/{keyID}", "api-keys", "Delete an API key", ok(204, "")),
	route("POST", "/v1/api-keys/{keyID}/rotate", "api-keys", "Give an API key a new secret; the new token is shown once", ok(200, "KeyWithToken")),

	// Projects.
	route("POST", "/v1/projects", "projects", "Create a project", body("MetaCreateRequest"), wrap(201, "project", "Project"), idempotent()),
	route("GET", "/v1/projects", "projects", "Projects the caller can see", query("limit", "cursor"), list(200, "projects", "Project")),
	route("GET", "/v1/projects/{projectID}", "projects", "A project (id or slug)", wrap(200, "project", "Project")),
	route("PATCH", "/v1/projects/{projectID}", "projects", "Update a project: its name, slug, description, visibility and review_policy (owner)", body("ProjectRequest"), wrap(200, "project", "Project")),
	route("DELETE", "/v1/projects/{projectID}", "projects", "Delete a project with its skills and prompts", ok(204, "")),
	route("GET", "/v1/projects/{projectID}/members", "projects", "A project's members", ok(200, "MemberList")),
	route("POST", "/v1/projects/{projectID}/members", "projects", "Add a member or change a member's role; 422 for no such user, 409 when it would demote the last owner", body("MemberRequest"), ok(200, "MemberChange"), fails(409), fails(422)),
	route("PUT", "/v1/projects/{projectID}/members/{userID}", "projects", "Set a member's role; 409 when it would demote the last owner", body("MemberRequest"), ok(200, "MemberChange"), fails(409), fails(422)),
	route("DELETE", "/v1/projects/{projectID}/members/{userID}", "projects", "Remove a member; 409 for the last owner", ok(204, ""), fails(409)),
	route("GET", "/v1/projects/{projectID}/activity", "history", "Changes to the project, its skills and prompts, newest first", query("limit", "cursor"), list(200, "activity", "Activity")),

	// Skills.
	route("POST", "/v1/projects/{projectID}/skills", "skills", "Create a skill", body("MetaCreateRequest"), wrap(201, "skill", "Asset"), idempotent()),
	route("GET", "/v1/projects/{projectID}/skills", "skills", "A project's skills", query("limit", "cursor"), list(200, "skills", "Asset")),
	route("GET", "/v1/skills/{id}", "skills", "A skill (id or slug)", wrap(200, "skill", "Asset")),
	route("PATCH", "/v1/skills/{id}", "skills", "Update a skill", body("MetaRequest"), wrap(200, "skill", "Asset")),
	route("DELETE", "/v1/skills/{id}", "skills", "Delete a skill and its repository", ok(204, "")),
	route("POST", "/v1/skills/{id}/versions", "skill versions", "Open a draft (from the live version, {\"from\": N} or {\"from\": \"empty\"}), or upload a zip as one", optionalBody("BaseRequest"), wrap(201, "version", "SkillVersion"), etag(), idempotent()),
	route("POST", "/v1/skills/{id}/versions/upload", "skill versions", "Upload a zip (raw or multipart \"file\") as a new draft (with ?from=live: over the live version, one commit holding exactly the zip's files); 409 when two of its paths collide after NFC normalization or case folding", zip(), pushQuery(), wrap(201, "version", "SkillVersion"), fails(409), etag(), idempotent()),
	route("GET", "/v1/skills/{id}/versions", "skill versions", "A skill's versions, oldest first", query("limit", "cursor", "state"), list(200, "versions", "SkillVersion")),
	route("GET", "/v1/skills/{id}/versions/{version}", "skill versions", "A version; ETag is its commit", wrap(200, "version", "SkillVersion"), etag(), conditional()),
	route("DELETE", "/v1/skills/{id}/versions/{version}", "skill versions", "Delete a draft", ok(204, "")),
	route("POST", "/v1/skills/{id}/versions/{version}/publish", "skill versions", "Publish a draft (needs a valid SKILL.md); it goes live and merges its open review. With the project's review_policy requiring approvals, 409 review_required unless the review is mergeable; an owner may send {override: true, reason} (docs/reviews.md). Malformed JSON is 400", optionalBody("PublishRequest"), wrap(200, "version", "SkillVersion"), etag()),
	route("POST", "/v1/skills/{id}/versions/{version}/promote", "skill versions", "Make a published version live (a rollback when older). Takes no body (or a JSON object); malformed JSON is 400", wrap(200, "version", "SkillVersion"), etag()),
	route("POST", "/v1/skills/{id}/versions/{version}/archive", "skill versions", "Archive a draft or a published version that is not live. Takes no body (or a JSON object); malformed JSON is 400", wrap(200, "version", "SkillVersion"), etag()),
	route("GET", "/v1/skills/{id}/diff", "skill versions", "Unified diff between two versions", requiredQuery("from", "to"), query("format"), ok(200, "Diff"), alsoAs(200, "text/x-diff")),
	route("GET", "/v1/skills/{id}/history", "history", "A skill's changes, newest first: commits, publish and archive tags, deletions and promotions", query("limit", "cursor"), list(200, "commits", "Commit")),
	route("POST", "/v1/skills/{id}/versions/{version}/files", "skill files", "Create or update one file of a draft (a commit); honours If-Match. 409 when the path equals another of the version after Unicode NFC normalization or case folding (details.existing names it)", body("FileRequest"), ok(200, "FileWritten"), fails(409), etag(), ifMatchHeader()),
	route("PUT", "/v1/skills/{id}/versions/{version}/files", "skill files", "Set a draft's whole content from a zip (quire push) as one commit: files added and changed, paths the zip lacks deleted, nothing committed when nothing differs; honours If-Match. 409 when two paths collide after NFC normalization or case folding", replaceFilesDoc(), wrap(200, "version", "SkillVersion"), fails(409), etag(), ifMatchHeader()),
	route("GET", "/v1/skills/{id}/versions/{version}/files", "skill files", "A version's files", query("limit", "cursor"), list(200, "files", "File")),
	route("GET", "/v1/skills/{id}/versions/{version}/files/{file_path}", "skill files", "A file's raw bytes; ETag is its blob id. Sandboxed (Content-Security-Policy: sandbox, nosniff); HTML, SVG, XML and scripts come as text/plain", text(200, "*/*"), etag(), conditional()),
	route("DELETE", "/v1/skills/{id}/versions/{version}/files/{file_path}", "skill files", "Delete a file of a draft (a commit); honours If-Match", wrap(200, "version", "SkillVersion"), etag(), ifMatchHeader()),
	route("GET", "/v1/skills/{id}/live", "skills", "The live version and its files (path, size, sha256); ETag is its commit and If-None-Match answers 304; 404 when nothing is live", ok(200, "SkillLive"), etag(), conditional()),
	route("GET", "/v1/skills/{id}/versions/{version}/download", "skill files", "A zip of the version, its files under a folder named for the slug", query("format"), text(200, "application/zip")),

	// Prompts.
	route("POST", "/v1/projects/{projectID}/prompts", "prompts", "Create a prompt", body("MetaCreateRequest"), wrap(201, "prompt", "Asset"), idempotent()),
	route("GET", "/v1/projects/{projectID}/prompts", "prompts", "A project's prompts", query("limit", "cursor"), list(200, "prompts", "Asset")),
	route("GET", "/v1/prompts/{id}", "prompts", "A prompt (id or slug)", wrap(200, "prompt", "Asset")),
	route("PATCH", "/v1/prompts/{id}", "prompts", "Update a prompt", body("MetaRequest"), wrap(200, "prompt", "Asset")),
	route("DELETE", "/v1/prompts/{id}", "prompts", "Delete a prompt and its repository", ok(204, "")),
	route("GET", "/v1/prompts/{id}/versions", "prompt versions", "A prompt's versions, oldest first", query("limit", "cursor", "state"), list(200, "versions", "PromptVersion")),
	route("GET", "/v1/prompts/{id}/versions/{version}", "prompt versions", "A version; ETag is its commit", wrap(200, "version", "PromptVersion"), etag(), conditional()),
	route("DELETE", "/v1/prompts/{id}/versions/{version}", "prompt versions", "Delete a draft", ok(204, "")),
	route("POST", "/v1/prompts/{id}/versions/{version}/publish", "prompt versions", "Publish a draft; it goes live and merges its open review. With the project's review_policy requiring approvals, 409 review_required unless the review is mergeable; an owner may send {override: true, reason} (docs/reviews.md). Malformed JSON is 400", optionalBody("PublishRequest"), wrap(200, "version", "PromptVersion"), etag()),
	route("POST", "/v1/prompts/{id}/versions/{version}/promote", "prompt versions", "Make a published version live (a rollback when older). Takes no body (or a JSON object); malformed JSON is 400", wrap(200, "version", "PromptVersion"), etag()),
	route("POST", "/v1/prompts/{id}/versions/{version}/archive", "prompt versions", "Archive a draft or a published version that is not live. Takes no body (or a JSON object); malformed JSON is 400", wrap(200, "version", "PromptVersion"), etag()),
	route("GET", "/v1/prompts/{id}/diff", "prompt versions", "Unified diff between two versions", requiredQuery("from", "to"), query("format"), ok(200, "Diff"), alsoAs(200, "text/x-diff")),
	route("GET", "/v1/prompts/{id}/history", "history", "A prompt's changes, newest first", query("limit", "cursor"), list(200, "commits", "Commit")),
	route("POST", "/v1/prompts/{id}/versions", "prompt versions", "Open a draft with a template or chat messages and config (from the live version, a version, or empty)", optionalBody("PromptVersionRequest"), wrap(201, "version", "PromptVersion"), etag(), idempotent()),
	route("PATCH", "/v1/prompts/{id}/versions/{version}", "prompt versions", "Edit a draft's template, messages or config (one commit); honours If-Match (\"*\": any commit of the draft)", body("PromptVersionRequest"), wrap(200, "version", "PromptVersion"), etag(), ifMatchHeader()),
	route("GET", "/v1/prompts/{id}/versions/{version}/variables", "prompt versions", "The variables a version's template uses, and its variables_schema (null when none)", ok(200, "Variables")),
	route("POST", "/v1/prompts/{id}/versions/{version}/check", "prompt versions", "Render a version with every sample payload of the prompt: per payload ok, missing variables and partials, schema errors, output size. Renders are not counted", ok(200, "PromptCheck")),
	route("GET", "/v1/prompts/{id}/dependents", "prompts", "The prompts of the same project whose live version, labelled versions or drafts include this one ({{> slug}} or {{> slug@N}}), directly or through other prompts", ok(200, "Dependents")),
	route("GET", "/v1/prompts/{id}/live", "prompts", "The live version, cached, and its files (path, size, sha256); ETag is its commit and If-None-Match answers 304; 404 when nothing is live", ok(200, "PromptLive"), etag(), conditional()),
	route("POST", "/v1/prompts/{id}/render", "render", "Render the live version (or a given version, or the one a label names: {label}) with variables and/or a payload, partials included from the project's prompts; ETag hashes the version's commit and its partials'; 422 lists missing variables and partials (details.missing) or schema errors (details.errors)", optionalBody("RenderRequest"), ok(200, "RenderResponse"), fails(422), etag()),
	route("POST", "/v1/prompts/{id}/versions/{version}/run", "runs", "Render a version ({version}: a number, \"live\" or a label name) as render does (a text prompt becomes one user message) and send it to a model of the operator's providers: model, model_params and provider from the version's config.json, model and provider overridable. Needs write access (it spends money). 422 for missing variables as render; 409 no_provider when no provider is configured or the one named is not; 502 provider_error with the provider's status and message; 503 with Retry-After when the provider keeps answering 429 (docs/runs.md)", optionalBody("RunRequest"), versionRef(), wrap(200, "run", "Run"), fails(409), fails(422), fails(502), fails(503)),
	route("POST", "/v1/prompts/{id}/versions/{version}/evaluations", "evaluations", "Evaluate a version ({version}: a number, \"live\" or a label name): every payload (or those listed), repeat times, sent to the version's model in the background, each output checked by the payload's assertions; against a version number, \"live\" or \"base\" also runs that version for each case. Outputs are cached by what is sent: fresh sends again. Needs write access. 202 with the evaluation, queued; 409 no_provider; 422 when the prompt has no payloads or the version no model (docs/evaluations.md)", optionalBody("EvaluationRequest"), versionRef(), wrap(202, "evaluation", "Evaluation"), fails(409), fails(422)),
	route("GET", "/v1/prompts/{id}/versions/{version}/evaluations", "evaluations", "A version's evaluations, newest first, without their cases", versionRef(), query("limit", "cursor"), list(200, "evaluations", "Evaluation")),
	route("GET", "/v1/prompts/{id}/versions/{version}/evaluations/{evaluationID}", "evaluations", "An evaluation: its state, counts (cases, passed, failed, errored, changed) and usage, and its cases done, each with the head's output and assertions and the other version's", versionRef(), ok(200, "EvaluationView")),
	route("POST", "/v1/prompts/{id}/versions/{version}/evaluations/{evaluationID}/cancel", "evaluations", "Cancel an evaluation: no case is sent once it answers; the cases done stay. 409 when it is finished. Needs write access", versionRef(), wrap(200, "evaluation", "Evaluation"), fails(409)),
	route("POST", "/v1/prompts/{id}/payloads", "payloads", "Create a payload: named sample variables (a commit in the prompt's repository)", body("PayloadRequest"), wrap(201, "payload", "Payload"), idempotent()),
	route("GET", "/v1/prompts/{id}/payloads", "payloads", "A prompt's payloads", query("limit", "cursor"), list(200, "payloads", "Payload")),
	route("GET", "/v1/prompts/{id}/payloads/{payloadID}", "payloads", "A payload", wrap(200, "payload", "Payload")),
	route("PUT", "/v1/prompts/{id}/payloads/{payloadID}", "payloads", "Replace a payload's variables and name", body("PayloadRequest"), wrap(200, "payload", "Payload")),
	route("DELETE", "/v1/prompts/{id}/payloads/{payloadID}", "payloads", "Delete a payload", ok(204, "")),
	route("POST", "/v1/prompts/{id}/cache/purge", "cache", "Drop a prompt's cached reads on every node (project owner)", ok(200, "Purged")),
	route("POST", "/v1/cache/purge", "cache", "Drop every cached prompt read on every node (admin)", ok(200, "Purged")),
	route("GET", "/v1/prompts/{id}/usage", "usage", "Render counts and last use of each version of a prompt", wrap(200, "usage", "PromptUsage")),
}

// apiSchemas are the component schemas, generated from these types.
var apiSchemas = map[string]any{
	"APIError": APIError{},
	"Status": struct {
		Status string `json:"status"`
	}{},
	"LoginRequest": loginRequest{},
	"LoginResponse": struct {
		Token   string      `json:"token"`
		Session sessionView `json:"session"`
		User    userView    `json:"user"`
	}{},
	"Me": struct {
		User      userView `json:"user"`
		Kind      string   `json:"kind" enum:"session,api_key"`
		SessionID string   `json:"session_id,omitempty"`
		APIKey    *keyView `json:"api_key,omitempty"`
	}{},
	"Session": sessionView{},
	"SessionList": struct {
		Sessions []sessionView `json:"sessions"`
	}{},
	"User": userView{},
	"UserUpdated": struct {
		User userView `json:"user"`
		// SessionsRevoked is set when the password changed: how many of
		// the user's other sessions it ended.
		SessionsRevoked *int `json:"sessions_revoked,omitempty"`
	}{},
	"UserRequest":       userRequest{},
	"UserCreateRequest": userCreateRequest{},
	"UserList": struct {
		Users []userView `json:"users"`
	}{},
	"APIKey":     keyView{},
	"KeyRequest": keyRequest{},
	"KeyWithToken": struct {
		APIKey keyView `json:"api_key"`
		Token  string  `json:"token"`
	}{},
	"KeyList": struct {
		APIKeys []keyView `json:"api_keys"`
	}{},
	"MetaRequest":       metaRequest{},
	"MetaCreateRequest": metaCreateRequest{},
	"ProjectRequest":    projectRequest{},
	"Project":           quire.Project{},
	"Member":            quire.Member{},
	"MemberRequest":     memberRequest{},
	"MemberList": struct {
		Members []quire.Member `json:"members"`
	}{},
	"MemberChange": struct {
		Member  quire.Member   `json:"member"`
		Members []quire.Member `json:"members"`
	}{},
	"Asset":       quire.Asset{},
	"BaseRequest": baseRequest{},
	"SkillVersion": struct {
		SkillID string `json:"skill_id"`
		quire.Version
	}{},
	"PromptVersion": promptView{},
	"SkillLive": struct {
		Version struct {
			SkillID string `json:"skill_id"`
			quire.Version
		} `json:"version"`
		Files []app.LiveFile `json:"files"`
	}{},
	"PromptLive": struct {
		Version promptView     `json:"version"`
		Files   []app.LiveFile `json:"files"`
	}{},
	"PromptVersionRequest": promptVersionRequest{},
	"RenderRequest":        renderRequest{},
	"RenderResponse":       renderResponse{},
	"RunRequest":           runRequest{},
	"Run":                  app.Run{},
	"EvaluationRequest":    evaluationRequest{},
	"Evaluation":           quire.Evaluation{},
	"EvaluationView":       app.EvaluationView{},
	"PayloadRequest":       payloadRequest{},
	"Payload":              quire.Payload{},
	"Variables": struct {
		PromptID  string   `json:"prompt_id"`
		Version   int      `json:"version"`
		Commit    string   `json:"commit"`
		Variables []any    `json:"variables"`
		Required  []string `json:"required"`
		// VariablesSchema is the version's JSON Schema, null when none.
		VariablesSchema json.RawMessage `json:"variables_schema"`
	}{},
	"PromptCheck": struct {
		PromptID string             `json:"prompt_id"`
		Version  int                `json:"version"`
		Commit   string             `json:"commit"`
		OK       bool               `json:"ok"`
		Payloads []app.PayloadCheck `json:"payloads"`
	}{},
	"Dependents": struct {
		PromptID   string          `json:"prompt_id"`
		Dependents []app.Dependent `json:"dependents"`
	}{},
	"Purged": struct {
		Purged string `json:"purged"`
	}{},
	"File":        quire.File{},
	"FileRequest": fileRequest{},
	"FileWritten": struct {
		Version struct {
			SkillID string `json:"skill_id"`
			quire.Version
		} `json:"version"`
		File quire.File `json:"file"`
	}{},
	"Diff": struct {
		From  int              `json:"from"`
		To    int              `json:"to"`
		Files []quire.FileDiff `json:"files"`
	}{},
	"Commit":            quire.Commit{},
	"DiscoveryIndex":    discoveryIndexView{},
	"ProtectedResource": ProtectedResource{},
	"DiscoveryIndexV1":  discoveryIndexV1{},
	"Activity":          quire.Activity{},
	"PromptUsage":       quire.PromptUsage{},
}

// apiQuery describes the query parameters routes take.
var apiQuery = map[string]struct {
	typ, desc string
}{
	"limit":   {"integer", "page size, 1 to 500 (default 50)"},
	"cursor":  {"string", "the next_cursor of the previous page"},
	"state":   {"string", "only versions (draft, published, archived) or reviews (open, merged, closed) in this state; anything else is 400"},
	"from":    {"integer", "the version to diff from"},
	"to":      {"integer", "the version to diff to"},
	"format":  {"string", "diff: \"json\" (default) or \"patch\" for text/x-diff; download: \"zip\"; anything else is 400"},
	"user_id": {"string", "another user's sessions (admin)"},
	"all":     {"boolean", "every user's keys (admin)"},
	"after":   {"string", "an event id: only events after it (polling)"},
	"types":   {"string", "comma-separated event types; an unknown one is 422"},
	"assets":  {"string", "comma-separated asset ids or slugs"},
}

// apiRoute is one documented route; opts say what it takes and answers.
type apiRoute struct {
	method, path, tag, summary string
	opts                       []routeOpt
}

func route(method, path, tag, summary string, opts ...routeOpt) apiRoute {
	return apiRoute{method, path, tag, summary, opts}
}

// docBuilder builds the document, generating component schemas on demand.
type docBuilder struct {
	gen     *openapi3gen.Generator
	schemas openapi3.Schemas
	err     error
}

// ref returns a reference to the component schema name, generating it
// from its Go type the first time.
func (b *docBuilder) ref(name string) *openapi3.SchemaRef {
	if _, done := b.schemas[name]; !done {
		v, known := schemaNamed(name)
		if !known {
			panic("openapi: no schema named " + name + " in apiSchemaTables")
		}
		sr, err := b.gen.NewSchemaRefForValue(v, b.schemas)
		if err != nil && b.err == nil {
			b.err = err
		}
		if sr == nil {
			sr = openapi3.NewSchemaRef("", openapi3.NewObjectSchema())
		}
		to31(sr.Value)
		b.schemas[name] = sr
	}
	return openapi3.NewSchemaRef("#/components/schemas/"+name, b.schemas[name].Value)
}

// to31 rewrites OpenAPI 3.0's nullable as a 3.1 type array with "null".
func to31(s *openapi3.Schema) {
	if s == nil {
		return
	}
	if s.Nullable && s.Type != nil && len(*s.Type) == 1 {
		t := openapi3.Types{(*s.Type)[0], "null"}
		s.Type, s.Nullable = &t, false
	}
	for _, p := range s.Properties {
		if p.Ref == "" {
			to31(p.Value)
		}
	}
	if s.Items != nil && s.Items.Ref == "" {
		to31(s.Items.Value)
	}
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// schemaNamed finds a component schema's type in apiSchemaTables.
func schemaNamed(name string) (any, bool) {
	for _, t := range apiSchemaTables {
		if v, ok := t[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// buildOpenAPI builds the document from apiRouteTables.
func buildOpenAPI() (*openapi3.T, error) {
	requests := map[reflect.Type]bool{}
	for _, t := range apiSchemaTables {
		for name, v := range t {
			if strings.HasSuffix(name, "Request") {
				requests[reflect.TypeOf(v)] = true
			}
		}
	}
	b := &docBuilder{
		gen:     openapi3gen.NewGenerator(openapi3gen.SchemaCustomizer(customizeSchema(requests))),
		schemas: openapi3.Schemas{},
	}
	doc := &openapi3.T{
		OpenAPI: "3.1.0",
		Info: &openapi3.Info{
			Title: "quire",
			// SemVer of the API contract: bumped with every change to it
			// (CHANGELOG.md); a breaking change bumps the major.
			Version: APIVersion,
			Description: "Versioned prompt templates and agent skills, each a bare git repository. " +
				"Authenticate with Authorization: Bearer <token>: a sess_ login session or an ak_ API key. " +
				"Every error is an APIError.",
			// The truth: the repository carries no license, so none is
			// granted; the owner may choose one (docs/api.md).
			License: &openapi3.License{Name: "No license granted (all rights reserved)"},
		},
		// Relative: the document is served by the server it describes.
		Servers: openapi3.Servers{{URL: "/", Description: "the server that serves this document"}},
		Paths:   openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas: b.schemas,
			SecuritySchemes: openapi3.SecuritySchemes{
				"bearer": &openapi3.SecuritySchemeRef{Value: openapi3.NewJWTSecurityScheme().WithBearerFormat("sess_… or ak_… token")},
			},
		},
		Security: openapi3.SecurityRequirements{openapi3.NewSecurityRequirement().Authenticate("bearer")},
	}
	tags := map[string]bool{}
	var all []apiRoute
	for _, t := range apiRouteTables {
		all = append(all, t...)
	}
	for _, rt := range all {
		tags[rt.tag] = true
		path := docPath(rt.path)
		addOperation(doc, b, rt, path, operationID(rt.method, path))
		// Every route under one skill or prompt is also served under its
		// project (Server.mountAsset), and documented there from the same line.
		for _, kind := range []string{"skills", "prompts"} {
			if rest, ok := strings.CutPrefix(path, "/v1/"+kind+"/{id}"); ok {
				scoped := "/v1/projects/{project}/" + kind + "/{slug}" + rest
				addOperation(doc, b, rt, scoped, operationID(rt.method, scoped))
			}
		}
	}
	addWebhooks(doc, b)
	if err := applyRequestLimits(b.schemas); err != nil && b.err == nil {
		b.err = err
	}
	names := make([]string, 0, len(tags))
	for t := range tags {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		doc.Tags = append(doc.Tags, &openapi3.Tag{Name: t, Description: tagDescriptions[t]})
	}
	return doc, b.err
}

// tagDescriptions say what each tag's operations are about
// (TestOpenAPITellsTheTruth wants one for every tag).
var tagDescriptions = map[string]string{
	"api-keys":        "API keys: created by a user, shown once, scoped (read, write, admin) and optionally limited to projects",
	"auth":            "Sign-in, the caller's identity and login sessions",
	"cache":           "The prompt cache: purge what a node keeps",
	"discovery":       "Agent Skills discovery: the index of live skills and their files, readable anonymously for public projects",
	"events":          "A project's events: a live Server-Sent Events stream, or pages for polling",
	"git":             "Smart HTTP git: clone, fetch and push skills and prompts with the stock git client",
	"history":         "The commits of an asset, its versions log and activity",
	"mcp":             "The Model Context Protocol endpoint over the same use cases",
	"oauth":           "quire as the OAuth 2.1 authorization server of /mcp: metadata, token, client registration, revocation (the consent page is the web UI's)",
	"operations":      "Health, readiness, metrics and this document",
	"payloads":        "Named sets of sample variables of a prompt: its test cases",
	"projects":        "Projects, their members and visibility",
	"prompt versions": "A prompt's versions: drafts, publish, promote, archive, diff, dependents",
	"prompts":         "Prompts: versioned templates, rendered live or by version or label",
	"render":          "Rendering a prompt with variables",
	"runs":            "Runs: a prompt version rendered and sent to a model of the operator's providers",
	"evaluations":     "Evaluations: a version's payloads sent to its model in the background, outputs checked by the payloads' assertions and compared with another version's, stored on refs/evaluations/{id}",
	"reviews":         "Reviews of drafts: comments, approvals, merges",
	"skill files":     "The files of a skill version: upserts, reads, archives",
	"skill versions":  "A skill's versions: drafts, publish, promote, archive, diff",
	"skills":          "Skills: versioned folders of agent instructions and files",
	"usage":           "Render counts of prompts",
	"users":           "User accounts (admins)",
	"webhooks":        "Webhooks: signed deliveries of a project's events, their attempts and redeliveries",
	"skill labels":    "Labels of a skill: names pinned to its published versions (staging, prod, ...)",
	"prompt labels":   "Labels of a prompt: names pinned to its published versions, renderable by name",
	"skill reviews":   "Reviews of a skill's drafts: comments, approvals, merges",
	"prompt reviews":  "Reviews of a prompt's drafts: comments, approvals, merges",
}

// queryEnums are the values a query parameter takes, by the path suffix
// of the routes that read it: an enum, so generated clients type it.
var queryEnums = map[string][]struct {
	suffix string
	values []any
}{
	"state": {
		{"/versions", []any{"draft", "published", "archived"}},
		{"/reviews", []any{"open", "merged", "closed"}},
	},
	"format": {
		{"/diff", []any{"json", "patch"}},
		{"/download", []any{"zip"}},
	},
}

// addOperation documents rt at path.
func addOperation(doc *openapi3.T, b *docBuilder, rt apiRoute, path, id string) {
	op := openapi3.NewOperation()
	op.Summary = rt.summary
	op.Tags = []string{rt.tag}
	op.OperationID = id
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		p := openapi3.NewPathParameter(m[1]).WithSchema(&openapi3.Schema{Type: &openapi3.Types{"string"}})
		switch m[1] {
		case "version":
			p.Schema = openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"integer"}, Min: ptr(1.0)})
			p.Description = "version number"
		case "id":
			p.Description = "id, or a slug that names one asset among the projects the caller sees (409 with details.ids otherwise)"
		case "project":
			p.Description = "project id or slug"
		case "slug":
			p.Description = "slug (or id) of the asset within the project"
		case "file_path":
			p.Description = "path of the file in the version; may hold /"
		}
		op.AddParameter(p)
	}
	for _, o := range rt.opts {
		o(op, b)
	}
	if op.Description == "" {
		op.Description = rt.summary
	}
	for _, p := range op.Parameters {
		for _, e := range queryEnums[p.Value.Name] {
			if p.Value.In == "query" && strings.HasSuffix(path, e.suffix) && p.Value.Schema != nil {
				p.Value.Schema.Value.Enum = e.values
			}
		}
	}
	// The failures every route of its kind can answer; no "default": a
	// status the document does not list for the operation fails the
	// response check of the test suite (internal/testenv/contract.go).
	statuses := []int{http.StatusInternalServerError}
	v1 := strings.HasPrefix(path, "/v1/")
	// The request limiter runs after authentication on every route of
	// the API, the discovery index and git (Server.routes).
	if v1 || strings.HasPrefix(path, "/.well-known/") || strings.HasPrefix(path, "/git/") {
		statuses = append(statuses, http.StatusTooManyRequests, http.StatusUnauthorized)
	}
	if v1 {
		statuses = append(statuses, http.StatusServiceUnavailable)
		if op.Security == nil {
			statuses = append(statuses, http.StatusForbidden)
		}
	}
	if strings.Contains(path, "{") && !strings.HasPrefix(path, "/git/") {
		statuses = append(statuses, http.StatusNotFound)
	}
	if strings.Contains(path, "{id}") {
		statuses = append(statuses, http.StatusConflict) // a slug naming several assets
	}
	read := rt.method == http.MethodGet || rt.method == http.MethodHead
	if len(op.Parameters) > 0 || op.RequestBody != nil || !read {
		statuses = append(statuses, http.StatusBadRequest)
	}
	if !read && rt.method != http.MethodDelete {
		statuses = append(statuses, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	if !read && v1 {
		// Writes: a state or uniqueness conflict, a rule the input
		// breaks, a full disk.
		statuses = append(statuses, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusInsufficientStorage)
	}
	for _, st := range statuses {
		if op.Responses.Status(st) == nil {
			op.AddResponse(st, errorResponse(b, st))
		}
	}
	for code, r := range op.Responses.Map() {
		if rt.method == http.MethodHead {
			r.Value.Content = nil // a HEAD answers headers only
		}
		if code == "201" {
			addHeader(r.Value, "Location", "the path of what was created")
		}
	}
	item := doc.Paths.Value(path)
	if item == nil {
		item = &openapi3.PathItem{}
		doc.Paths.Set(path, item)
	}
	item.SetOperation(rt.method, op)
}

// docParams renames path parameters in the document where the router's
// name is not the one users read: gin needs one name per position, and
// "/projects/:projectID" came first.
var docParams = map[string]string{"projectID": "project"}

// docPath is path with its parameters named as the document names them.
func docPath(path string) string {
	return pathParam.ReplaceAllStringFunc(path, func(m string) string {
		if to, ok := docParams[m[1:len(m)-1]]; ok {
			return "{" + to + "}"
		}
		return m
	})
}

func ptr[T any](v T) *T { return &v }

// operationID makes an id like "get_v1_skills_id_versions_version".
func operationID(method, path string) string {
	r := strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_")
	return strings.ToLower(method) + strings.TrimRight(r.Replace(path), "_")
}

var openAPI struct {
	once sync.Once
	json []byte
	err  error
}

// OpenAPI returns the document as JSON.
func OpenAPI() ([]byte, error) {
	openAPI.once.Do(func() {
		doc, err := buildOpenAPI()
		if err != nil {
			openAPI.err = err
			return
		}
		openAPI.json, openAPI.err = json.MarshalIndent(doc, "", "  ")
	})
	return openAPI.json, openAPI.err
}

func (s *Server) serveOpenAPI(c *gin.Context) {
	b, err := OpenAPI()
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json", b)
}

// Route is one route the server answers, as gin writes it (":id", "*path").
type Route struct {
	Method string
	Path   string
}

// Routes lists the routes the API answers (not the browser UI's, which
// MountUI adds: they are pages, not API).
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range s.engine.Routes() {
		if uiRoute(r.Path) {
			continue
		}
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	return out
}

// OpenAPIPath turns a gin path into the OpenAPI form: ":id" and "*path"
// become "{id}" and "{path}", named as the document names them (docParams).
func OpenAPIPath(ginPath string) string {
	parts := strings.Split(ginPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return docPath(strings.Join(parts, "/"))
}
