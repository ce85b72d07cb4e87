package httpapi_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// badInputFixture is a skill whose version 1 is published and live,
// version 2 archived and version 3 an open draft.
type badInputFixture struct {
	*skill
	sys string
}

func newBadInputFixture(t *testing.T, e *testenv.Env) *badInputFixture {
	t.Helper()
	s := newSkill(t, e, "guard")
	s.draft(t, nil)
	s.put(t, 1, "a.txt", "a")
	s.publish(t, 1)
	s.draft(t, nil)
	s.publish(t, 2)
	e.Must(200, "POST", s.vurl(1, "/promote"), e.Admin, nil)
	e.Must(200, "POST", s.vurl(2, "/archive"), e.Admin, nil)
	s.draft(t, nil)
	s.put(t, 3, "SKILL.md", testenv.SkillManifest("guard"))
	return &badInputFixture{skill: s, sys: filepath.Join(e.Store.Root(), "_system.git")}
}

// snapshot is every ref of the skill's and the system repository.
func (f *badInputFixture) snapshot(t *testing.T) [2]map[string]string {
	return [2]map[string]string{f.refs(t), refsOf(t, f.sys)}
}

func (f *badInputFixture) unchanged(t *testing.T, before [2]map[string]string) {
	t.Helper()
	after := f.snapshot(t)
	sameRefs(t, before[0], after[0])
	sameRefs(t, before[1], after[1])
}

type badCase struct {
	name   string
	method string
	path   string
	body   any
	status int
	msg    string // must appear in the error (any case)
}

func (f *badInputFixture) run(t *testing.T, cases []badCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.snapshot(t)
			r := f.e.Do(tc.method, tc.path, f.e.Admin, tc.body)
			wantError(t, r, tc.status, tc.msg)
			f.unchanged(t, before)
		})
	}
}

func TestBadJSON(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e := newEnv(t)
	f := newBadInputFixture(t, e)
	files := f.vurl(3, "/files")
	pid := f.projectID
	var cases []badCase
	// Every endpoint that takes a body refuses malformed ones alike.
	for _, ep := range []struct{ method, path string }{
		{"POST", files},
		{"POST", "/v1/projects"},
		{"PATCH", "/v1/projects/" + pid},
		{"POST", "/v1/projects/" + pid + "/skills"},
		{"PATCH", f.url("")},
		{"POST", "/v1/projects/" + pid + "/members"},
		{"POST", "/v1/api-keys"},
		{"POST", "/v1/users"},
		{"POST", f.url("/versions")},
		{"POST", "/v1/auth/login"},
	} {
		for _, b := range []struct{ name, body, msg string }{
			{"truncated", `{"name": "x"`, "malformed"},
			{"not JSON", `name=x`, "malformed"},
			{"array", `[]`, "object"},
			{"string", `"x"`, "object"},
			{"number", `42`, "object"},
			{"trailing data", `{} {}`, "after"},
			{"invalid UTF-8", "{\"name\": \"a\xffb\"}", "UTF-8"},
		} {
			cases = append(cases, badCase{ep.method + " " + ep.path + " " + b.name, ep.method, ep.path, b.body, 400, b.msg})
		}
	}
	// Wrong types and missing fields, naming the field.
	for _, c := range []struct {
		name   string
		method string
		path   string
		body   string
		msg    string
	}{
		{"file_path number", "POST", files, `{"file_path": 1, "content": "x"}`, "file_path"},
		{"content object", "POST", files, `{"file_path": "a", "content": {}}`, "content"},
		{"content array", "POST", files, `{"file_path": "a", "content": ["x"]}`, "content"},
		{"content null", "POST", files, `{"file_path": "a", "content": null}`, "content is required"},
		{"no file_path", "POST", files, `{"content": "x"}`, "file_path is required"},
		{"no content", "POST", files, `{"file_path": "a"}`, "content is required"},
		{"empty object", "POST", files, `{}`, "required"},
		{"null body", "POST", files, `null`, "required"},
		{"empty body", "POST", files, ``, "required"},
		{"message number", "POST", files, `{"file_path": "a", "content": "x", "message": 5}`, "message"},
		{"project no name", "POST", "/v1/projects", `{"slug": "abc"}`, "name is required"},
		{"project blank name", "POST", "/v1/projects", `{"name": "   "}`, "name is required"},
		{"project name number", "POST", "/v1/projects", `{"name": 7}`, "name"},
		{"project name too long", "POST", "/v1/projects", `{"name": "` + strings.Repeat("n", 201) + `"}`, "at most 200"},
		{"project name control", "POST", "/v1/projects", `{"name": "a\u0007b"}`, "control"},
		{"project bad slug", "POST", "/v1/projects", `{"name": "x", "slug": "Bad_Slug"}`, "slug"},
		{"project slug too long", "POST", "/v1/projects", `{"name": "x", "slug": "` + strings.Repeat("s", 64) + `"}`, "slug"},
		{"project underivable slug", "POST", "/v1/projects", `{"name": "!!!"}`, "slug"},
		{"project description long", "POST", "/v1/projects", `{"name": "x", "description": "` + strings.Repeat("d", 2001) + `"}`, "description"},
		{"skill no name", "POST", "/v1/projects/" + pid + "/skills", `{"description": "d"}`, "name is required"},
		{"skill slug type", "POST", "/v1/projects/" + pid + "/skills", `{"name": "x", "slug": 5}`, "slug"},
		{"skill bad slug", "POST", "/v1/projects/" + pid + "/skills", `{"name": "x", "slug": "-x"}`, "slug"},
		{"skill patch empty slug", "PATCH", f.url(""), `{"slug": ""}`, "slug"},
		{"skill patch name type", "PATCH", f.url(""), `{"name": false}`, "name"},
		{"from bool", "POST", f.url("/versions"), `{"from": true}`, "from"},
		{"from float", "POST", f.url("/versions"), `{"from": 1.5}`, "from"},
		{"from negative", "POST", f.url("/versions"), `{"from": -1}`, "from"},
		{"from word", "POST", f.url("/versions"), `{"from": "latest"}`, "from"},
		{"from huge", "POST", f.url("/versions"), `{"from": 1e100}`, "from"},
		{"member role", "POST", "/v1/projects/" + pid + "/members", `{"email": "admin@example.com", "role": 1}`, "role"},
		{"key scope type", "POST", "/v1/api-keys", `{"name": "k", "scope": ["read"]}`, "scope"},
		{"key name type", "POST", "/v1/api-keys", `{"name": {}, "scope": "read"}`, "name"},
		{"login email type", "POST", "/v1/auth/login", `{"email": ["a"], "password": "x"}`, "email"},
	} {
		cases = append(cases, badCase{c.name, c.method, c.path, c.body, 400, c.msg})
	}
	f.run(t, cases)
}

func TestBadFilePaths(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e := newEnv(t)
	f := newBadInputFixture(t, e)
	var cases []badCase
	for _, c := range []struct{ name, path, msg string }{
		{"empty", "", "empty"},
		{"dot dot", "..", ".."},
		{"dot dot first", "../x", ".."},
		{"dot dot inside", "a/../../x", ".."},
		{"dot", "./a", "."},
		{"dot inside", "a/./b", "."},
		{"leading slash", "/etc/passwd", "leading /"},
		{"dot git", ".git", ".git"},
		{"dot git dir", ".git/config", ".git"},
		{"dot git upper", ".GIT/config", ".git"},
		{"dot git mixed inside", "a/.gIt/hooks/x", ".git"},
		{"empty component", "a//b", "empty"},
		{"trailing slash", "a/", "empty"},
		{"NUL", "a\x00b", "control"},
		{"newline", "a\nb", "control"},
		{"tab", "a\tb", "control"},
		{"escape", "a\x1bb", "control"},
		{"DEL", "a\x7fb", "control"},
		{"C1 control", "a\u0085b", "control"},
		{"backslash", "a\\b", "backslash"},
		{"backslash dot dot", "..\\x", "backslash"},
		{"too long", strings.Repeat("a/", 2048) + "b", "4096"},
	} {
		cases = append(cases, badCase{"upsert " + c.name, "POST", f.vurl(3, "/files"), map[string]string{"file_path": c.path, "content": "x"}, 400, c.msg})
	}
	// Invalid UTF-8 cannot travel in JSON; in a URL it can.
	cases = append(cases, badCase{"upsert invalid UTF-8", "POST", f.vurl(3, "/files"), "{\"file_path\": \"a\xff\", \"content\": \"x\"}", 400, "UTF-8"})
	for _, c := range []struct{ name, path, msg string }{
		{"invalid UTF-8", "a%FFb", "UTF-8"},
		{"NUL", "a%00b", "control"},
		{"dot dot", "%2e%2e/x", ".."},
		{"encoded slash dot dot", "a%2F..%2Fb", ".."},
		{"dot git", ".git/config", ".git"},
		{"empty component", "a//b", "empty"},
		{"backslash", "a%5Cb", "backslash"},
		{"too long", strings.Repeat("a", 4097), "4096"},
	} {
		cases = append(cases,
			badCase{"read " + c.name, "GET", f.vurl(3, "/files/"+c.path), nil, 400, c.msg},
			badCase{"delete " + c.name, "DELETE", f.vurl(3, "/files/"+c.path), nil, 400, c.msg})
	}
	f.run(t, cases)

	// The rule is named in a machine-readable detail too.
	m := wantError(t, e.Do("POST", f.vurl(3, "/files"), e.Admin, map[string]string{"file_path": "a/../b", "content": "x"}), 400)
	if str(t, m, "details", "rule") == "" || str(t, m, "code") != "invalid" {
		t.Fatalf("no rule detail: %v", m)
	}
	// At the limit is fine.
	long := strings.Repeat(strings.Repeat("d", 255)+"/", 15) + strings.Repeat("f", 256)
	if len(long) != 4096 {
		t.Fatalf("len %d", len(long))
	}
	f.e.Must(200, "POST", f.vurl(3, "/files"), e.Admin, map[string]string{"file_path": long, "content": "x"})
	f.fsck(t)
}

func TestBadVersionNumbers(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e := newEnv(t)
	f := newBadInputFixture(t, e)
	var cases []badCase
	for _, v := range []string{"0", "-1", "abc", "1.5", "01", "+1", "1e3", "0x1", "99999999999999999999", "%201", "1%20"} {
		for _, ep := range []struct{ method, suffix string }{
			{"GET", ""}, {"DELETE", ""}, {"POST", "/publish"}, {"POST", "/promote"}, {"POST", "/archive"},
			{"GET", "/files"}, {"POST", "/files"}, {"GET", "/files/a.txt"}, {"DELETE", "/files/a.txt"}, {"GET", "/download"},
		} {
			var body any
			if ep.method == "POST" && ep.suffix == "/files" {
				body = map[string]string{"file_path": "a.txt", "content": "x"}
			}
			cases = append(cases, badCase{ep.method + " " + v + ep.suffix, ep.method, f.url("/versions/" + v + ep.suffix), body, 400, "positive integer"})
		}
	}
	f.run(t, cases)
}

func TestUnknownResources(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e := newEnv(t)
	f := newBadInputFixture(t, e)
	ghost := uuid.NewString()
	file := map[string]string{"file_path": "a.txt", "content": "x"}
	cases := []badCase{
		{"project get", "GET", "/v1/projects/" + ghost, nil, 404, "not found"},
		{"project patch", "PATCH", "/v1/projects/" + ghost, map[string]string{"name": "x"}, 404, "not found"},
		{"project delete", "DELETE", "/v1/projects/" + ghost, nil, 404, "not found"},
		{"project members", "GET", "/v1/projects/" + ghost + "/members", nil, 404, "not found"},
		{"skill create in unknown project", "POST", "/v1/projects/" + ghost + "/skills", map[string]string{"name": "x"}, 404, "not found"},
		{"skill list in unknown project", "GET", "/v1/projects/" + ghost + "/skills", nil, 404, "not found"},
	}
	for _, id := range []string{ghost, "no-such-skill"} {
		for _, ep := range []struct {
			method, suffix string
			body           any
		}{
			{"GET", "", nil}, {"PATCH", "", map[string]string{"name": "x"}}, {"DELETE", "", nil},
			{"GET", "/versions", nil}, {"POST", "/versions", nil}, {"GET", "/history", nil}, {"GET", "/diff?from=1&to=2", nil},
			{"GET", "/versions/1", nil}, {"POST", "/versions/1/publish", nil}, {"POST", "/versions/1/archive", nil},
			{"POST", "/versions/1/files", file}, {"GET", "/versions/1/files/a.txt", nil}, {"GET", "/versions/1/download", nil},
		} {
			cases = append(cases, badCase{"skill " + id + " " + ep.method + ep.suffix, ep.method, "/v1/skills/" + id + ep.suffix, ep.body, 404, "not found"})
		}
	}
	for _, ep := range []struct {
		method, suffix string
		body           any
	}{
		{"GET", "", nil}, {"DELETE", "", nil}, {"POST", "/publish", nil}, {"POST", "/promote", nil}, {"POST", "/archive", nil},
		{"GET", "/files", nil}, {"POST", "/files", file}, {"GET", "/files/a.txt", nil}, {"DELETE", "/files/a.txt", nil}, {"GET", "/download", nil},
	} {
		cases = append(cases, badCase{"version 99 " + ep.method + ep.suffix, ep.method, f.vurl(99, ep.suffix), ep.body, 404, "not found"})
	}
	cases = append(cases,
		badCase{"file missing", "GET", f.vurl(1, "/files/nope.txt"), nil, 404, "not found"},
		badCase{"file delete missing", "DELETE", f.vurl(3, "/files/nope.txt"), nil, 404, "not found"},
		badCase{"diff unknown to", "GET", f.url("/diff?from=1&to=99"), nil, 404, "not found"},
		badCase{"base unknown", "POST", f.url("/versions"), map[string]int{"from": 99}, 404, "not found"},
		badCase{"key", "GET", "/v1/api-keys/" + ghost, nil, 404, "not found"},
		badCase{"key rotate", "POST", "/v1/api-keys/" + ghost + "/rotate", nil, 404, "not found"},
		badCase{"user", "GET", "/v1/users/" + ghost, nil, 404, "not found"},
		badCase{"user patch", "PATCH", "/v1/users/" + ghost, map[string]string{"name": "x"}, 404, "not found"},
	)
	f.run(t, cases)
}

func TestStateConflicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := newBadInputFixture(t, e)
	file := map[string]string{"file_path": "b.txt", "content": "x"}
	var cases []badCase
	for n, state := range map[int]string{1: "published", 2: "archived"} {
		cases = append(cases,
			badCase{state + " upsert", "POST", f.vurl(n, "/files"), file, 409, state},
			badCase{state + " delete file", "DELETE", f.vurl(n, "/files/a.txt"), nil, 409, state},
			badCase{state + " delete version", "DELETE", f.vurl(n, ""), nil, 409, "draft"},
			badCase{state + " publish", "POST", f.vurl(n, "/publish"), nil, 409, state},
		)
	}
	cases = append(cases,
		badCase{"archive live", "POST", f.vurl(1, "/archive"), nil, 409, "live"},
		badCase{"archive archived", "POST", f.vurl(2, "/archive"), nil, 409, "archived"},
		badCase{"promote archived", "POST", f.vurl(2, "/promote"), nil, 409, "archived"},
		badCase{"promote draft", "POST", f.vurl(3, "/promote"), nil, 409, "draft"},
		badCase{"file over directory", "POST", f.vurl(3, "/files"), map[string]string{"file_path": "SKILL.md/x", "content": "x"}, 409, "not a directory"},
		badCase{"duplicate project slug", "POST", "/v1/projects", map[string]string{"name": "x", "slug": "proj-guard"}, 409, "slug"},
		badCase{"duplicate skill slug", "POST", "/v1/projects/" + f.projectID + "/skills", map[string]string{"name": "Guard"}, 409, "slug"},
		badCase{"duplicate email", "POST", "/v1/users", map[string]string{"email": testenv.AdminEmail, "password": "long-enough"}, 409, "exists"},
	)
	f.run(t, cases)
}

// TestSkillManifestRules: publishing needs a SKILL.md that follows the
// Agent Skills front matter rules, and a 422 lists every broken one.
func TestSkillManifestRules(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e := newEnv(t)
	f := newBadInputFixture(t, e)
	long := strings.Repeat("a", 65)
	cases := []struct {
		name    string
		content string // "" deletes SKILL.md
		reasons []string
	}{
		{"missing", "", []string{"missing"}},
		{"no front matter", "# guard\n", []string{"front matter"}},
		{"unclosed", "---\nname: guard\ndescription: x\n", []string{"not closed"}},
		{"not YAML", "---\nname: [guard\n---\n", []string{"YAML"}},
		{"empty front matter", "---\n---\nbody\n", []string{"name is required", "description is required"}},
		{"name format", "---\nname: Guard_Skill\ndescription: ok\n---\n", []string{"must match", "must equal"}},
		{"name double dash", "---\nname: gu--ard\ndescription: ok\n---\n", []string{"must match", "must equal"}},
		{"name too long", "---\nname: " + long + "\ndescription: ok\n---\n", []string{"at most 64", "must equal"}},
		{"name not slug", "---\nname: other\ndescription: ok\n---\n", []string{`"other" must equal the skill's slug "guard"`}},
		{"name not a string", "---\nname: 12\ndescription: ok\n---\n", []string{"name is required"}},
		{"description missing", "---\nname: guard\n---\n", []string{"description is required"}},
		{"description blank", "---\nname: guard\ndescription: '   '\n---\n", []string{"description is required"}},
		{"description too long", "---\nname: guard\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", []string{"at most 1024"}},
		{"description XML", "---\nname: guard\ndescription: Use <b>bold</b> moves\n---\n", []string{"XML"}},
		{"name XML", "---\nname: <guard>\ndescription: ok\n---\n", []string{"must match", "XML", "must equal"}},
		{"everything", "---\nname: <Bad Name>\ndescription: <x/>" + strings.Repeat("d", 1030) + "\n---\n", []string{"must match", "XML tags", "must equal", "at most 1024", "description must not contain XML"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := f.draft(t, nil)
			if tc.content == "" {
				e.Must(200, "DELETE", f.vurl(n, "/files/SKILL.md"), e.Admin, nil)
			} else {
				f.put(t, n, "SKILL.md", tc.content)
			}
			before := f.snapshot(t)
			m := wantError(t, e.Do("POST", f.vurl(n, "/publish"), e.Admin, nil), 422)
			reasons := arr(t, m, "details", "reasons")
			if len(reasons) != len(tc.reasons) {
				t.Fatalf("reasons %v, want %d like %v", reasons, len(tc.reasons), tc.reasons)
			}
			joined := fmt.Sprint(reasons)
			for _, want := range tc.reasons {
				if !strings.Contains(joined, want) {
					t.Fatalf("reasons %v lack %q", reasons, want)
				}
				if !strings.Contains(str(t, m, "error"), want) {
					t.Fatalf("message %q lacks %q", str(t, m, "error"), want)
				}
			}
			f.unchanged(t, before)
			if str(t, e.Must(200, "GET", f.vurl(n), e.Admin, nil).JSON(t), "version", "state") != "draft" {
				t.Fatal("a refused publish changed the state")
			}
			e.Must(204, "DELETE", f.vurl(n), e.Admin, nil)
		})
	}
	// CRLF line ends and a BOM are fine; so is the slug after a rename.
	n := f.draft(t, nil)
	f.put(t, n, "SKILL.md", "\xef\xbb\xbf---\r\nname: guard\r\ndescription: ok\r\n---\r\n")
	e.Must(200, "POST", f.vurl(n, "/publish"), e.Admin, nil)
	e.Must(200, "PATCH", f.url(""), e.Admin, map[string]string{"slug": "guard-two"})
	n = f.draft(t, nil)
	wantError(t, e.Do("POST", f.vurl(n, "/publish"), e.Admin, nil), 422, `slug "guard-two"`)
	f.put(t, n, "SKILL.md", testenv.SkillManifest("guard-two"))
	e.Must(200, "POST", f.vurl(n, "/publish"), e.Admin, nil)
	f.fsck(t)
}

func TestSizeLimits(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e := newEnv(t)
	f := newBadInputFixture(t, e)
	mib := 1 << 20
	f.run(t, []badCase{
		{"body over 2 MiB", "POST", f.vurl(3, "/files"), map[string]string{"file_path": "big.txt", "content": strings.Repeat("x", 2*mib+1)}, 413, "larger than"},
		{"file over 1 MiB", "POST", f.vurl(3, "/files"), map[string]string{"file_path": "big.txt", "content": strings.Repeat("x", mib+1)}, 413, "limit"},
		{"project body over 2 MiB", "POST", "/v1/projects", map[string]string{"name": "x", "description": strings.Repeat("x", 2*mib+1)}, 413, "larger than"},
		{"upload over limit", "POST", f.url("/versions/upload"), strings.Repeat("x", 13*mib), 413, "larger than"},
	})
	// Exactly 1 MiB is allowed.
	f.e.Must(200, "POST", f.vurl(3, "/files"), e.Admin, map[string]string{"file_path": "big.txt", "content": strings.Repeat("x", mib)})

	// The version limits, made small to reach them.
	small := quire.DefaultLimits()
	small.MaxVersionFiles = 3
	small.MaxVersionBytes = 100
	e2 := newEnv(t, testenv.Options{Limits: small})
	s := newSkill(t, e2, "small")
	s.draft(t, nil)
	s.put(t, 1, "a", "a")
	s.put(t, 1, "b", "b")
	s.put(t, 1, "c", strings.Repeat("c", 90))
	before := s.refs(t)
	wantError(t, e2.Do("POST", s.vurl(1, "/files"), e2.Admin, map[string]string{"file_path": "d", "content": "d"}), 413, "at most 3 files")
	wantError(t, e2.Do("POST", s.vurl(1, "/files"), e2.Admin, map[string]string{"file_path": "b", "content": strings.Repeat("b", 10)}), 413, "at most 100 bytes")
	sameRefs(t, before, s.refs(t))
	// Replacing a file counts once, not twice.
	s.put(t, 1, "c", strings.Repeat("c", 98))
	// A new draft from a full version is still a full version.
	wantError(t, e2.Do("POST", s.url("/versions"), e2.Admin, zipOf(t, "a", "1", "b", "2", "c", "3", "d", "4"), "Content-Type: application/zip"), 413, "files")
	s.fsck(t)
}
