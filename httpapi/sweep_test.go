package httpapi_test

import (
	"strings"
	"testing"
)

// TestNoServerErrorForJunk sends junk to every route (odd ids and
// versions, broken bodies) and requires a 4xx APIError from each: never a
// 5xx, never an empty or non-JSON error.
func TestNoServerErrorForJunk(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "junk")
	s.draft(t, nil)
	routes := []string{
		"POST /v1/auth/login", "DELETE /v1/auth/sessions/:x",
		"POST /v1/users", "GET /v1/users/:x", "PATCH /v1/users/:x", "DELETE /v1/users/:x",
		"POST /v1/api-keys", "GET /v1/api-keys/:x", "DELETE /v1/api-keys/:x", "POST /v1/api-keys/:x/rotate",
		"POST /v1/projects", "GET /v1/projects/:x", "PATCH /v1/projects/:x", "DELETE /v1/projects/:x",
		"GET /v1/projects/:x/members", "POST /v1/projects/:x/members", "PUT /v1/projects/:x/members/:x", "DELETE /v1/projects/:x/members/:x",
		"POST /v1/projects/:x/skills", "GET /v1/projects/:x/skills",
		"GET /v1/skills/:x", "PATCH /v1/skills/:x",
		"GET /v1/skills/:x/versions", "POST /v1/skills/:x/versions", "POST /v1/skills/:x/versions/upload",
		"GET /v1/skills/:x/versions/:v",
		"POST /v1/skills/:x/versions/:v/publish", "POST /v1/skills/:x/versions/:v/promote", "POST /v1/skills/:x/versions/:v/archive",
		"GET /v1/skills/:x/versions/:v/files", "POST /v1/skills/:x/versions/:v/files",
		"GET /v1/skills/:x/versions/:v/files/:x", "DELETE /v1/skills/:x/versions/:v/files/:x",
		"GET /v1/skills/:x/versions/:v/download", "GET /v1/skills/:x/diff?from=:v&to=:v", "GET /v1/skills/:x/history?limit=:v&cursor=:v",
		// Last, as they may remove what the others use.
		"DELETE /v1/skills/:x/versions/:v", "DELETE /v1/skills/:x",
	}
	ids := []string{"x", "%00", "%ff%fe", "..", strings.Repeat("z", 3000), "00000000-0000-0000-0000-000000000000"}
	versions := []string{"1", "0", "-1", "x", "99999999999999999999"}
	bodies := []any{nil, "{", `{"name": [], "file_path": {}, "content": 1, "from": {}, "scope": 5, "role": []}`, "[]", "\xff"}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		for i, id := range ids {
			v := versions[i%len(versions)]
			// Existing skill, odd everything else; then odd ids throughout.
			p := strings.Replace(path, "/skills/:x", "/skills/"+s.id, 1)
			if i%2 == 1 {
				p = path
			}
			p = strings.ReplaceAll(strings.ReplaceAll(p, ":x", id), ":v", v)
			body := bodies[i%len(bodies)]
			r := e.Do(method, p, e.Admin, body)
			if r.Status >= 500 || r.Status < 400 && r.Status != 200 && r.Status != 201 && r.Status != 204 {
				t.Errorf("%s %s: status %d\n%s", method, p, r.Status, r.Body)
				continue
			}
			if r.Status >= 400 {
				if m := r.JSON(t); m["error"] == nil || m["error"] == "" {
					t.Errorf("%s %s: %d without an error: %s", method, p, r.Status, r.Body)
				}
			}
		}
	}
}
