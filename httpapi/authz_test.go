package httpapi_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

// The authorization matrix: every route the router serves, asked by each
// kind of caller, with the status each must get. authzTable has one row
// per route (a route may have more, "METHOD /pattern #variant"), so a new
// route without a row fails TestAuthorizationMatrix.

// cred is a kind of caller.
type cred int

const (
	credNone      cred = iota // no Authorization header
	credMalformed             // Bearer with a token of no known shape
	credUnknown               // a well-formed key token naming no key
	credExpired               // a session past its expiry
	credRevoked               // a session revoked by id
	credReadKey               // API keys of the admin user, by scope
	credWriteKey
	credAdminKey
	credOtherKey // an admin-scope key of the admin user limited to another project
	credViewer   // sessions of members of the project, by role
	credEditor
	credOwner
	credAdmin // a session of the admin user
	numCreds
)

var credNames = [numCreds]string{"none", "malformed", "unknown", "expired-session", "revoked-session",
	"read-key", "write-key", "admin-key", "other-project-key", "viewer", "editor", "owner", "admin"}

func (c cred) String() string { return credNames[c] }

// OK in a policy stands for the row's success status.
const OK = 0

// policies give the status of each kind of caller, in cred order.
var policies = map[string][numCreds]int{
	// No credential needed; whatever is sent is ignored.
	"public": {OK, OK, OK, OK, OK, OK, OK, OK, OK, OK, OK, OK, OK},
	// No credential, or a valid one: the answer depends on what it sees.
	"optional-credential": {OK, 401, 401, 401, 401, OK, OK, OK, OK, OK, OK, OK, OK},
	// Any valid credential.
	"any-user": {401, 401, 401, 401, 401, OK, OK, OK, OK, OK, OK, OK, OK},
	// Account management (keys, projects of one's own): a session, or a
	// key with the admin scope reaching every project the user can.
	"account-admin": {401, 401, 401, 401, 401, 403, 403, OK, 403, OK, OK, OK, OK},
	// Global admin: an admin user's session or unrestricted admin key.
	"admin-only": {401, 401, 401, 401, 401, 403, 403, OK, 403, 403, 403, 403, OK},
	// Another user's record: invisible (404) unless admin.
	"admin-else-404": {401, 401, 401, 401, 401, 404, 404, OK, 404, 404, 404, 404, OK},
	// The admin user's own record (the keys act as the admin user):
	// visible to the admin's credentials, 404 to the members.
	"admin-user-else-404": {401, 401, 401, 401, 401, OK, OK, OK, OK, 404, 404, 404, OK},
	// Managing one of the admin user's keys: needs an unrestricted admin
	// key or a session; the members cannot see it.
	"own-key-admin": {401, 401, 401, 401, 401, 403, 403, OK, 403, 404, 404, 404, OK},
	// Inside the project: read (viewer), write (editor), admin (owner).
	"project-read":  {401, 401, 401, 401, 401, OK, OK, OK, 404, OK, OK, OK, OK},
	"project-write": {401, 401, 401, 401, 401, 403, OK, OK, 404, 403, OK, OK, OK},
	"project-owner": {401, 401, 401, 401, 401, 403, 403, OK, 404, 403, 403, OK, OK},
	// Methods the git endpoints do not speak: 405 before any credential
	// is looked at.
	"method-not-allowed": {405, 405, 405, 405, 405, 405, 405, 405, 405, 405, 405, 405, 405},
}

// authzRow is one route of the matrix.
type authzRow struct {
	policy string
	ok     int          // status of a success
	over   map[cred]int // cells that differ from the policy
	// req builds the request of one cell. fresh is set when the cell is
	// to succeed: a route that destroys or uses up its target makes a new
	// one then, so no cell changes what another one finds.
	req func(f *authzFixture, fresh bool) authzReq
	// consumes marks routes that end the caller's own session: each
	// session cell logs in anew.
	consumes bool
}

type authzReq struct {
	path    string
	body    any
	headers []string
}

func (r authzRow) want(c cred) int {
	if s, found := r.over[c]; found {
		return s
	}
	s := policies[r.policy][c]
	if s == OK {
		return r.ok
	}
	return s
}

func authzPath(path string) func(*authzFixture, bool) authzReq {
	return func(f *authzFixture, _ bool) authzReq { return authzReq{path: f.expand(path)} }
}

func authzBody(path string, body any, headers ...string) func(*authzFixture, bool) authzReq {
	return func(f *authzFixture, _ bool) authzReq {
		return authzReq{path: f.expand(path), body: body, headers: headers}
	}
}

var keysAre400 = map[cred]int{credReadKey: 400, credWriteKey: 400, credAdminKey: 400, credOtherKey: 400}

var authzTable = map[string]authzRow{
	"GET /healthz":      {policy: "public", ok: 200, req: authzPath("/healthz")},
	"GET /readyz":       {policy: "public", ok: 200, req: authzPath("/readyz")},
	"GET /openapi.json": {policy: "public", ok: 200, req: authzPath("/openapi.json")},
	"GET /.well-known/oauth-protected-resource":     {policy: "public", ok: 200, req: authzPath("/.well-known/oauth-protected-resource")},
	"GET /.well-known/oauth-protected-resource/mcp": {policy: "public", ok: 200, req: authzPath("/.well-known/oauth-protected-resource/mcp")},
	// The OAuth authorization server (oauth/): public endpoints whose
	// answers do not depend on any bearer sent; errors are OAuth's.
	"GET /.well-known/oauth-authorization-server": {policy: "public", ok: 200, req: authzPath("/.well-known/oauth-authorization-server")},
	"POST /oauth/register":                        {policy: "public", ok: 201, req: authzBody("/oauth/register", map[string]any{"client_name": "authz", "redirect_uris": []string{"http://127.0.0.1/cb"}})},
	"POST /oauth/token":                           {policy: "public", ok: 401, req: authzBody("/oauth/token", "grant_type=authorization_code&code=qoc_x&code_verifier=v&client_id=nobody&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb", "Content-Type: application/x-www-form-urlencoded")},
	"OPTIONS /oauth/register":                     {policy: "public", ok: 204, req: authzPath("/oauth/register")},
	"OPTIONS /oauth/token":                        {policy: "public", ok: 204, req: authzPath("/oauth/token")},
	"OPTIONS /oauth/revoke":                       {policy: "public", ok: 204, req: authzPath("/oauth/revoke")},
	"POST /oauth/revoke":                          {policy: "public", ok: 401, req: authzBody("/oauth/revoke", "token=qoa_x&client_id=nobody", "Content-Type: application/x-www-form-urlencoded")},
	"POST /v1/auth/login":                         {policy: "public", ok: 200, req: authzBody("/v1/auth/login", map[string]string{"email": testenv.AdminEmail, "password": testenv.AdminPassword})},

	// Auth.
	"GET /v1/auth/me":         {policy: "any-user", ok: 200, req: authzPath("/v1/auth/me")},
	"GET /v1/auth/sessions":   {policy: "any-user", ok: 200, req: authzPath("/v1/auth/sessions")},
	"DELETE /v1/auth/session": {policy: "any-user", ok: 204, over: keysAre400, consumes: true, req: authzPath("/v1/auth/session")},
	"DELETE /v1/auth/sessions/:sessionID #own": {policy: "account-admin", ok: 204, over: map[cred]int{credViewer: 404, credEditor: 404, credOwner: 404},
		req: func(f *authzFixture, fresh bool) authzReq {
			id := f.adminSession
			if fresh {
				id = f.newAdminSession()
			}
			return authzReq{path: "/v1/auth/sessions/" + id}
		}},
	"DELETE /v1/auth/sessions/:sessionID": {policy: "admin-else-404", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		id := f.targetSession
		if fresh {
			id = f.newSession()
		}
		return authzReq{path: "/v1/auth/sessions/" + id}
	}},

	// Users.
	"POST /v1/users": {policy: "admin-only", ok: 201, req: func(f *authzFixture, _ bool) authzReq {
		return authzReq{path: "/v1/users", body: map[string]string{"email": f.unique("u") + "@authz.test", "password": "long-enough"}}
	}},
	"GET /v1/users":               {policy: "admin-only", ok: 200, req: authzPath("/v1/users")},
	"GET /v1/users/:userID":       {policy: "admin-else-404", ok: 200, req: authzPath("/v1/users/{user}")},
	"PATCH /v1/users/:userID":     {policy: "admin-else-404", ok: 200, req: authzBody("/v1/users/{user}", map[string]string{"name": "Target"})},
	"GET /v1/users/:userID #me":   {policy: "any-user", ok: 200, req: authzPath("/v1/users/me")},
	"PATCH /v1/users/:userID #me": {policy: "account-admin", ok: 200, req: authzBody("/v1/users/me", map[string]string{"name": "Me"})},
	"DELETE /v1/users/:userID": {policy: "admin-only", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		id := f.targetUser
		if fresh {
			id, _ = f.e.CreateUser(f.unique("gone") + "@authz.test")
		}
		return authzReq{path: "/v1/users/" + id}
	}},

	// API keys (all of the admin user).
	"POST /v1/api-keys":       {policy: "account-admin", ok: 201, req: authzBody("/v1/api-keys", map[string]string{"name": "made", "scope": "read"})},
	"GET /v1/api-keys":        {policy: "any-user", ok: 200, req: authzPath("/v1/api-keys")},
	"GET /v1/api-keys/:keyID": {policy: "admin-user-else-404", ok: 200, req: authzPath("/v1/api-keys/{key}")},
	"DELETE /v1/api-keys/:keyID": {policy: "own-key-admin", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		id := f.targetKey
		if fresh {
			id = f.newKey()
		}
		return authzReq{path: "/v1/api-keys/" + id}
	}},
	"POST /v1/api-keys/:keyID/rotate": {policy: "own-key-admin", ok: 200, req: authzPath("/v1/api-keys/{key}/rotate")},

	// Projects and members.
	"POST /v1/projects": {policy: "account-admin", ok: 201, req: func(f *authzFixture, _ bool) authzReq {
		return authzReq{path: "/v1/projects", body: map[string]string{"name": f.unique("Made")}}
	}},
	"GET /v1/projects":                     {policy: "any-user", ok: 200, req: authzPath("/v1/projects")},
	"GET /v1/projects/:projectID":          {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}")},
	"PATCH /v1/projects/:projectID":        {policy: "project-owner", ok: 200, req: authzBody("/v1/projects/{project}", map[string]string{"description": "changed"})},
	"GET /v1/projects/:projectID/members":  {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/members")},
	"GET /v1/projects/:projectID/activity": {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/activity")},
	// Events and webhooks (docs/events.md): the log is read access, webhooks the owner's.
	"GET /v1/projects/:projectID/events": {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/events?limit=5")},
	"POST /v1/projects/:projectID/webhooks": {policy: "project-owner", ok: 201, req: authzBody("/v1/projects/{project}/webhooks",
		map[string]any{"url": "http://192.0.2.1/hook", "events": []string{"ping"}})},
	"GET /v1/projects/:projectID/webhooks":                           {policy: "project-owner", ok: 200, req: authzPath("/v1/projects/{project}/webhooks")},
	"GET /v1/projects/:projectID/webhooks/:webhookID":                {policy: "project-owner", ok: 200, req: authzHook("", nil)},
	"PATCH /v1/projects/:projectID/webhooks/:webhookID":              {policy: "project-owner", ok: 200, req: authzHook("", map[string]string{"description": "x"})},
	"DELETE /v1/projects/:projectID/webhooks/:webhookID":             {policy: "project-owner", ok: 204, req: authzHook("", nil)},
	"POST /v1/projects/:projectID/webhooks/:webhookID/rotate-secret": {policy: "project-owner", ok: 200, req: authzHook("/rotate-secret", nil)},
	"POST /v1/projects/:projectID/webhooks/:webhookID/ping":          {policy: "project-owner", ok: 202, req: authzHook("/ping", nil)},
	"GET /v1/projects/:projectID/webhooks/:webhookID/deliveries":     {policy: "project-owner", ok: 200, req: authzHook("/deliveries", nil)},
	// No attempt exists: a caller who may redeliver learns it is not found;
	// one who may not is refused first.
	"POST /v1/projects/:projectID/webhooks/:webhookID/deliveries/:deliveryID/redeliver": {policy: "project-owner", ok: 404, req: authzHook("/deliveries/none/redeliver", nil)},
	"DELETE /v1/projects/:projectID": {policy: "project-owner", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		id := f.project
		if fresh {
			id = f.newProject()
		}
		return authzReq{path: "/v1/projects/" + id}
	}},
	"POST /v1/projects/:projectID/members": {policy: "project-owner", ok: 200, req: func(f *authzFixture, _ bool) authzReq {
		return authzReq{path: f.expand("/v1/projects/{project}/members"), body: map[string]string{"user_id": f.extraUser, "role": "viewer"}}
	}},
	"PUT /v1/projects/:projectID/members/:userID": {policy: "project-owner", ok: 200, req: authzBody("/v1/projects/{project}/members/{extra}", map[string]string{"role": "viewer"})},
	"DELETE /v1/projects/:projectID/members/:userID": {policy: "project-owner", ok: 204, req: func(f *authzFixture, _ bool) authzReq {
		f.e.Must(200, "PUT", f.expand("/v1/projects/{project}/members/{extra}"), f.e.Admin, map[string]string{"role": "viewer"})
		return authzReq{path: f.expand("/v1/projects/{project}/members/{extra}")}
	}},

	// Skills.
	"POST /v1/projects/:projectID/skills": {policy: "project-write", ok: 201, req: func(f *authzFixture, _ bool) authzReq {
		return authzReq{path: f.expand("/v1/projects/{project}/skills"), body: map[string]string{"name": f.unique("Skill")}}
	}},
	"GET /v1/projects/:projectID/skills": {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/skills")},
	"GET /v1/skills/:id":                 {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}")},
	"PATCH /v1/skills/:id":               {policy: "project-write", ok: 200, req: authzBody("/v1/skills/{skill}", map[string]string{"description": "changed"})},
	"DELETE /v1/skills/:id": {policy: "project-write", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		id := f.skill
		if fresh {
			id = f.e.CreateSkill(f.e.Admin, f.project, f.unique("gone"))
		}
		return authzReq{path: "/v1/skills/" + id}
	}},
	"GET /v1/skills/:id/versions":  {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions")},
	"POST /v1/skills/:id/versions": {policy: "project-write", ok: 201, req: authzPath("/v1/skills/{skill}/versions")},
	"POST /v1/skills/:id/versions/upload": {policy: "project-write", ok: 201, req: func(f *authzFixture, _ bool) authzReq {
		return authzReq{path: f.expand("/v1/skills/{skill}/versions/upload"), body: f.zip, headers: []string{"Content-Type: application/zip"}}
	}},
	"GET /v1/skills/:id/versions/:version": {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions/1")},
	"DELETE /v1/skills/:id/versions/:version": {policy: "project-write", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		return authzReq{path: f.skillVersion(fresh, "")}
	}},
	"POST /v1/skills/:id/versions/:version/publish": {policy: "project-write", ok: 200, req: func(f *authzFixture, fresh bool) authzReq {
		return authzReq{path: f.skillVersion(fresh, "/publish")}
	}},
	"POST /v1/skills/:id/versions/:version/promote": {policy: "project-write", ok: 200, req: authzPath("/v1/skills/{skill}/versions/1/promote")},
	"POST /v1/skills/:id/versions/:version/archive": {policy: "project-write", ok: 200, req: func(f *authzFixture, fresh bool) authzReq {
		return authzReq{path: f.skillVersion(fresh, "/archive")}
	}},
	"GET /v1/skills/:id/versions/:version/files": {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions/1/files")},
	"POST /v1/skills/:id/versions/:version/files": {policy: "project-write", ok: 200,
		req: authzBody("/v1/skills/{skill}/versions/2/files", map[string]string{"file_path": "notes.txt", "content": "x"})},
	// quire push (push.go): a fresh draft each success, so draft 2 keeps
	// the files other rows read.
	"PUT /v1/skills/:id/versions/:version/files": {policy: "project-write", ok: 200, req: func(f *authzFixture, fresh bool) authzReq {
		path := f.expand("/v1/skills/{skill}/versions/2/files")
		if fresh {
			path = f.skillVersion(true, "/files")
		}
		return authzReq{path: path, body: f.zip, headers: []string{"Content-Type: application/zip"}}
	}},
	"GET /v1/skills/:id/versions/:version/files/*file_path": {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions/1/files/a.txt")},
	"DELETE /v1/skills/:id/versions/:version/files/*file_path": {policy: "project-write", ok: 200, req: func(f *authzFixture, fresh bool) authzReq {
		name := "keep.txt"
		if fresh {
			name = f.unique("gone") + ".txt"
			f.e.Must(200, "POST", f.expand("/v1/skills/{skill}/versions/2/files"), f.e.Admin, map[string]string{"file_path": name, "content": "x"})
		}
		return authzReq{path: f.expand("/v1/skills/{skill}/versions/2/files/" + name)}
	}},
	"GET /v1/skills/:id/versions/:version/download": {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions/1/download")},
	// Archives and discovery (discovery.go). The fixture's project is
	// private: without a credential the index is empty and its files are
	// not found; the project's own index says "sign in".
	"GET /v1/skills/:id/versions/:version/archive.zip":      {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions/live/archive.zip")},
	"GET /v1/skills/:id/versions/:version/archive.tar.gz":   {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions/1/archive.tar.gz")},
	"HEAD /v1/skills/:id/versions/:version/archive.zip":     {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions/1/archive.zip")},
	"HEAD /v1/skills/:id/versions/:version/archive.tar.gz":  {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/versions/live/archive.tar.gz")},
	"GET /.well-known/agent-skills/index.json":              {policy: "optional-credential", ok: 200, req: authzPath("/.well-known/agent-skills/index.json")},
	"HEAD /.well-known/agent-skills/index.json":             {policy: "optional-credential", ok: 200, req: authzPath("/.well-known/agent-skills/index.json")},
	"GET /.well-known/agent-skills/:name/*path":             {policy: "project-read", ok: 200, over: map[cred]int{credNone: 404}, req: authzPath("/.well-known/agent-skills/authz-skill/SKILL.md")},
	"HEAD /.well-known/agent-skills/:name/*path":            {policy: "project-read", ok: 200, over: map[cred]int{credNone: 404}, req: authzPath("/.well-known/agent-skills/authz-skill/a.txt")},
	"GET /v1/projects/:projectID/agent-skills/index.json":   {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/agent-skills/index.json")},
	"HEAD /v1/projects/:projectID/agent-skills/index.json":  {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/agent-skills/index.json")},
	"GET /v1/projects/:projectID/agent-skills/:name/*path":  {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/agent-skills/authz-skill/SKILL.md")},
	"HEAD /v1/projects/:projectID/agent-skills/:name/*path": {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/agent-skills/authz-skill/SKILL.md")},
	// The v0.1 path, and a project's indexes where installers given its
	// URL look: as the routes above.
	"GET /.well-known/skills/index.json":                                {policy: "optional-credential", ok: 200, req: authzPath("/.well-known/skills/index.json")},
	"HEAD /.well-known/skills/index.json":                               {policy: "optional-credential", ok: 200, req: authzPath("/.well-known/skills/index.json")},
	"GET /.well-known/skills/:name/*path":                               {policy: "project-read", ok: 200, over: map[cred]int{credNone: 404}, req: authzPath("/.well-known/skills/authz-skill/SKILL.md")},
	"HEAD /.well-known/skills/:name/*path":                              {policy: "project-read", ok: 200, over: map[cred]int{credNone: 404}, req: authzPath("/.well-known/skills/authz-skill/a.txt")},
	"GET /v1/projects/:projectID/.well-known/agent-skills/index.json":   {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/.well-known/agent-skills/index.json")},
	"HEAD /v1/projects/:projectID/.well-known/agent-skills/index.json":  {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/.well-known/agent-skills/index.json")},
	"GET /v1/projects/:projectID/.well-known/agent-skills/:name/*path":  {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/.well-known/agent-skills/authz-skill/SKILL.md")},
	"HEAD /v1/projects/:projectID/.well-known/agent-skills/:name/*path": {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/.well-known/agent-skills/authz-skill/SKILL.md")},
	"GET /v1/projects/:projectID/.well-known/skills/index.json":         {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/.well-known/skills/index.json")},
	"HEAD /v1/projects/:projectID/.well-known/skills/index.json":        {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/.well-known/skills/index.json")},
	"GET /v1/projects/:projectID/.well-known/skills/:name/*path":        {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/.well-known/skills/authz-skill/SKILL.md")},
	"HEAD /v1/projects/:projectID/.well-known/skills/:name/*path":       {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/.well-known/skills/authz-skill/SKILL.md")},
	"GET /v1/skills/:id/diff":                                           {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/diff?from=1&to=2")},
	"GET /v1/skills/:id/history":                                        {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/history")},
	"GET /v1/skills/:id/live":                                           {policy: "project-read", ok: 200, req: authzPath("/v1/skills/{skill}/live")},

	// Prompts.
	"POST /v1/projects/:projectID/prompts": {policy: "project-write", ok: 201, req: func(f *authzFixture, _ bool) authzReq {
		return authzReq{path: f.expand("/v1/projects/{project}/prompts"), body: map[string]string{"name": f.unique("Prompt")}}
	}},
	"GET /v1/projects/:projectID/prompts": {policy: "project-read", ok: 200, req: authzPath("/v1/projects/{project}/prompts")},
	"GET /v1/prompts/:id":                 {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}")},
	"PATCH /v1/prompts/:id":               {policy: "project-write", ok: 200, req: authzBody("/v1/prompts/{prompt}", map[string]string{"description": "changed"})},
	"DELETE /v1/prompts/:id": {policy: "project-write", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		id := f.prompt
		if fresh {
			id = f.e.CreatePrompt(f.e.Admin, f.project, f.unique("gone"))
		}
		return authzReq{path: "/v1/prompts/" + id}
	}},
	"GET /v1/prompts/:id/versions":          {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/versions")},
	"POST /v1/prompts/:id/versions":         {policy: "project-write", ok: 201, req: authzBody("/v1/prompts/{prompt}/versions", map[string]string{"template": "Hey {{name}}"})},
	"GET /v1/prompts/:id/versions/:version": {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/versions/1")},
	"PATCH /v1/prompts/:id/versions/:version": {policy: "project-write", ok: 200,
		req: authzBody("/v1/prompts/{prompt}/versions/2", map[string]string{"template": "Hi there {{name}}"})},
	"DELETE /v1/prompts/:id/versions/:version": {policy: "project-write", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		return authzReq{path: f.promptVersion(fresh, "")}
	}},
	"POST /v1/prompts/:id/versions/:version/publish": {policy: "project-write", ok: 200, req: func(f *authzFixture, fresh bool) authzReq {
		return authzReq{path: f.promptVersion(fresh, "/publish")}
	}},
	"POST /v1/prompts/:id/versions/:version/promote": {policy: "project-write", ok: 200, req: authzPath("/v1/prompts/{prompt}/versions/1/promote")},
	"POST /v1/prompts/:id/versions/:version/archive": {policy: "project-write", ok: 200, req: func(f *authzFixture, fresh bool) authzReq {
		return authzReq{path: f.promptVersion(fresh, "/archive")}
	}},
	"GET /v1/prompts/:id/versions/:version/variables": {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/versions/1/variables")},
	"GET /v1/prompts/:id/diff":                        {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/diff?from=1&to=2")},
	"GET /v1/prompts/:id/history":                     {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/history")},
	"GET /v1/prompts/:id/live":                        {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/live")},
	"GET /v1/prompts/:id/dependents":                  {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/dependents")},
	"POST /v1/prompts/:id/versions/:version/check":    {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/versions/1/check")},
	"GET /v1/prompts/:id/usage":                       {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/usage")},
	"POST /v1/prompts/:id/render": {policy: "project-read", ok: 200,
		req: authzBody("/v1/prompts/{prompt}/render", map[string]any{"variables": map[string]string{"name": "Ann"}})},
	// The matrix's server has no model provider: a caller allowed to run
	// gets 409 no_provider, which shows authorization came first.
	"POST /v1/prompts/:id/versions/:version/run": {policy: "project-write", ok: 409,
		req: authzBody("/v1/prompts/{prompt}/versions/live/run", map[string]any{"variables": map[string]string{"name": "Ann"}})},
	// Evaluations: without a provider, starting one is 409 after
	// authorization; no evaluation exists, so reading or canceling one is
	// 404 after it.
	"POST /v1/prompts/:id/versions/:version/evaluations": {policy: "project-write", ok: 409, req: authzPath("/v1/prompts/{prompt}/versions/1/evaluations")},
	"GET /v1/prompts/:id/versions/:version/evaluations":  {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/versions/1/evaluations")},
	"GET /v1/prompts/:id/versions/:version/evaluations/:evaluationID": {policy: "project-read", ok: 404,
		req: authzPath("/v1/prompts/{prompt}/versions/1/evaluations/00000000-0000-4000-8000-000000000000")},
	"POST /v1/prompts/:id/versions/:version/evaluations/:evaluationID/cancel": {policy: "project-write", ok: 404,
		req: authzPath("/v1/prompts/{prompt}/versions/1/evaluations/00000000-0000-4000-8000-000000000000/cancel")},
	"POST /v1/prompts/:id/payloads": {policy: "project-write", ok: 201,
		req: authzBody("/v1/prompts/{prompt}/payloads", map[string]any{"variables": map[string]string{"name": "Bo"}})},
	"GET /v1/prompts/:id/payloads":            {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/payloads")},
	"GET /v1/prompts/:id/payloads/:payloadID": {policy: "project-read", ok: 200, req: authzPath("/v1/prompts/{prompt}/payloads/{payload}")},
	"PUT /v1/prompts/:id/payloads/:payloadID": {policy: "project-write", ok: 200,
		req: authzBody("/v1/prompts/{prompt}/payloads/{payload}", map[string]any{"variables": map[string]string{"name": "Cy"}})},
	"DELETE /v1/prompts/:id/payloads/:payloadID": {policy: "project-write", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
		id := f.payload
		if fresh {
			id = f.newPayload()
		}
		return authzReq{path: f.expand("/v1/prompts/{prompt}/payloads/" + id)}
	}},
	"POST /v1/prompts/:id/cache/purge": {policy: "project-owner", ok: 200, req: authzPath("/v1/prompts/{prompt}/cache/purge")},
	"POST /v1/cache/purge":             {policy: "admin-only", ok: 200, req: authzPath("/v1/cache/purge")},

	// Git smart HTTP: clone and fetch need read access; a push with less
	// than write is refused inside the protocol, after authentication.
	"GET /git/*path":               {policy: "project-read", ok: 200, req: authzPath("/git/{project}/skills/{skill}.git/info/refs?service=git-upload-pack")},
	"GET /git/*path #receive-pack": {policy: "project-read", ok: 200, req: authzPath("/git/{project}/skills/{skill}.git/info/refs?service=git-receive-pack")},
	"HEAD /git/*path":              {policy: "project-read", ok: 200, req: authzPath("/git/{project}/skills/{skill}.git/info/refs?service=git-upload-pack")},
	"POST /git/*path": {policy: "project-read", ok: 200, req: func(f *authzFixture, _ bool) authzReq {
		return authzReq{path: f.expand("/git/{project}/skills/{skill}.git/git-upload-pack"), body: uploadRequest(f.skillCommit),
			headers: []string{"Content-Type: application/x-git-upload-pack-request"}}
	}},
	"PUT /git/*path":     {policy: "method-not-allowed", req: authzPath("/git/{project}/skills/{skill}.git/info/refs")},
	"PATCH /git/*path":   {policy: "method-not-allowed", req: authzPath("/git/{project}/skills/{skill}.git/info/refs")},
	"DELETE /git/*path":  {policy: "method-not-allowed", req: authzPath("/git/{project}/skills/{skill}.git/git-receive-pack")},
	"OPTIONS /git/*path": {policy: "method-not-allowed", req: authzPath("/git/{project}/skills/{skill}.git/info/refs")},
	"CONNECT /git/*path": {policy: "method-not-allowed", req: authzPath("/git/{project}/skills/{skill}.git/info/refs")},
	"TRACE /git/*path":   {policy: "method-not-allowed", req: authzPath("/git/{project}/skills/{skill}.git/info/refs")},

	// MCP (docs/mcp.md): any credential may open a session; what it
	// lists is what it can read. GET and DELETE name a session, so
	// without one they are 400 once authenticated.
	"POST /mcp": {policy: "any-user", ok: 200, req: func(*authzFixture, bool) authzReq {
		return authzReq{path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"authz","version":"1"}}}`,
			headers: []string{"Accept: application/json, text/event-stream"}}
	}},
	"GET /mcp":    {policy: "any-user", ok: 400, req: authzPath("/mcp")},
	"DELETE /mcp": {policy: "any-user", ok: 400, req: authzPath("/mcp")},
}

// reviewRows are the rows of reviews and labels (reviews.go, labels.go)
// for one kind; ph is its placeholder ({skill} or {prompt}). The fixture
// has review 1 open on draft 2, a comment on it and label "stable" on
// version 1.
func reviewRows(kind, ph string) map[string]authzRow {
	g := "/v1/" + kind + "/:id"
	p := "/v1/" + kind + "/" + ph
	return map[string]authzRow{
		"POST " + g + "/versions/:version/reviews": {policy: "project-write", ok: 201, req: func(f *authzFixture, fresh bool) authzReq {
			n := 2
			if fresh {
				n = f.newDraft(kind)
			}
			return authzReq{path: fmt.Sprintf("%s/versions/%d/reviews", f.expand(p), n), body: map[string]string{"title": "t"}}
		}},
		"GET " + g + "/reviews":         {policy: "project-read", ok: 200, req: authzPath(p + "/reviews")},
		"GET " + g + "/reviews/:number": {policy: "project-read", ok: 200, req: authzPath(p + "/reviews/1")},
		"POST " + g + "/reviews/:number/comments": {policy: "project-write", ok: 201,
			req: authzBody(p+"/reviews/1/comments", map[string]string{"body": "looks fine"})},
		"PATCH " + g + "/reviews/:number/comments/:commentID": {policy: "project-write", ok: 200, req: func(f *authzFixture, _ bool) authzReq {
			return authzReq{path: f.expand(p) + "/reviews/1/comments/" + f.comments[kind], body: map[string]bool{"resolved": true}}
		}},
		"POST " + g + "/reviews/:number/approve": {policy: "project-write", ok: 201,
			req: authzBody(p+"/reviews/1/approve", map[string]string{"body": "ok"})},
		"POST " + g + "/reviews/:number/request-changes": {policy: "project-write", ok: 201,
			req: authzBody(p+"/reviews/1/request-changes", map[string]string{"body": "change"})},
		"POST " + g + "/reviews/:number/close": {policy: "project-write", ok: 200, over: authorOrOwner, req: func(f *authzFixture, fresh bool) authzReq {
			n := 1
			if fresh {
				n = f.newReview(kind, false)
			}
			return authzReq{path: fmt.Sprintf("%s/reviews/%d/close", f.expand(p), n)}
		}},
		"POST " + g + "/reviews/:number/reopen": {policy: "project-write", ok: 200, over: authorOrOwner, req: func(f *authzFixture, fresh bool) authzReq {
			n := 1
			if fresh {
				n = f.newReview(kind, true)
			}
			return authzReq{path: fmt.Sprintf("%s/reviews/%d/reopen", f.expand(p), n)}
		}},
		"GET " + g + "/labels": {policy: "project-read", ok: 200, req: authzPath(p + "/labels")},
		"PUT " + g + "/labels/:name": {policy: "project-write", ok: 200,
			req: authzBody(p+"/labels/beta", map[string]int{"version": 1})},
		"DELETE " + g + "/labels/:name": {policy: "project-write", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
			if fresh {
				f.e.Must(200, "PUT", f.expand(p)+"/labels/gone", f.e.Admin, map[string]int{"version": 1})
			}
			return authzReq{path: f.expand(p) + "/labels/gone"}
		}},
		"GET " + g + "/labels/:name/history": {policy: "project-read", ok: 200, req: authzPath(p + "/labels/stable/history")},
	}
}

// authorOrOwner: closing or reopening a review is for its author (the
// admin user, whose keys act as the admin) or a project owner.
var authorOrOwner = map[cred]int{credEditor: 403}

// newDraft opens a draft of the fixture's skill or prompt.
func (f *authzFixture) newDraft(kind string) int {
	ph, body := "{skill}", any(nil)
	if kind == "prompts" {
		ph, body = "{prompt}", map[string]string{"template": "Hey {{name}}"}
	}
	return num(f.t, f.e.Must(201, "POST", f.expand("/v1/"+kind+"/"+ph+"/versions"), f.e.Admin, body).JSON(f.t), "version", "version")
}

// newReview opens a review on a new draft (and closes it, if asked) and
// returns its number.
func (f *authzFixture) newReview(kind string, closed bool) int {
	ph := map[string]string{"skills": "{skill}", "prompts": "{prompt}"}[kind]
	base := f.expand("/v1/" + kind + "/" + ph)
	n := f.newDraft(kind)
	r := f.e.Must(201, "POST", fmt.Sprintf("%s/versions/%d/reviews", base, n), f.e.Admin, map[string]string{"title": "t"})
	number := num(f.t, r.JSON(f.t), "review", "number")
	if closed {
		f.e.Must(200, "POST", fmt.Sprintf("%s/reviews/%d/close", base, number), f.e.Admin, nil)
	}
	return number
}

// withScopedRows adds to table, for each row of a route under one skill
// or prompt, the same row at the project-scoped address, where the asset
// is named by slug (or by id when the row made a fresh one): the two
// addresses serve one set of handlers and must authorize alike.
func withScopedRows(table map[string]authzRow) map[string]authzRow {
	out := make(map[string]authzRow, 2*len(table))
	for key, row := range table {
		out[key] = row
		method, route, _ := strings.Cut(key, " ")
		for _, kind := range []string{"skills", "prompts"} {
			rest, ok := strings.CutPrefix(route, "/v1/"+kind+"/:id")
			if !ok {
				continue
			}
			inner := row.req
			row.req = func(f *authzFixture, fresh bool) authzReq {
				rq := inner(f, fresh)
				id, slug := f.skill, "authz-skill"
				if kind == "prompts" {
					id, slug = f.prompt, "authz-prompt"
				}
				ref, tail, _ := strings.Cut(strings.TrimPrefix(rq.path, "/v1/"+kind+"/"), "/")
				if ref == id {
					ref = slug
				}
				rq.path = "/v1/projects/" + f.project + "/" + kind + "/" + ref
				if tail != "" {
					rq.path += "/" + tail
				}
				return rq
			}
			out[method+" /v1/projects/:projectID/"+kind+"/:slug"+rest] = row
		}
	}
	return out
}

// skewClock is the API's clock, moved forward to expire sessions.
type skewClock struct{ skew atomic.Int64 }

func (c *skewClock) Now() time.Time      { return time.Now().Add(time.Duration(c.skew.Load())) }
func (c *skewClock) set(d time.Duration) { c.skew.Store(int64(d)) }

// authzFixture is the world the matrix runs in: project P with a viewer,
// an editor and an owner, project Q, a skill and a prompt in P each with
// published version 1 (live) and draft 2, a payload, another user, and a
// key of the admin user to be looked at and rotated.
type authzFixture struct {
	t     *testing.T
	e     *testenv.Env
	clock *skewClock
	n     int

	tokens [numCreds]string
	emails map[cred]string // the users of the session cells

	project, other           string
	skill, prompt, payload   string
	skillCommit              string
	viewer, editor, owner    string // user ids
	targetUser, targetEmail  string
	extraUser                string
	targetKey, targetSession string
	adminSession             string
	comments                 map[string]string // a comment on review 1, by kind
	zip                      []byte
}

func newAuthzFixture(t *testing.T) *authzFixture {
	t.Helper()
	clk := &skewClock{}
	e := newEnv(t, testenv.Options{Clock: clk.Now})
	f := &authzFixture{t: t, e: e, clock: clk, emails: map[cred]string{credAdmin: testenv.AdminEmail}}
	var viewerTok, editorTok, ownerTok string
	f.viewer, viewerTok = e.CreateUser("viewer@authz.test")
	f.editor, editorTok = e.CreateUser("editor@authz.test")
	f.owner, ownerTok = e.CreateUser("owner@authz.test")
	f.emails[credViewer], f.emails[credEditor], f.emails[credOwner] = "viewer@authz.test", "editor@authz.test", "owner@authz.test"
	f.targetEmail = "target@authz.test"
	f.targetUser, _ = e.CreateUser(f.targetEmail)
	f.extraUser, _ = e.CreateUser("extra@authz.test")
	f.targetSession = f.newSession()
	f.adminSession = f.newAdminSession()

	f.project = f.newProject()
	f.other = e.CreateProject(e.Admin, "authz-other")

	f.skill = e.CreateSkill(e.Admin, f.project, "authz-skill")
	e.Must(201, "POST", f.expand("/v1/skills/{skill}/versions"), e.Admin, nil)
	for name, content := range map[string]string{"SKILL.md": testenv.SkillManifest("authz-skill"), "a.txt": "a", "keep.txt": "k"} {
		e.Must(200, "POST", f.expand("/v1/skills/{skill}/versions/1/files"), e.Admin, map[string]string{"file_path": name, "content": content})
	}
	f.skillCommit = str(t, e.Must(200, "POST", f.expand("/v1/skills/{skill}/versions/1/publish"), e.Admin, nil).JSON(t), "version", "commit")
	e.Must(201, "POST", f.expand("/v1/skills/{skill}/versions"), e.Admin, nil)

	f.prompt = e.CreatePrompt(e.Admin, f.project, "authz-prompt")
	e.Must(201, "POST", f.expand("/v1/prompts/{prompt}/versions"), e.Admin, map[string]string{"template": "Hello {{name}}"})
	e.Must(200, "POST", f.expand("/v1/prompts/{prompt}/versions/1/publish"), e.Admin, nil)
	e.Must(201, "POST", f.expand("/v1/prompts/{prompt}/versions"), e.Admin, map[string]string{"template": "Hi {{name}}"})
	f.payload = f.newPayload()
	f.comments = map[string]string{}
	for kind, ph := range map[string]string{"skills": "{skill}", "prompts": "{prompt}"} {
		base := f.expand("/v1/" + kind + "/" + ph)
		e.Must(201, "POST", base+"/versions/2/reviews", e.Admin, map[string]string{"title": "review"})
		c := e.Must(201, "POST", base+"/reviews/1/comments", e.Admin, map[string]string{"body": "first"})
		f.comments[kind] = str(t, c.JSON(t), "comment", "id")
		e.Must(200, "PUT", base+"/labels/stable", e.Admin, map[string]int{"version": 1})
	}
	f.targetKey = f.newKey()
	f.zip = zipOf(t, "SKILL.md", testenv.SkillManifest("authz-skill"))

	f.tokens = [numCreds]string{
		credNone:      "",
		credMalformed: "not-a-token",
		credUnknown:   "ak_" + strings.Repeat("ab", 16) + "_" + strings.Repeat("cd", 32),
		credExpired:   e.Login(testenv.AdminEmail, testenv.AdminPassword),
		credRevoked:   e.Login(testenv.AdminEmail, testenv.AdminPassword),
		credReadKey:   e.CreateKey(e.Admin, "read"),
		credWriteKey:  e.CreateKey(e.Admin, "write"),
		credAdminKey:  e.CreateKey(e.Admin, "admin"),
		credOtherKey:  e.CreateKey(e.Admin, "admin", f.other),
		credViewer:    viewerTok,
		credEditor:    editorTok,
		credOwner:     ownerTok,
		credAdmin:     e.Admin,
	}
	revoked := str(t, e.Must(200, "GET", "/v1/auth/me", f.tokens[credRevoked], nil).JSON(t), "session_id")
	e.Must(204, "DELETE", "/v1/auth/sessions/"+revoked, e.Admin, nil)
	return f
}

// expand fills the placeholders of a path with the fixture's objects.
func (f *authzFixture) expand(path string) string {
	return strings.NewReplacer("{project}", f.project, "{skill}", f.skill, "{prompt}", f.prompt, "{payload}", f.payload,
		"{user}", f.targetUser, "{extra}", f.extraUser, "{key}", f.targetKey).Replace(path)
}

func (f *authzFixture) unique(prefix string) string {
	f.n++
	return fmt.Sprintf("%s-%d", strings.ToLower(prefix), f.n)
}

// newProject makes a project with the viewer, editor and owner in it.
func (f *authzFixture) newProject() string {
	id := f.e.CreateProject(f.e.Admin, f.unique("authz"))
	for user, role := range map[string]string{f.viewer: "viewer", f.editor: "editor", f.owner: "owner", f.extraUser: "viewer"} {
		f.e.Must(200, "PUT", "/v1/projects/"+id+"/members/"+user, f.e.Admin, map[string]string{"role": role})
	}
	return id
}

// newSession logs the target user in and returns the session id.
func (f *authzFixture) newSession() string {
	tok := f.e.Login(f.targetEmail, "password-"+f.targetEmail)
	return str(f.t, f.e.Must(200, "GET", "/v1/auth/me", tok, nil).JSON(f.t), "session_id")
}

// newAdminSession logs the admin in and returns the session id.
func (f *authzFixture) newAdminSession() string {
	tok := f.e.Login(testenv.AdminEmail, testenv.AdminPassword)
	return str(f.t, f.e.Must(200, "GET", "/v1/auth/me", tok, nil).JSON(f.t), "session_id")
}

// newKey makes a key of the admin user and returns its id.
func (f *authzFixture) newKey() string {
	r := f.e.Must(201, "POST", "/v1/api-keys", f.e.Admin, map[string]string{"name": f.unique("target"), "scope": "read"})
	return str(f.t, r.JSON(f.t), "api_key", "id")
}

func (f *authzFixture) newPayload() string {
	r := f.e.Must(201, "POST", f.expand("/v1/prompts/{prompt}/payloads"), f.e.Admin, map[string]any{"variables": map[string]string{"name": "Ann"}})
	return str(f.t, r.JSON(f.t), "payload", "id")
}

// skillVersion is the path of a version of the skill followed by suffix:
// a new draft (from the live version, so publishable) when fresh, else
// draft 2.
func (f *authzFixture) skillVersion(fresh bool, suffix string) string {
	n := 2
	if fresh {
		n = num(f.t, f.e.Must(201, "POST", f.expand("/v1/skills/{skill}/versions"), f.e.Admin, nil).JSON(f.t), "version", "version")
	}
	return fmt.Sprintf("%s/versions/%d%s", f.expand("/v1/skills/{skill}"), n, suffix)
}

func (f *authzFixture) promptVersion(fresh bool, suffix string) string {
	n := 2
	if fresh {
		n = num(f.t, f.e.Must(201, "POST", f.expand("/v1/prompts/{prompt}/versions"), f.e.Admin, nil).JSON(f.t), "version", "version")
	}
	return fmt.Sprintf("%s/versions/%d%s", f.expand("/v1/prompts/{prompt}"), n, suffix)
}

// token is the credential of a cell; fresh sessions for routes that end
// the caller's session.
func (f *authzFixture) token(c cred, consumes bool) string {
	if email, isSession := f.emails[c]; consumes && isSession {
		password := "password-" + email
		if c == credAdmin {
			password = testenv.AdminPassword
		}
		return f.e.Login(email, password)
	}
	return f.tokens[c]
}

// cell sends one request of the matrix and checks the answer.
func (f *authzFixture) cell(t *testing.T, method string, row authzRow, c cred) {
	t.Helper()
	want := row.want(c)
	rq := row.req(f, want >= 200 && want < 300)
	tok := f.token(c, row.consumes)
	if c == credExpired {
		f.clock.set(25 * time.Hour) // past the session's 24 hours
		defer f.clock.set(0)
	}
	r := f.e.Do(method, rq.path, tok, rq.body, rq.headers...)
	if r.Status != want {
		t.Errorf("%s %s as %s: status %d, want %d\n%.300s", method, rq.path, c, r.Status, want, r.Body)
		return
	}
	if want < 400 || method == http.MethodHead {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s as %s: %d with Content-Type %q", method, rq.path, c, want, ct)
		return
	}
	if msg, _ := r.JSON(t)["error"].(string); msg == "" {
		t.Errorf("%s %s as %s: %d without an APIError: %s", method, rq.path, c, want, r.Body)
	}
	if want == 401 && (strings.HasPrefix(rq.path, "/git/") || rq.path == "/mcp") && r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("%s %s as %s: 401 without WWW-Authenticate, so the client would not ask for credentials", method, rq.path, c)
	}
}

// TestAuthorizationMatrix asks every route as every kind of caller.
func TestAuthorizationMatrix(t *testing.T) {
	sequentialHeavy(t)
	t.Parallel()
	f := newAuthzFixture(t)

	served := map[string]bool{}
	for _, r := range f.e.Server.Routes() {
		served[r.Method+" "+r.Path] = true
	}
	all := map[string]authzRow{}
	for _, rows := range []map[string]authzRow{authzTable, reviewRows("skills", "{skill}"), reviewRows("prompts", "{prompt}")} {
		for k, v := range rows {
			all[k] = v
		}
	}
	table := withScopedRows(all)
	covered := map[string]bool{}
	var rows []string
	for key, row := range table {
		route, _, _ := strings.Cut(key, " #")
		if !served[route] {
			t.Errorf("authzTable row %q: no such route", key)
		}
		if _, found := policies[row.policy]; !found {
			t.Errorf("authzTable row %q: unknown policy %q", key, row.policy)
		}
		covered[route] = true
		rows = append(rows, key)
	}
	for route := range served {
		if !covered[route] {
			t.Errorf("route %s has no row in authzTable (httpapi/authz_test.go): say who may call it", route)
		}
	}
	sort.Strings(rows)
	for _, key := range rows {
		row := table[key]
		method, _, _ := strings.Cut(key, " ")
		t.Run(key, func(t *testing.T) {
			for c := range numCreds {
				f.cell(t, method, row, c)
			}
		})
	}
}

// authzHook is a request to a new webhook of the project (the admin makes
// one per cell, so a delete in one cell leaves the others theirs),
// followed by suffix.
func authzHook(suffix string, body any) func(*authzFixture, bool) authzReq {
	return func(f *authzFixture, _ bool) authzReq {
		r := f.e.Must(201, "POST", f.expand("/v1/projects/{project}/webhooks"), f.e.Admin, map[string]any{"url": "http://192.0.2.1/hook", "events": []string{"ping"}})
		id := r.JSON(f.t)["webhook"].(map[string]any)["id"].(string)
		return authzReq{path: f.expand("/v1/projects/{project}/webhooks/" + id + suffix), body: body}
	}
}
