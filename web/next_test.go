package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// nextCases are ?next= values and where a signed-in browser is sent:
// only a path that still starts with /ui/ once its dot segments (plain
// or percent-encoded) and duplicate slashes are resolved is followed.
var nextCases = []struct{ next, want string }{
	{"/ui/p/demo", "/ui/p/demo"},
	{"/ui/p/demo?tab=files", "/ui/p/demo?tab=files"},
	{"/ui//p///demo", "/ui/p/demo"},
	{"/ui/p/../account", "/ui/account"},
	{"/ui/", "/ui/"},
	{"/ui/../v1/users", "/ui/"},
	{"/ui/./p/../../openapi.json", "/ui/"},
	{"/ui/%2e%2e/v1/users", "/ui/"},
	{"/ui/%2E%2E/%2e%2E/metrics", "/ui/"},
	{"/ui/..%2fv1", "/ui/"},
	{"/ui", "/ui/"},
	{"/uix/p", "/ui/"},
	{"//evil.example/ui/", "/ui/"},
	{"/\\evil.example/ui/", "/ui/"},
	{"https://evil.example/ui/", "/ui/"},
	{"javascript:alert(1)", "/ui/"},
	{"ui/p/demo", "/ui/"},
	{"/ui/\r\nSet-Cookie: x=1", "/ui/"},
	{"", "/ui/"},
}

func TestLoginNext(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	for _, c := range nextCases {
		t.Run(c.next, func(t *testing.T) {
			r := b.get("/ui/login?next=" + url.QueryEscape(c.next))
			if r.status != http.StatusSeeOther || r.header.Get("Location") != c.want {
				t.Errorf("next=%q: %d to %q, want %q", c.next, r.status, r.header.Get("Location"), c.want)
			}
		})
	}
}
