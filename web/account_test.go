package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

var tokenField = regexp.MustCompile(`id="new-token" type="text" readonly value="(ak_[^"]+)"`)
var keyAction = regexp.MustCompile(`action="/ui/account/keys/([^/"]+)/revoke"`)

func TestAccountKeysAndSessions(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	token := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	other := newBrowser(t, f.e.URL)
	other.signIn(testenv.AdminEmail, testenv.AdminPassword)

	acct := b.get("/ui/account")
	wantPage(t, acct, 200, "Sessions", "this one", "No API keys.")

	made := b.do("POST", "/ui/account/keys", url.Values{"csrf": {token}, "name": {"ci & bot"}, "scope": {"read"}, "project": {f.projectID}})
	wantPage(t, made, 200, "New token for ci &amp; bot", "shown only this once")
	if made.header.Get("Cache-Control") != "no-store" {
		t.Errorf("token page Cache-Control %q", made.header.Get("Cache-Control"))
	}
	m := tokenField.FindStringSubmatch(made.body)
	if m == nil {
		t.Fatalf("no token on the page:\n%s", made.body)
	}
	key := m[1]
	if r := f.e.Do("GET", "/v1/skills/"+f.skillID, key, nil); r.Status != 200 {
		t.Fatalf("the new key does not work: %d", r.Status)
	}
	again := b.get("/ui/account")
	if tokenField.MatchString(again.body) {
		t.Fatal("the token is shown a second time")
	}
	id := keyAction.FindStringSubmatch(again.body)[1]

	rot := b.do("POST", "/ui/account/keys/"+id+"/rotate", url.Values{"csrf": {token}})
	m = tokenField.FindStringSubmatch(rot.body)
	if rot.status != 200 || m == nil || m[1] == key {
		t.Fatalf("rotate: %d\n%s", rot.status, rot.body)
	}
	if r := f.e.Do("GET", "/v1/skills/"+f.skillID, key, nil); r.Status != 401 {
		t.Fatalf("the old key works after rotation: %d", r.Status)
	}
	key = m[1]
	wantPage(t, b.do("POST", "/ui/account/keys/"+id+"/revoke", url.Values{}), http.StatusForbidden) // no form token
	if r := b.do("POST", "/ui/account/keys/"+id+"/revoke", url.Values{"csrf": {token}}); r.status != http.StatusSeeOther {
		t.Fatalf("revoke key: %d", r.status)
	}
	if r := f.e.Do("GET", "/v1/skills/"+f.skillID, key, nil); r.Status != 401 {
		t.Fatalf("a revoked key works: %d", r.Status)
	}

	// Revoke the other browser's session from this one.
	wantPage(t, other.get("/ui/"), 200)
	rows := regexp.MustCompile(`action="/ui/account/sessions/([^/"]+)/revoke" class="inline"><input type="hidden" name="csrf" value="[^"]+"><button type="submit">Revoke</button>`).FindAllStringSubmatch(b.get("/ui/account").body, -1)
	if len(rows) != 2 { // the other browser's and the test harness's API session
		t.Fatalf("other sessions listed: %v", rows)
	}
	for _, row := range rows {
		if r := b.do("POST", "/ui/account/sessions/"+row[1]+"/revoke", url.Values{"csrf": {token}}); r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/account" {
			t.Fatalf("revoke session: %d %q", r.status, r.header.Get("Location"))
		}
	}
	if r := other.get("/ui/"); r.status != http.StatusSeeOther {
		t.Fatalf("the revoked browser still reads pages: %d", r.status)
	}
	if r := b.get("/ui/"); r.status != 200 {
		t.Fatalf("this browser was signed out: %d", r.status)
	}
}
