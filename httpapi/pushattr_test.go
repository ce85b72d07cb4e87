package httpapi_test

import (
	"strings"
	"testing"
)

// TestPushAttribution: commits pushed with a forged author are credited,
// in history and the activity feed, to the user (and key) whose
// credential pushed them; the push itself is a history entry by them.
func TestPushAttribution(t *testing.T) {
	t.Parallel()
	f := newGitFixture(t)
	e, g := f.e, f.g
	bobID, bob := e.CreateUser("bob@example.com")
	e.Must(200, "POST", "/v1/projects/"+f.pid+"/members", e.Admin, obj{"user_id": bobID, "role": "editor"})
	keyResp := e.Must(201, "POST", "/v1/api-keys", bob, obj{"name": "ci", "scope": "write"}).JSON(t)
	keyID, keyTok := str(t, keyResp, "api_key", "id"), str(t, keyResp, "token")

	w := f.clone(bob, "-b", "draft/2")
	forge := []string{"-c", "user.name=Mallory", "-c", "user.email=ceo@example.com"}
	commit := func(msg string) string {
		g.must(w, append(forge, "commit", "-q", "--allow-empty", "--author=Mallory <ceo@example.com>", "-m", msg)...)
		return g.must(w, "rev-parse", "HEAD")
	}
	bySession := []string{commit("forged one"), commit("forged two")}
	g.must(w, "push", "-q", "origin", "draft/2")
	byKey := commit("forged three")
	g.must(w, "push", "-q", g.url(keyTok, "demo/skills/pdf.git"), "draft/2")
	f.fsck()

	type want struct{ user, email, key string }
	wants := map[string]want{
		bySession[0]: {bobID, "bob@example.com", ""},
		bySession[1]: {bobID, "bob@example.com", ""},
		byKey:        {bobID, "bob@example.com", keyID},
	}
	check := func(where string, entries []any) {
		t.Helper()
		seen, pushes := 0, 0
		for _, x := range entries {
			m := x.(map[string]any)
			id := m["id"].(string)
			pb, _ := m["pushed_by"].(map[string]any)
			if w, ok := wants[id]; ok {
				seen++
				if m["email"] != "ceo@example.com" {
					t.Errorf("%s: %s shows author email %v, want what the commit claims", where, id[:8], m["email"])
				}
				if pb == nil || pb["user_id"] != w.user || pb["email"] != w.email || (w.key == "" && pb["key_id"] != nil) || (w.key != "" && pb["key_id"] != w.key) {
					t.Errorf("%s: commit %s pushed_by %v, want %+v", where, id[:8], pb, w)
				}
				continue
			}
			if msg, _ := m["message"].(string); strings.HasPrefix(msg, "Push draft 2") {
				pushes++
				if pb == nil || pb["user_id"] != bobID || pb["email"] != "bob@example.com" || m["email"] != "bob@example.com" {
					t.Errorf("%s: push record %v", where, m)
				}
				if strings.Contains(msg, "Quire-Push") {
					t.Errorf("%s: push record shows its trailers: %q", where, msg)
				}
				continue
			}
			if pb != nil {
				t.Errorf("%s: %v is no pushed commit but has pushed_by", where, m)
			}
		}
		if seen != len(wants) || pushes != 2 {
			t.Errorf("%s: saw %d of %d pushed commits and %d of 2 push records", where, seen, len(wants), pushes)
		}
	}
	check("history", arr(t, e.Must(200, "GET", "/v1/skills/pdf/history", bob, nil).JSON(t), "commits"))
	check("activity", arr(t, e.Must(200, "GET", "/v1/projects/"+f.pid+"/activity?limit=200", bob, nil).JSON(t), "activity"))
}
