package httpapi_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// TestTwoServersOneDataRoot runs two quire servers, each with its own
// store, metadata index, open repositories and locks, on one data root
// and one real Redis, as two processes on two machines would. Everything
// written through one is read back through the other.
func TestTwoServersOneDataRoot(t *testing.T) {
	t.Parallel()
	a, z := twoServers(t)
	if a.Store == z.Store {
		t.Fatal("the two servers share a store")
	}

	// Projects: made on A, read and changed on Z, read again on A.
	pid := a.CreateProject(a.Admin, "shared")
	if got := str(t, z.Must(200, "GET", "/v1/projects/shared", z.Admin, nil).JSON(t), "project", "id"); got != pid {
		t.Fatalf("Z sees project %s, want %s", got, pid)
	}
	z.Must(200, "PATCH", "/v1/projects/"+pid, z.Admin, map[string]string{"description": "from z"})
	if got := str(t, a.Must(200, "GET", "/v1/projects/"+pid, a.Admin, nil).JSON(t), "project", "description"); got != "from z" {
		t.Fatalf("A sees description %q", got)
	}

	// Skills.
	sid := z.CreateSkill(z.Admin, pid, "twin")
	a.Must(200, "GET", "/v1/skills/twin", a.Admin, nil)
	sa := &skill{e: a, projectID: pid, id: sid, slug: "twin", repo: a.RepoPath("skill", sid)}
	sz := &skill{e: z, projectID: pid, id: sid, slug: "twin", repo: z.RepoPath("skill", sid)}

	// Versions and files, alternating servers.
	if n := sa.draft(t, nil); n != 1 {
		t.Fatalf("draft %d", n)
	}
	sz.put(t, 1, "from-z.txt", "z")
	if got := string(a.Must(200, "GET", sa.vurl(1, "/files/from-z.txt"), a.Admin, nil).Body); got != "z" {
		t.Fatalf("A reads %q", got)
	}
	sa.put(t, 1, "from-a.txt", "a")
	if fs := arr(t, z.Must(200, "GET", sz.vurl(1, "/files"), z.Admin, nil).JSON(t), "files"); len(fs) != 2 {
		t.Fatalf("Z lists %v", fs)
	}
	// Z's ETag for the draft is A's commit.
	head := sa.git(t, "rev-parse", "refs/heads/draft/1")
	z.Must(304, "GET", sz.vurl(1), z.Admin, nil, `If-None-Match: "`+head+`"`)
	sz.publish(t, 1)
	if v := a.Must(200, "GET", sa.vurl(1), a.Admin, nil).JSON(t); str(t, v, "version", "state") != "published" || get(t, v, "version", "live") != true {
		t.Fatalf("A sees v1 as %v", v)
	}
	wantError(t, a.Do("POST", sa.vurl(1, "/files"), a.Admin, map[string]string{"file_path": "x", "content": "x"}), 409)
	if n := sa.draft(t, nil); n != 2 {
		t.Fatalf("A's next draft is %d, want 2", n)
	}
	if sa.git(t, "rev-parse", "draft/2^") != sa.git(t, "rev-parse", "v1^{commit}") {
		t.Fatal("A's draft 2 does not start from Z's v1")
	}
	if n := sz.draft(t, map[string]string{"from": "empty"}); n != 3 {
		t.Fatalf("Z's next draft is %d, want 3", n)
	}
	a.Must(200, "POST", sa.vurl(3, "/archive"), a.Admin, nil)
	wantError(t, z.Do("POST", sz.vurl(3, "/archive"), z.Admin, nil), 409)
	z.Must(204, "DELETE", sz.vurl(2), z.Admin, nil)
	wantError(t, a.Do("GET", sa.vurl(2), a.Admin, nil), 404)

	// Writes through both servers into one draft at once: the lock holds
	// across them, and nothing is lost.
	n := sz.draft(t, nil)
	before := sa.count(t, fmt.Sprintf("refs/heads/draft/%d", n))
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			e := a
			if i%2 == 1 {
				e = z
			}
			if st, body := do(t, e, "POST", sa.vurl(n, "/files"), e.Admin, map[string]string{"file_path": fmt.Sprintf("f%02d", i), "content": fmt.Sprint(i)}); st != 200 {
				t.Errorf("upsert %d: %d %s", i, st, body)
			}
		}(i)
	}
	wg.Wait()
	if got := sa.count(t, fmt.Sprintf("refs/heads/draft/%d", n)); got != before+32 {
		t.Fatalf("%d commits after 32 upserts through two servers, want %d", got, before+32)
	}
	for _, e := range []*skill{sa, sz} {
		if fs := arr(t, e.e.Must(200, "GET", e.vurl(n, "/files"), e.e.Admin, nil).JSON(t), "files"); len(fs) != 35 { // 32 + the three files of v1
			t.Fatalf("%d files, want 35", len(fs))
		}
	}

	// Users, sessions and API keys.
	patUID := str(t, a.Must(201, "POST", "/v1/users", a.Admin, map[string]string{"email": "pat@example.com", "password": "pat-password"}).JSON(t), "user", "id")
	pat := z.Login("pat@example.com", "pat-password")
	a.Must(200, "GET", "/v1/auth/me", pat, nil)
	patID := str(t, a.Must(200, "GET", "/v1/auth/me", pat, nil).JSON(t), "session_id")
	z.Must(204, "DELETE", "/v1/auth/sessions/"+patID, z.Admin, nil)
	wantError(t, a.Do("GET", "/v1/auth/me", pat, nil), 401)

	r := a.Must(201, "POST", "/v1/api-keys", a.Admin, map[string]any{"name": "shared", "scope": "write", "project_ids": []string{pid}})
	key, keyID := str(t, r.JSON(t), "token"), str(t, r.JSON(t), "api_key", "id")
	z.Must(200, "POST", sz.vurl(n, "/files"), key, map[string]string{"file_path": "by-key", "content": "k"})
	rotated := str(t, z.Must(200, "POST", "/v1/api-keys/"+keyID+"/rotate", z.Admin, nil).JSON(t), "token")
	wantError(t, a.Do("GET", "/v1/auth/me", key, nil), 401)
	a.Must(200, "GET", "/v1/auth/me", rotated, nil)
	a.Must(204, "DELETE", "/v1/api-keys/"+keyID, a.Admin, nil)
	wantError(t, z.Do("GET", "/v1/auth/me", rotated, nil), 401)

	// Membership granted on one server is honoured by the other.
	if got := str(t, z.Must(200, "GET", "/v1/users/"+patUID, z.Admin, nil).JSON(t), "user", "email"); got != "pat@example.com" {
		t.Fatalf("Z sees user %s", got)
	}
	pat = a.Login("pat@example.com", "pat-password")
	wantError(t, z.Do("GET", sz.url(""), pat, nil), 404)
	a.Must(200, "POST", "/v1/projects/"+pid+"/members", a.Admin, map[string]string{"user_id": patUID, "role": "viewer"})
	z.Must(200, "GET", sz.url(""), pat, nil)
	wantError(t, z.Do("POST", sz.vurl(n, "/files"), pat, map[string]string{"file_path": "p", "content": "p"}), 403)

	// Renames and deletes.
	z.Must(200, "PATCH", sz.url(""), z.Admin, map[string]string{"slug": "twin-two"})
	a.Must(200, "GET", "/v1/skills/twin-two", a.Admin, nil)
	wantError(t, a.Do("GET", "/v1/skills/twin", a.Admin, nil), 404)
	a.Must(204, "DELETE", sa.url(""), a.Admin, nil)
	wantError(t, z.Do("GET", sz.url(""), z.Admin, nil), 404)
	wantError(t, z.Do("GET", sz.vurl(1, "/files"), z.Admin, nil), 404)
	z.Must(204, "DELETE", "/v1/projects/"+pid, z.Admin, nil)
	wantError(t, a.Do("GET", "/v1/projects/"+pid, a.Admin, nil), 404)
}

// twoServers starts two servers on one data root and one real Redis key
// prefix, as two processes on two machines; it skips the test without a
// real Redis.
func twoServers(t *testing.T) (a, z *testenv.Env) {
	t.Helper()
	if testenv.RedisURL() == "" {
		t.Skip("QUIRE_TEST_REDIS_URL is not set: two servers need one real Redis")
	}
	b := make([]byte, 6)
	rand.Read(b)
	opts := testenv.Options{Root: t.TempDir(), Prefix: "quiretest:" + hex.EncodeToString(b) + ":"}
	return newEnv(t, opts), newEnv(t, opts)
}
