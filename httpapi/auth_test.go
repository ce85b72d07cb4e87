package httpapi_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/testenv"
	"golang.org/x/crypto/bcrypt"
)

// The session tests run against the embedded Redis and, when
// QUIRE_TEST_REDIS_URL is set, against the real one too: sessions are the
// part of quire that lives in Redis.
func forEachRedis(t *testing.T, fn func(t *testing.T, o testenv.Options)) {
	for name, o := range testenv.RedisModes() {
		t.Run(name, func(t *testing.T) { fn(t, o) })
	}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	forEachRedis(t, func(t *testing.T, o testenv.Options) {
		e := newEnv(t, o)
		r := e.Must(200, "POST", "/v1/auth/login", "", map[string]string{"email": testenv.AdminEmail, "password": testenv.AdminPassword})
		m := r.JSON(t)
		if tok := str(t, m, "token"); !strings.HasPrefix(tok, "sess_") {
			t.Fatalf("token %q lacks sess_", tok)
		}
		if uuid.Validate(str(t, m, "session", "id")) != nil {
			t.Fatalf("session id is not a uuid: %s", r.Body)
		}
		exp, err := time.Parse(time.RFC3339, str(t, m, "session", "expires_at"))
		if err != nil || !exp.After(time.Now()) {
			t.Fatalf("expires_at %v (%v)", exp, err)
		}
		if str(t, m, "user", "email") != testenv.AdminEmail || str(t, m, "user", "role") != "admin" {
			t.Fatalf("user: %s", r.Body)
		}
		if strings.Contains(string(r.Body), "password") || strings.Contains(string(r.Body), "secret_hash") {
			t.Fatalf("login answer leaks a hash: %s", r.Body)
		}

		wantError(t, e.Do("POST", "/v1/auth/login", "", map[string]string{"email": testenv.AdminEmail, "password": "wrong-password"}), 401)
		wantError(t, e.Do("POST", "/v1/auth/login", "", map[string]string{"email": "nobody@example.com", "password": "whatever1"}), 401)
		wantError(t, e.Do("POST", "/v1/auth/login", "", map[string]string{"email": testenv.AdminEmail}), 400, "required")
		wantError(t, e.Do("POST", "/v1/auth/login", "", `{"email":`), 400, "malformed")
		wantError(t, e.Do("POST", "/v1/auth/login", "", `{"email": 1, "password": "x"}`), 400, "email")
	})
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	forEachRedis(t, func(t *testing.T, o testenv.Options) {
		e := newEnv(t, o)
		good := e.Admin
		// Same id, another secret; and a key-shaped token that names no key.
		forged := good[:len(good)-64] + strings.Repeat("0", 64)
		for name, tok := range map[string]string{
			"none":         "",
			"garbage":      "garbage",
			"no prefix":    strings.TrimPrefix(good, "sess_"),
			"wrong secret": forged,
			"unknown key":  "ak_" + strings.Repeat("a", 32) + "_" + strings.Repeat("b", 64),
			"truncated":    good[:len(good)-1],
		} {
			t.Run(name, func(t *testing.T) {
				wantError(t, e.Do("GET", "/v1/auth/me", tok, nil), 401)
				wantError(t, e.Do("DELETE", "/v1/auth/sessions/"+uuid.NewString(), tok, nil), 401)
			})
		}
		// Basic instead of Bearer is not accepted on the API.
		wantError(t, e.Do("GET", "/v1/auth/me", "", nil, "Authorization: Basic "+good), 401)
		// The scheme is case-insensitive.
		e.Must(200, "GET", "/v1/auth/me", "", nil, "Authorization: bearer "+good)

		m := e.Must(200, "GET", "/v1/auth/me", good, nil).JSON(t)
		if str(t, m, "kind") != "session" || str(t, m, "user", "email") != testenv.AdminEmail {
			t.Fatalf("me: %v", m)
		}
		key := e.CreateKey(good, "read")
		m = e.Must(200, "GET", "/v1/auth/me", key, nil).JSON(t)
		if str(t, m, "kind") != "api_key" || str(t, m, "api_key", "scope") != "read" {
			t.Fatalf("me with key: %v", m)
		}
		// A key has no session to end.
		wantError(t, e.Do("DELETE", "/v1/auth/session", key, nil), 400)
	})
}

func TestSessions(t *testing.T) {
	t.Parallel()
	forEachRedis(t, func(t *testing.T, o testenv.Options) {
		e := newEnv(t, o)
		second := e.Login(testenv.AdminEmail, testenv.AdminPassword)
		list := arr(t, e.Must(200, "GET", "/v1/auth/sessions", e.Admin, nil).JSON(t), "sessions")
		if len(list) != 2 {
			t.Fatalf("%d sessions, want 2", len(list))
		}
		var secondID string
		current := 0
		for _, s := range list {
			if get(t, s, "current") == true {
				current++
			} else {
				secondID = str(t, s, "id")
			}
			if _, ok := s.(map[string]any)["secret_hash"]; ok {
				t.Fatal("session list shows the secret hash")
			}
		}
		if current != 1 || secondID == "" {
			t.Fatalf("sessions: %v", list)
		}
		if got := str(t, e.Must(200, "GET", "/v1/auth/me", second, nil).JSON(t), "session_id"); got != secondID {
			t.Fatalf("session_id %s, want %s", got, secondID)
		}

		// SPEC endpoint 1: 204 with an empty body, effective on the very
		// next request.
		r := e.Must(204, "DELETE", "/v1/auth/sessions/"+secondID, e.Admin, nil)
		if len(r.Body) != 0 {
			t.Fatalf("204 with a body: %q", r.Body)
		}
		wantError(t, e.Do("GET", "/v1/auth/me", second, nil), 401)
		wantError(t, e.Do("DELETE", "/v1/auth/sessions/"+secondID, e.Admin, nil), 404, "not found")
		wantError(t, e.Do("DELETE", "/v1/auth/sessions/"+uuid.NewString(), e.Admin, nil), 404)
		wantError(t, e.Do("DELETE", "/v1/auth/sessions/not-a-uuid", e.Admin, nil), 404)
		wantError(t, e.Do("DELETE", "/v1/auth/sessions/"+secondID, "", nil), 401)

		// Another user's session is 404 to a member, revocable by an admin.
		_, alice := e.CreateUser("alice@example.com")
		_, bob := e.CreateUser("bob@example.com")
		aliceID := str(t, e.Must(200, "GET", "/v1/auth/me", alice, nil).JSON(t), "session_id")
		bobID := str(t, e.Must(200, "GET", "/v1/auth/me", bob, nil).JSON(t), "session_id")
		wantError(t, e.Do("DELETE", "/v1/auth/sessions/"+aliceID, bob, nil), 404)
		e.Must(200, "GET", "/v1/auth/me", alice, nil)
		wantError(t, e.Do("GET", "/v1/auth/sessions?user_id=x", bob, nil), 403)
		list = arr(t, e.Must(200, "GET", "/v1/auth/sessions?user_id=x", e.Admin, nil).JSON(t), "sessions")
		if len(list) != 0 {
			t.Fatalf("sessions of an unknown user: %v", list)
		}
		e.Must(204, "DELETE", "/v1/auth/sessions/"+aliceID, e.Admin, nil)
		wantError(t, e.Do("GET", "/v1/auth/me", alice, nil), 401)
		// A user revokes their own session by id.
		e.Must(204, "DELETE", "/v1/auth/sessions/"+bobID, bob, nil)
		wantError(t, e.Do("GET", "/v1/auth/me", bob, nil), 401)

		// Logout ends the current session only.
		third := e.Login(testenv.AdminEmail, testenv.AdminPassword)
		e.Must(204, "DELETE", "/v1/auth/session", third, nil)
		wantError(t, e.Do("GET", "/v1/auth/me", third, nil), 401)
		e.Must(200, "GET", "/v1/auth/me", e.Admin, nil)
	})
}

func TestUsers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Must(201, "POST", "/v1/users", e.Admin, map[string]string{"email": "carol@example.com", "password": "carol-password", "name": "Carol"})
	m := r.JSON(t)
	carolID := str(t, m, "user", "id")
	if str(t, m, "user", "role") != "member" || strings.Contains(string(r.Body), "password") {
		t.Fatalf("created user: %s", r.Body)
	}
	carol := e.Login("carol@example.com", "carol-password")
	// The email is matched case-insensitively at login and for uniqueness.
	e.Login("CAROL@example.com", "carol-password")
	wantError(t, e.Do("POST", "/v1/users", e.Admin, map[string]string{"email": "Carol@Example.com", "password": "another-one"}), 409)

	for name, body := range map[string]any{
		"bad email":      map[string]string{"email": "not an email", "password": "long-enough"},
		"short password": map[string]string{"email": "d@example.com", "password": "short"},
		"no password":    map[string]string{"email": "d@example.com"},
		"bad role":       map[string]string{"email": "d@example.com", "password": "long-enough", "role": "god"},
		"wrong type":     map[string]any{"email": "d@example.com", "password": 12345678},
		"control char":   map[string]string{"email": "d@example.com", "password": "long-enough", "name": "a\x01b"},
	} {
		t.Run(name, func(t *testing.T) { wantError(t, e.Do("POST", "/v1/users", e.Admin, body), 400) })
	}

	// Members manage nobody but themselves.
	wantError(t, e.Do("POST", "/v1/users", carol, map[string]string{"email": "e@example.com", "password": "long-enough"}), 403)
	wantError(t, e.Do("GET", "/v1/users", carol, nil), 403)
	adminID := str(t, e.Must(200, "GET", "/v1/auth/me", e.Admin, nil).JSON(t), "user", "id")
	wantError(t, e.Do("GET", "/v1/users/"+adminID, carol, nil), 404)
	if str(t, e.Must(200, "GET", "/v1/users/me", carol, nil).JSON(t), "user", "id") != carolID {
		t.Fatal("/users/me is not the caller")
	}
	e.Must(200, "PATCH", "/v1/users/"+carolID, carol, map[string]string{"name": "Carol C."})
	wantError(t, e.Do("PATCH", "/v1/users/"+carolID, carol, map[string]string{"role": "admin"}), 403)
	e.Must(200, "PATCH", "/v1/users/me", carol, map[string]string{"password": "carol-password-2"})
	wantError(t, e.Do("POST", "/v1/auth/login", "", map[string]string{"email": "carol@example.com", "password": "carol-password"}), 401)
	carol = e.Login("carol@example.com", "carol-password-2")

	users := arr(t, e.Must(200, "GET", "/v1/users", e.Admin, nil).JSON(t), "users")
	if len(users) != 2 {
		t.Fatalf("%d users, want 2", len(users))
	}
	if str(t, e.Must(200, "GET", "/v1/users/"+carolID, e.Admin, nil).JSON(t), "user", "name") != "Carol C." {
		t.Fatal("name change lost")
	}

	// Disabling a user locks out their sessions and keys at once.
	key := e.CreateKey(carol, "read")
	e.Must(200, "PATCH", "/v1/users/"+carolID, e.Admin, map[string]bool{"disabled": true})
	wantError(t, e.Do("GET", "/v1/auth/me", carol, nil), 401)
	wantError(t, e.Do("GET", "/v1/auth/me", key, nil), 401)
	wantError(t, e.Do("POST", "/v1/auth/login", "", map[string]string{"email": "carol@example.com", "password": "carol-password-2"}), 401)
	e.Must(200, "PATCH", "/v1/users/"+carolID, e.Admin, map[string]bool{"disabled": false})
	// The sessions ended for good; the key works again.
	wantError(t, e.Do("GET", "/v1/auth/me", carol, nil), 401)
	e.Must(200, "GET", "/v1/auth/me", key, nil)
	carol = e.Login("carol@example.com", "carol-password-2")

	// Deleting a user ends their sessions and removes their keys.
	wantError(t, e.Do("DELETE", "/v1/users/"+adminID, e.Admin, nil), 409)
	wantError(t, e.Do("DELETE", "/v1/users/"+uuid.NewString(), e.Admin, nil), 404)
	wantError(t, e.Do("DELETE", "/v1/users/"+carolID, carol, nil), 403)
	e.Must(204, "DELETE", "/v1/users/"+carolID, e.Admin, nil)
	wantError(t, e.Do("GET", "/v1/auth/me", carol, nil), 401)
	wantError(t, e.Do("GET", "/v1/auth/me", key, nil), 401)
	wantError(t, e.Do("GET", "/v1/users/"+carolID, e.Admin, nil), 404)

	sys := filepath.Join(e.Store.Root(), "_system.git")
	testenv.Git(t, sys, "fsck", "--strict", "--no-dangling")
	if log := testenv.Git(t, sys, "log", "--format=%an|%s"); !strings.Contains(log, "Admin|Create user carol@example.com") || !strings.Contains(log, "Admin|Delete user "+carolID) {
		t.Fatalf("system history lacks the user changes:\n%s", log)
	}
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Must(201, "POST", "/v1/api-keys", e.Admin, map[string]string{"name": "ci", "scope": "write"})
	m := r.JSON(t)
	tok := str(t, m, "token")
	id := str(t, m, "api_key", "id")
	if !strings.HasPrefix(tok, "ak_") || str(t, m, "api_key", "scope") != "write" || strings.Contains(string(r.Body), "secret_hash") {
		t.Fatalf("created key: %s", r.Body)
	}
	if !strings.HasPrefix(tok, str(t, m, "api_key", "prefix")) {
		t.Fatalf("prefix %q is not the token's start", str(t, m, "api_key", "prefix"))
	}
	e.Must(200, "GET", "/v1/auth/me", tok, nil)

	// Only the hash is stored: the secret is nowhere in the system repository.
	sys := filepath.Join(e.Store.Root(), "_system.git")
	secret := tok[strings.LastIndex(tok, "_")+1:]
	if out, err := exec.Command("git", "-C", sys, "grep", "-q", secret, "main").CombinedOutput(); err == nil {
		t.Fatalf("the key's secret is stored in git: %s", out)
	}
	if !strings.Contains(testenv.Git(t, sys, "log", "--format=%s"), "Create API key ci") {
		t.Fatal("no commit for the new key")
	}

	list := e.Must(200, "GET", "/v1/api-keys", e.Admin, nil)
	if keys := arr(t, list.JSON(t), "api_keys"); len(keys) != 1 || str(t, keys[0], "id") != id {
		t.Fatalf("list: %s", list.Body)
	}
	if strings.Contains(string(list.Body), secret) || strings.Contains(string(list.Body), "secret_hash") {
		t.Fatal("list shows the secret")
	}
	e.Must(200, "GET", "/v1/api-keys/"+id, e.Admin, nil)

	// Rotation: the old token fails at once, the new one works.
	newTok := str(t, e.Must(200, "POST", "/v1/api-keys/"+id+"/rotate", e.Admin, nil).JSON(t), "token")
	if newTok == tok {
		t.Fatal("rotate returned the same token")
	}
	wantError(t, e.Do("GET", "/v1/auth/me", tok, nil), 401)
	e.Must(200, "GET", "/v1/auth/me", newTok, nil)

	// Keys of other users are invisible; a read or write key cannot manage keys.
	_, dave := e.CreateUser("dave@example.com")
	wantError(t, e.Do("GET", "/v1/api-keys/"+id, dave, nil), 404)
	wantError(t, e.Do("DELETE", "/v1/api-keys/"+id, dave, nil), 404)
	wantError(t, e.Do("POST", "/v1/api-keys/"+id+"/rotate", dave, nil), 404)
	if keys := arr(t, e.Must(200, "GET", "/v1/api-keys", dave, nil).JSON(t), "api_keys"); len(keys) != 0 {
		t.Fatalf("dave sees keys: %v", keys)
	}
	wantError(t, e.Do("POST", "/v1/api-keys", newTok, map[string]string{"name": "x", "scope": "read"}), 403)
	wantError(t, e.Do("POST", "/v1/api-keys/"+id+"/rotate", newTok, nil), 403)
	wantError(t, e.Do("DELETE", "/v1/api-keys/"+id, newTok, nil), 403)

	for name, body := range map[string]any{
		"no name":        map[string]string{"scope": "read"},
		"bad scope":      map[string]string{"name": "x", "scope": "root"},
		"unknown proj":   map[string]any{"name": "x", "scope": "read", "project_ids": []string{uuid.NewString()}},
		"ids not a list": map[string]any{"name": "x", "scope": "read", "project_ids": "p"},
		"bad expiry":     map[string]any{"name": "x", "scope": "read", "expires_at": "tomorrow"},
	} {
		t.Run(name, func(t *testing.T) { wantError(t, e.Do("POST", "/v1/api-keys", e.Admin, body), 400) })
	}
	// A member may not limit a key to a project they cannot see.
	pid := e.CreateProject(e.Admin, "secret")
	wantError(t, e.Do("POST", "/v1/api-keys", dave, map[string]any{"name": "x", "project_ids": []string{pid}}), 400)

	// A key expiring is refused once it has: TestAPIKeyExpiry.

	e.Must(204, "DELETE", "/v1/api-keys/"+id, e.Admin, nil)
	wantError(t, e.Do("GET", "/v1/auth/me", newTok, nil), 401)
	wantError(t, e.Do("DELETE", "/v1/api-keys/"+id, e.Admin, nil), 404)
	testenv.Git(t, sys, "fsck", "--strict", "--no-dangling")
}

// TestAccess checks who may do what: key scopes, keys limited to projects,
// and the project roles viewer, editor and owner.
func TestAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newSkill(t, e, "alpha")
	b := newSkill(t, e, "beta")
	a.draft(t, nil)
	b.draft(t, nil)
	file := map[string]string{"file_path": "notes.txt", "content": "hi"}

	// A write key limited to project A: B's project and skills do not exist
	// for it, by id or by slug, for reads and writes.
	onlyA := e.CreateKey(e.Admin, "write", a.projectID)
	e.Must(200, "POST", a.vurl(1, "/files"), onlyA, file)
	for _, path := range []string{"/v1/projects/" + b.projectID, b.url(""), "/v1/skills/beta", b.vurl(1), b.vurl(1, "/files"), "/v1/projects/" + b.projectID + "/skills"} {
		wantError(t, e.Do("GET", path, onlyA, nil), 404)
	}
	wantError(t, e.Do("POST", b.vurl(1, "/files"), onlyA, file), 404)
	wantError(t, e.Do("POST", "/v1/projects/"+b.projectID+"/skills", onlyA, map[string]string{"name": "x"}), 404)
	if ps := arr(t, e.Must(200, "GET", "/v1/projects", onlyA, nil).JSON(t), "projects"); len(ps) != 1 || str(t, ps[0], "id") != a.projectID {
		t.Fatalf("limited key lists projects %v", ps)
	}

	// A read key reads but never writes (403).
	read := e.CreateKey(e.Admin, "read")
	e.Must(200, "GET", a.vurl(1, "/files"), read, nil)
	before := a.refs(t)
	wantError(t, e.Do("POST", a.vurl(1, "/files"), read, file), 403)
	wantError(t, e.Do("POST", a.url("/versions"), read, nil), 403)
	wantError(t, e.Do("POST", a.vurl(1, "/archive"), read, nil), 403)
	wantError(t, e.Do("DELETE", a.vurl(1, "/files/notes.txt"), read, nil), 403)
	wantError(t, e.Do("POST", "/v1/projects", read, map[string]string{"name": "Nope"}), 403)
	wantError(t, e.Do("PATCH", a.url(""), read, map[string]string{"name": "Nope"}), 403)
	sameRefs(t, before, a.refs(t))

	// Project roles.
	viewerID, viewer := e.CreateUser("viewer@example.com")
	editorID, editor := e.CreateUser("editor@example.com")
	ownerID, owner := e.CreateUser("owner@example.com")
	_, stranger := e.CreateUser("stranger@example.com")
	for id, role := range map[string]string{viewerID: "viewer", editorID: "editor", ownerID: "owner"} {
		e.Must(200, "POST", "/v1/projects/"+a.projectID+"/members", e.Admin, map[string]string{"user_id": id, "role": role})
	}
	members := arr(t, e.Must(200, "GET", "/v1/projects/"+a.projectID+"/members", viewer, nil).JSON(t), "members")
	if len(members) != 4 { // the admin who created it, and three
		t.Fatalf("members: %v", members)
	}

	// Strangers see nothing.
	wantError(t, e.Do("GET", "/v1/projects/"+a.projectID, stranger, nil), 404)
	wantError(t, e.Do("GET", a.url(""), stranger, nil), 404)
	wantError(t, e.Do("POST", a.vurl(1, "/files"), stranger, file), 404)
	if ps := arr(t, e.Must(200, "GET", "/v1/projects", stranger, nil).JSON(t), "projects"); len(ps) != 0 {
		t.Fatalf("stranger lists %v", ps)
	}

	// Viewers read only.
	e.Must(200, "GET", a.vurl(1, "/files/notes.txt"), viewer, nil)
	wantError(t, e.Do("POST", a.vurl(1, "/files"), viewer, file), 403)
	wantError(t, e.Do("POST", "/v1/projects/"+a.projectID+"/skills", viewer, map[string]string{"name": "v skill"}), 403)

	// Editors change content, not the project.
	e.Must(200, "POST", a.vurl(1, "/files"), editor, map[string]string{"file_path": "by-editor.txt", "content": "e"})
	if got := a.git(t, "log", "-1", "--format=%an <%ae>|%s", "refs/heads/draft/1"); got != "editor@example.com <editor@example.com>|Add by-editor.txt" {
		t.Fatalf("commit author and message: %q", got)
	}
	e.Must(201, "POST", "/v1/projects/"+a.projectID+"/skills", editor, map[string]string{"name": "Editor skill"})
	wantError(t, e.Do("PATCH", "/v1/projects/"+a.projectID, editor, map[string]string{"name": "Renamed"}), 403)
	wantError(t, e.Do("POST", "/v1/projects/"+a.projectID+"/members", editor, map[string]string{"user_id": viewerID, "role": "owner"}), 403)
	wantError(t, e.Do("DELETE", "/v1/projects/"+a.projectID, editor, nil), 403)

	// Owners manage the project and its members.
	e.Must(200, "PATCH", "/v1/projects/"+a.projectID, owner, map[string]string{"description": "owned"})
	e.Must(200, "PUT", "/v1/projects/"+a.projectID+"/members/"+viewerID, owner, map[string]string{"role": "editor"})
	e.Must(200, "POST", a.vurl(1, "/files"), viewer, map[string]string{"file_path": "by-promoted.txt", "content": "v"})
	e.Must(204, "DELETE", "/v1/projects/"+a.projectID+"/members/"+viewerID, owner, nil)
	wantError(t, e.Do("GET", a.url(""), viewer, nil), 404)
	wantError(t, e.Do("DELETE", "/v1/projects/"+a.projectID+"/members/"+viewerID, owner, nil), 404)

	// A member's key is capped by the member's role as well as its scope.
	editorAdminKey := e.CreateKey(editor, "admin")
	wantError(t, e.Do("PATCH", "/v1/projects/"+a.projectID, editorAdminKey, map[string]string{"name": "x"}), 403)
	wantError(t, e.Do("GET", "/v1/users", editorAdminKey, nil), 403)
	ownerWriteKey := e.CreateKey(owner, "write")
	wantError(t, e.Do("PATCH", "/v1/projects/"+a.projectID, ownerWriteKey, map[string]string{"name": "x"}), 403)
	e.Must(200, "POST", a.vurl(1, "/files"), ownerWriteKey, map[string]string{"file_path": "by-key.txt", "content": "k"})
	if got := a.git(t, "log", "-1", "--format=%an", "refs/heads/draft/1"); !strings.Contains(got, "(key key-write)") {
		t.Fatalf("a key's commit is authored %q", got)
	}
	a.fsck(t)
}

// TestPasswordHashCost: passwords set through the API are bcrypt hashes
// at the tuned cost, whether set at creation or changed later.
func TestPasswordHashCost(t *testing.T) {
	sequentialHeavy(t)
	t.Parallel()
	e := newEnv(t, testenv.Options{BcryptCost: httpapi.DefaultBcryptCost})
	cost := func(email string) int {
		t.Helper()
		u, err := e.Store.UserByEmail(context.Background(), email)
		if err != nil {
			t.Fatal(err)
		}
		c, err := bcrypt.Cost([]byte(u.PasswordHash))
		if err != nil {
			t.Fatalf("password hash of %s is not bcrypt: %v", email, err)
		}
		return c
	}
	id, tok := e.CreateUser("hashed@example.com")
	if c := cost("hashed@example.com"); c != httpapi.DefaultBcryptCost {
		t.Fatalf("new user's password hashed at cost %d, want %d", c, httpapi.DefaultBcryptCost)
	}
	e.Must(200, "PATCH", "/v1/users/"+id, tok, map[string]string{"password": "another-password"})
	if c := cost("hashed@example.com"); c != httpapi.DefaultBcryptCost {
		t.Fatalf("changed password hashed at cost %d, want %d", c, httpapi.DefaultBcryptCost)
	}
	e.Login("hashed@example.com", "another-password")
}
