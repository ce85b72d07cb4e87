package httpapi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

// TestIdentNamesRefused: a user's display name and an API key's name
// become git author names, so LF, CR, NUL, '<' and '>' are refused on every
// way in, with 400 naming the field, and nothing is stored.
func TestIdentNamesRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	e := newEnv(t, testenv.Options{Root: root})
	uid, tok := e.CreateUser("ident@example.com")
	keyTok := e.CreateKey(tok, "admin")
	bad := []string{
		"Mallory\nauthor Mallory <ceo@example.com> 0 +0000",
		"a\rb",
		"a\x00b",
		"Mallory <ceo@example.com>",
		"x>y",
		"<",
	}
	type call struct {
		name         string
		method, path string
		token        string
		body         func(name string) any
		field        string
	}
	calls := []call{
		{"create user", "POST", "/v1/users", e.Admin, func(n string) any {
			return obj{"email": "new@example.com", "password": "password-123", "name": n}
		}, "name"},
		{"admin patches user", "PATCH", "/v1/users/" + uid, e.Admin, func(n string) any { return obj{"name": n} }, "name"},
		{"user patches self", "PATCH", "/v1/users/" + uid, tok, func(n string) any { return obj{"name": n} }, "name"},
		{"user patches me", "PATCH", "/v1/users/me", tok, func(n string) any { return obj{"name": n} }, "name"},
		{"key patches me", "PATCH", "/v1/users/me", keyTok, func(n string) any { return obj{"name": n} }, "name"},
		{"create key", "POST", "/v1/api-keys", tok, func(n string) any { return obj{"name": n, "scope": "read"} }, "name"},
		{"create key by key", "POST", "/v1/api-keys", keyTok, func(n string) any { return obj{"name": n, "scope": "read"} }, "name"},
	}
	for _, c := range calls {
		for _, n := range bad {
			t.Run(fmt.Sprintf("%s/%q", c.name, n), func(t *testing.T) {
				m := wantError(t, e.Do(c.method, c.path, c.token, c.body(n)), 400, c.field)
				if got := get(t, m, "details", "field"); got != c.field {
					t.Errorf("details.field %v, want %s", got, c.field)
				}
			})
		}
	}
	// Nothing was stored: the user keeps its name, no key or user was made.
	if got := str(t, e.Must(200, "GET", "/v1/users/"+uid, e.Admin, nil).JSON(t), "user", "name"); got != "ident@example.com" {
		t.Errorf("name after refused changes: %q", got)
	}
	if n := len(arr(t, e.Must(200, "GET", "/v1/api-keys", tok, nil).JSON(t), "api_keys")); n != 1 {
		t.Errorf("%d keys, want the one made for the test", n)
	}
	wantError(t, e.Do("POST", "/v1/auth/login", "", obj{"email": "new@example.com", "password": "password-123"}), 401)
	// Names git can carry still work.
	e.Must(200, "PATCH", "/v1/users/me", tok, obj{"name": "Zoë O'Neil (ops) \"z\" & co"})
	e.Must(201, "POST", "/v1/api-keys", tok, obj{"name": "ci: deploy/prod #1", "scope": "read"})
	testenv.Git(t, filepath.Join(root, "_system.git"), "fsck", "--strict", "--no-dangling")
}

// TestAPIKeyExpiry: a key that would be born expired is refused with 422;
// one expiring in the future is made, works, and is refused (401) once
// the server's clock passes its expiry.
func TestAPIKeyExpiry(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	e := newEnv(t, testenv.Options{Clock: clock})
	// Expiries relative to the server's clock, which stands still: a
	// slow start must not carry "a second ago" past it.
	for _, at := range []time.Time{now.Add(-time.Hour), now.Add(-time.Second), time.Unix(0, 0), now.AddDate(-10, 0, 0)} {
		m := wantError(t, e.Do("POST", "/v1/api-keys", e.Admin, obj{"name": "old", "expires_at": at.UTC().Format(time.RFC3339)}), 422, "expires_at")
		if get(t, m, "details", "field") != "expires_at" {
			t.Errorf("details: %v", m)
		}
	}
	if n := len(arr(t, e.Must(200, "GET", "/v1/api-keys", e.Admin, nil).JSON(t), "api_keys")); n != 0 {
		t.Fatalf("%d keys stored after refusals", n)
	}
	future := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	r := e.Must(201, "POST", "/v1/api-keys", e.Admin, obj{"name": "soon", "expires_at": future.Format(time.RFC3339)}).JSON(t)
	tok := str(t, r, "token")
	e.Must(200, "GET", "/v1/auth/me", tok, nil)
	mu.Lock()
	now = future.Add(time.Second)
	mu.Unlock()
	wantError(t, e.Do("GET", "/v1/auth/me", tok, nil), 401)
}

// TestPromptPatchIfMatchStar: If-Match: * matches whatever commit the
// draft is at; a stale commit is still 412, and * on no draft is 404.
func TestPromptPatchIfMatchStar(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := newPrompt(e, "star")
	r := e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"template": "one"}).JSON(t)
	first := str(t, r, "version", "commit")
	u := "/v1/prompts/" + id + "/versions/1"
	for _, h := range []string{"*", `"*"`, " * "} {
		r := e.Must(200, "PATCH", u, e.Admin, obj{"template": "with " + h}, "If-Match: "+h).JSON(t)
		if got := str(t, r, "version", "template"); got != "with "+h {
			t.Errorf("If-Match %s: template %q", h, got)
		}
	}
	wantError(t, e.Do("PATCH", u, e.Admin, obj{"template": "stale"}, "If-Match: \""+first+"\""), 412)
	wantError(t, e.Do("PATCH", "/v1/prompts/"+id+"/versions/9", e.Admin, obj{"template": "x"}, "If-Match: *"), 404)
}

// TestActionBodies: publish, promote and archive take no fields; no body,
// or an empty object, is fine, but a body that is not JSON is 400 and
// changes nothing.
func TestActionBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "acts")
	pid := newPrompt(e, "acts")
	bad := []string{"{", "not json", `{"a":1}x`, `{"a":1,"a":2}`, "[1,", `"\ud800"`}
	for _, kind := range []string{"skill", "prompt"} {
		base := s.url()
		open := func() int { return s.draft(t, obj{"from": "empty"}) }
		ready := func(n int) { s.put(t, n, "SKILL.md", testenv.SkillManifest("acts")) }
		if kind == "prompt" {
			base = "/v1/prompts/" + pid
			open = func() int {
				return num(t, e.Must(201, "POST", base+"/versions", e.Admin, obj{"template": "hi"}).JSON(t), "version", "version")
			}
			ready = func(int) {}
		}
		vurl := func(n int, action string) string { return fmt.Sprintf("%s/versions/%d/%s", base, n, action) }
		n := open()
		ready(n)
		for _, b := range bad {
			wantError(t, e.Do("POST", vurl(n, "publish"), e.Admin, b), 400)
		}
		if st := str(t, e.Must(200, "GET", fmt.Sprintf("%s/versions/%d", base, n), e.Admin, nil).JSON(t), "version", "state"); st != "draft" {
			t.Fatalf("%s: after refused publishes the version is %s", kind, st)
		}
		e.Must(200, "POST", vurl(n, "publish"), e.Admin, "")
		m := open()
		ready(m)
		e.Must(200, "POST", vurl(m, "publish"), e.Admin, "{}")
		for _, b := range bad {
			wantError(t, e.Do("POST", vurl(n, "promote"), e.Admin, b), 400)
			wantError(t, e.Do("POST", vurl(n, "archive"), e.Admin, b), 400)
		}
		if st := str(t, e.Must(200, "GET", fmt.Sprintf("%s/versions/%d", base, n), e.Admin, nil).JSON(t), "version", "state"); st != "published" {
			t.Fatalf("%s: after refused archives version %d is %s", kind, n, st)
		}
		e.Must(200, "POST", vurl(n, "promote"), e.Admin, " \n")
		e.Must(200, "POST", vurl(m, "archive"), e.Admin, nil)
	}
}

// TestNoOrphanedProjects: removing or demoting a project's last owner,
// and deleting a user who is some project's last owner, are refused with
// 409 naming the project; with another owner they go through.
func TestNoOrphanedProjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	aliceID, alice := e.CreateUser("alice@example.com")
	bobID, _ := e.CreateUser("bob@example.com")
	pid := e.CreateProject(alice, "orphan-me")
	members := "/v1/projects/" + pid + "/members"
	e.Must(200, "POST", members, alice, obj{"user_id": bobID, "role": "editor"})

	for _, tc := range []struct {
		name, method, path, token string
		body                      any
	}{
		{"owner removes self", "DELETE", members + "/" + aliceID, alice, nil},
		{"admin removes last owner", "DELETE", members + "/" + aliceID, e.Admin, nil},
		{"owner demotes self (PUT)", "PUT", members + "/" + aliceID, alice, obj{"role": "editor"}},
		{"admin demotes last owner (POST by id)", "POST", members, e.Admin, obj{"user_id": aliceID, "role": "viewer"}},
		{"admin demotes last owner (POST by email)", "POST", members, e.Admin, obj{"email": "alice@example.com", "role": "viewer"}},
		{"admin deletes last owner", "DELETE", "/v1/users/" + aliceID, e.Admin, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.Do(tc.method, tc.path, tc.token, tc.body), 409, "orphan-me", "owner")
		})
	}
	owners := func() []string {
		var out []string
		for _, m := range arr(t, e.Must(200, "GET", members, e.Admin, nil).JSON(t), "members") {
			if str(t, m, "role") == "owner" {
				out = append(out, str(t, m, "user_id"))
			}
		}
		return out
	}
	if got := owners(); len(got) != 1 || got[0] != aliceID {
		t.Fatalf("owners after refusals: %v", got)
	}
	e.Must(200, "GET", "/v1/users/"+aliceID, e.Admin, nil)

	// With a second owner, the first may step down and even be deleted.
	e.Must(200, "PUT", members+"/"+bobID, alice, obj{"role": "owner"})
	e.Must(200, "PUT", members+"/"+aliceID, alice, obj{"role": "viewer"})
	wantError(t, e.Do("DELETE", members+"/"+bobID, e.Admin, nil), 409, "orphan-me")
	e.Must(200, "PUT", members+"/"+aliceID, e.Admin, obj{"role": "owner"})
	e.Must(204, "DELETE", "/v1/users/"+bobID, e.Admin, nil)
	// A deleted user's membership is no owner: alice is the last one again.
	wantError(t, e.Do("DELETE", members+"/"+aliceID, e.Admin, nil), 409, "orphan-me")
	wantError(t, e.Do("DELETE", "/v1/users/"+aliceID, e.Admin, nil), 409, "orphan-me")
	// Deleting the project itself is how an owner gives it up.
	e.Must(204, "DELETE", "/v1/projects/"+pid, alice, nil)
	e.Must(204, "DELETE", "/v1/users/"+aliceID, e.Admin, nil)
}

// TestLastAdmin: the last enabled admin cannot be demoted, disabled or
// deleted (409); with another admin each goes through.
func TestLastAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	adminID := str(t, e.Must(200, "GET", "/v1/auth/me", e.Admin, nil).JSON(t), "user", "id")
	adminKey := e.CreateKey(e.Admin, "admin")
	for _, tc := range []struct {
		name, method, path, token string
		body                      any
	}{
		{"demote self", "PATCH", "/v1/users/me", e.Admin, obj{"role": "member"}},
		{"demote self by id", "PATCH", "/v1/users/" + adminID, e.Admin, obj{"role": "member"}},
		{"disable self", "PATCH", "/v1/users/me", e.Admin, obj{"disabled": true}},
		{"demote self by key", "PATCH", "/v1/users/me", adminKey, obj{"role": "member"}},
		{"delete self", "DELETE", "/v1/users/" + adminID, e.Admin, nil},
	} {
		t.Run(tc.name, func(t *testing.T) { wantError(t, e.Do(tc.method, tc.path, tc.token, tc.body), 409) })
	}
	if u := e.Must(200, "GET", "/v1/users/me", e.Admin, nil).JSON(t); str(t, u, "user", "role") != "admin" || get(t, u, "user", "disabled") != false {
		t.Fatalf("admin after refusals: %v", u)
	}
	// A disabled admin is no admin: promoting one leaves the rule in force.
	otherID, _ := e.CreateUser("other@example.com")
	e.Must(200, "PATCH", "/v1/users/"+otherID, e.Admin, obj{"role": "admin", "disabled": true})
	wantError(t, e.Do("PATCH", "/v1/users/me", e.Admin, obj{"role": "member"}), 409, "last admin")
	e.Must(200, "PATCH", "/v1/users/"+otherID, e.Admin, obj{"disabled": false})
	// Disabling ended the other admin's sessions: they sign in anew.
	other := e.Login("other@example.com", "password-other@example.com")
	e.Must(200, "PATCH", "/v1/users/me", e.Admin, obj{"role": "member"})
	wantError(t, e.Do("PATCH", "/v1/users/me", other, obj{"role": "member"}), 409, "last admin")
	e.Must(200, "PATCH", "/v1/users/"+adminID, other, obj{"role": "admin"})
	e.Must(204, "DELETE", "/v1/users/"+adminID, other, nil)
}

// TestPasswordChangeEndsSessions: a new password ends the user's other
// sessions (the one that changed it lives on) and says how many.
func TestPasswordChangeEndsSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, s1 := e.CreateUser("pw@example.com")
	s2 := e.Login("pw@example.com", "password-pw@example.com")
	key := e.CreateKey(s1, "admin")

	// The user changes it on session 1: session 2 is ended, 1 and the key live.
	m := e.Must(200, "PATCH", "/v1/users/me", s1, obj{"password": "new-password-1"}).JSON(t)
	if num(t, m, "sessions_revoked") != 1 {
		t.Fatalf("own change: %v", m)
	}
	wantError(t, e.Do("GET", "/v1/auth/me", s2, nil), 401)
	e.Must(200, "GET", "/v1/auth/me", s1, nil)
	e.Must(200, "GET", "/v1/auth/me", key, nil)
	wantError(t, e.Do("POST", "/v1/auth/login", "", obj{"email": "pw@example.com", "password": "password-pw@example.com"}), 401)

	// An admin changes it: every session of the user ends.
	s3 := e.Login("pw@example.com", "new-password-1")
	m = e.Must(200, "PATCH", "/v1/users/"+id, e.Admin, obj{"password": "new-password-2"}).JSON(t)
	if num(t, m, "sessions_revoked") != 2 {
		t.Fatalf("admin change: %v", m)
	}
	for _, tok := range []string{s1, s3} {
		wantError(t, e.Do("GET", "/v1/auth/me", tok, nil), 401)
	}
	e.Must(200, "GET", "/v1/auth/me", e.Admin, nil)

	// Through an admin-scope key of the user's own: no session is kept.
	s4 := e.Login("pw@example.com", "new-password-2")
	m = e.Must(200, "PATCH", "/v1/users/me", key, obj{"password": "new-password-3"}).JSON(t)
	if num(t, m, "sessions_revoked") != 1 {
		t.Fatalf("key change: %v", m)
	}
	wantError(t, e.Do("GET", "/v1/auth/me", s4, nil), 401)

	// Other changes end nothing and say nothing about sessions.
	s5 := e.Login("pw@example.com", "new-password-3")
	if m := e.Must(200, "PATCH", "/v1/users/me", s5, obj{"name": "Pat"}).JSON(t); m["sessions_revoked"] != nil {
		t.Fatalf("name change: %v", m)
	}
	e.Must(200, "GET", "/v1/auth/me", s5, nil)
}

// TestPasswordChangeRedisDown: when the sessions cannot be ended the
// answer says so (503), not that all went well.
func TestPasswordChangeRedisDown(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("no /usr/bin/redis-server")
	}
	rs := startRedis(t, 0)
	e := testenv.NewWith(t, testenv.Options{RedisURL: "redis://" + rs.addr(), Prefix: "pwdown:"})
	id, _ := e.CreateUser("down@example.com")
	key := e.CreateKey(e.Admin, "admin") // keys live in git, sessions in Redis
	rs.stop()
	wantError(t, e.Do("PATCH", "/v1/users/"+id, key, obj{"password": "new-password-1"}), 503, "password was changed", "sessions")
}

// TestNoAccountOracle: what a member may ask about another user's
// account, key, session or project answers exactly as for one that does
// not exist (docs/security.md, "What reveals an account"). The chosen
// exceptions are tested too: adding a member and taking an email in use.
func TestNoAccountOracle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	otherID, other := e.CreateUser("other@example.com")
	_, member := e.CreateUser("member@example.com")
	otherKey := str(t, e.Must(201, "POST", "/v1/api-keys", other, obj{"name": "k"}).JSON(t), "api_key", "id")
	otherSession := str(t, e.Must(200, "GET", "/v1/auth/me", other, nil).JSON(t), "session_id")
	hidden := e.CreateProject(other, "hidden")
	ghost := "00000000-0000-4000-8000-000000000000"

	same := func(name string, a, b *testenv.Response) {
		t.Helper()
		strip := func(r *testenv.Response) string {
			m := r.JSON(t)
			delete(m, "request_id")
			return fmt.Sprintf("%d %v", r.Status, m)
		}
		if x, y := strip(a), strip(b); x != y {
			t.Errorf("%s: an existing one answers %s, a missing one %s", name, x, y)
		}
	}
	for _, tc := range []struct {
		name, method, path, ghostPath string
		body                          any
	}{
		{"get user", "GET", "/v1/users/" + otherID, "/v1/users/" + ghost, nil},
		{"patch user", "PATCH", "/v1/users/" + otherID, "/v1/users/" + ghost, obj{"name": "x"}},
		{"delete user", "DELETE", "/v1/users/" + otherID, "/v1/users/" + ghost, nil},
		{"list sessions", "GET", "/v1/auth/sessions?user_id=" + otherID, "/v1/auth/sessions?user_id=" + ghost, nil},
		{"revoke session", "DELETE", "/v1/auth/sessions/" + otherSession, "/v1/auth/sessions/" + ghost, nil},
		{"get key", "GET", "/v1/api-keys/" + otherKey, "/v1/api-keys/" + ghost, nil},
		{"rotate key", "POST", "/v1/api-keys/" + otherKey + "/rotate", "/v1/api-keys/" + ghost + "/rotate", nil},
		{"delete key", "DELETE", "/v1/api-keys/" + otherKey, "/v1/api-keys/" + ghost, nil},
		{"get project", "GET", "/v1/projects/" + hidden, "/v1/projects/" + ghost, nil},
		{"key for project", "POST", "/v1/api-keys", "/v1/api-keys", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, ghostBody := tc.body, tc.body
			if tc.name == "key for project" {
				body, ghostBody = obj{"name": "k", "project_ids": []string{hidden}}, obj{"name": "k", "project_ids": []string{ghost}}
			}
			r := e.Do(tc.method, tc.path, member, body)
			if r.Status < 400 {
				t.Fatalf("member reached another's %s: %d %s", tc.name, r.Status, r.Body)
			}
			g := e.Do(tc.method, tc.ghostPath, member, ghostBody)
			if tc.name == "key for project" {
				// The project id is in the message: compare with it swapped.
				g.Body = []byte(strings.ReplaceAll(string(g.Body), ghost, hidden))
			}
			same(tc.name, r, g)
		})
	}
	// Untouched by all that.
	e.Must(200, "GET", "/v1/api-keys/"+otherKey, other, nil)
	e.Must(200, "GET", "/v1/auth/me", other, nil)

	// Adding a member: an unknown email and an unknown id answer alike
	// (422 "no such user"); an owner learns that an address has an
	// account only by adding it, which the member list shows anyway.
	pid := e.CreateProject(member, "mine")
	byEmail := e.Do("POST", "/v1/projects/"+pid+"/members", member, obj{"email": "nobody@example.com", "role": "viewer"})
	byID := e.Do("POST", "/v1/projects/"+pid+"/members", member, obj{"user_id": ghost, "role": "viewer"})
	wantError(t, byEmail, 422, "no such user")
	same("add member", byEmail, byID)
	// An email in use cannot be taken, and the answer must say so: 409
	// to a member as to an admin (the documented exception).
	wantError(t, e.Do("PATCH", "/v1/users/me", member, obj{"email": "other@example.com"}), 409)
	wantError(t, e.Do("PATCH", "/v1/users/"+otherID, e.Admin, obj{"email": "member@example.com"}), 409)
}

// TestDisableUserEndsSessions: disabling a user ends every session of
// theirs at once, as a new password does, so re-enabling them revives
// none; their API keys are refused while they are disabled and work again
// once they are re-enabled (a key is a deliberate, listed, revocable
// grant, unlike a session a thief may hold).
func TestDisableUserEndsSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	uid, sess := e.CreateUser("disable@example.com")
	sess2 := e.Login("disable@example.com", "password-disable@example.com")
	key := e.CreateKey(sess, "read")
	for _, tok := range []string{sess, sess2, key} {
		e.Must(200, "GET", "/v1/auth/me", tok, nil)
	}
	r := e.Must(200, "PATCH", "/v1/users/"+uid, e.Admin, obj{"disabled": true}).JSON(t)
	if got, _ := r["sessions_revoked"].(float64); got != 2 {
		t.Errorf("sessions_revoked %v, want 2", got)
	}
	for _, tok := range []string{sess, sess2, key} {
		wantError(t, e.Do("GET", "/v1/auth/me", tok, nil), 401)
	}
	wantError(t, e.Do("POST", "/v1/auth/login", "", obj{"email": "disable@example.com", "password": "password-disable@example.com"}), 401)
	// The admin's list of the user's sessions is empty too.
	if n := len(arr(t, e.Must(200, "GET", "/v1/auth/sessions?user_id="+uid, e.Admin, nil).JSON(t), "sessions")); n != 0 {
		t.Errorf("%d sessions listed after disable", n)
	}
	e.Must(200, "PATCH", "/v1/users/"+uid, e.Admin, obj{"disabled": false})
	for _, tok := range []string{sess, sess2} {
		wantError(t, e.Do("GET", "/v1/auth/me", tok, nil), 401)
	}
	e.Must(200, "GET", "/v1/auth/me", key, nil)
	e.Must(200, "GET", "/v1/auth/me", e.Login("disable@example.com", "password-disable@example.com"), nil)
}
