package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

// The hostile table: malicious and malformed requests across every
// family of endpoints. Each must be answered with its 4xx and an APIError,
// never a 5xx, and must leave every ref of every repository under the
// data root as it was. TestBadJSON, TestBadFilePaths, TestSizeLimits and
// TestUploadZip hold the plainer cases; this table adds the spellings,
// encodings and protocol abuse an attacker would try.

// hostileRow is one request. {skill}, {draft} (the skill's draft
// version path), {project}, {prompt}, {payload} and {admin} (the admin's
// token) in path, body and headers are filled in from the fixture.
type hostileRow struct {
	name   string
	method string
	path   string
	body   any
	// headers are "Key: value", added (so a key may repeat). A
	// Content-Type here replaces the JSON one; an Authorization replaces
	// the admin's bearer token ("Authorization:" alone sends none).
	headers []string
	// raw, when set, is sent as is on a TCP connection instead (for what
	// net/http's client refuses to send), then the write side is closed.
	raw    string
	status int
	// plain marks answers net/http itself gives before any handler runs:
	// their body is text, not an APIError (see hostileNetHTTP).
	plain bool
}

// hostileFixture is the bad-input skill plus a prompt in the same
// project: published version 1 (live), draft 2, a payload.
type hostileFixture struct {
	*badInputFixture
	prompt, payload string
}

func newHostileFixture(t *testing.T) *hostileFixture {
	t.Helper()
	e := newEnv(t)
	f := &hostileFixture{badInputFixture: newBadInputFixture(t, e)}
	f.prompt = e.CreatePrompt(e.Admin, f.projectID, "hostile")
	e.Must(201, "POST", "/v1/prompts/"+f.prompt+"/versions", e.Admin, map[string]string{"template": "Hello {{name}}"})
	e.Must(200, "POST", "/v1/prompts/"+f.prompt+"/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/prompts/"+f.prompt+"/versions", e.Admin, map[string]string{"template": "Hi {{name}}"})
	f.payload = str(t, e.Must(201, "POST", "/v1/prompts/"+f.prompt+"/payloads", e.Admin, map[string]any{"variables": map[string]string{"name": "Ann"}}).JSON(t), "payload", "id")
	return f
}

func (f *hostileFixture) expand(s string) string {
	return strings.NewReplacer("{skill}", "/v1/skills/"+f.id, "{draft}", f.vurl(3), "{project}", f.projectID,
		"{prompt}", "/v1/prompts/"+f.prompt, "{payload}", f.payload, "{admin}", f.e.Admin).Replace(s)
}

// allRefs maps every bare repository under the data root to its refs:
// a write anywhere (a new repository too) changes it.
func allRefs(t *testing.T, root string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasSuffix(path, ".git") {
			out[path] = refsOf(t, path)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameAllRefs(t *testing.T, before, after map[string]map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("repositories changed: %d before, %d after", len(before), len(after))
	}
	for repo, refs := range before {
		if _, found := after[repo]; !found {
			t.Fatalf("repository %s is gone", repo)
		}
		sameRefs(t, refs, after[repo])
	}
}

// send sends the row and returns the answer.
func (f *hostileFixture) send(t *testing.T, row hostileRow) *testenv.Response {
	t.Helper()
	if row.raw != "" {
		return rawRequest(t, f.e.URL, f.expand(row.raw))
	}
	var body io.Reader
	switch b := row.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(f.expand(b))
	case []byte:
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(row.method, f.e.URL+f.expand(row.path), body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+f.e.Admin)
	replaced := map[string]bool{}
	for _, h := range row.headers {
		k, v, _ := strings.Cut(f.expand(h), ":")
		k, v = http.CanonicalHeaderKey(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !replaced[k] {
			req.Header.Del(k)
			replaced[k] = true
		}
		if v != "" {
			req.Header.Add(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &testenv.Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// rawRequest writes req (lines joined with CRLF by the caller) to the
// server, closes the write side and reads one response.
func rawRequest(t *testing.T, url, req string) *testenv.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a hang, not a timed assertion: a server that does
	// not answer fails the test either way.
	conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).CloseWrite()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no HTTP answer: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &testenv.Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// rawHTTP joins lines as an HTTP request: a request line, headers (the
// admin's token unless one is given), a blank line and the body.
func rawHTTP(lines ...string) string {
	head, body := lines[:len(lines)-1], lines[len(lines)-1]
	auth := "Authorization: Bearer {admin}\r\n"
	for _, h := range head {
		if strings.HasPrefix(h, "Authorization:") {
			auth = ""
		}
	}
	return strings.Join(head, "\r\n") + "\r\nHost: quire\r\n" + auth + "Connection: close\r\n\r\n" + body
}

func nestedJSON(depth int, open, close string) string {
	return strings.Repeat(open, depth) + strings.Repeat(close, depth)
}

func hostileRows(t *testing.T) []hostileRow {
	mib := 1 << 20
	file := func(name, p string) hostileRow {
		return hostileRow{name: "upsert " + name, method: "POST", path: "{draft}/files", body: `{"file_path": "` + p + `", "content": "x"}`, status: 400}
	}
	read := func(name, p string, status int) hostileRow {
		return hostileRow{name: "read " + name, method: "GET", path: "{draft}/files/" + p, status: status}
	}
	del := func(name, p string, status int) hostileRow {
		return hostileRow{name: "delete " + name, method: "DELETE", path: "{draft}/files/" + p, status: status}
	}
	zip := func(name string, body []byte, status int) hostileRow {
		return hostileRow{name: "zip " + name, method: "POST", path: "{skill}/versions", body: body, headers: []string{"Content-Type: application/zip"}, status: status}
	}
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf("zeros%02d.bin", i), strings.Repeat("\x00", mib))
	}
	rows := []hostileRow{
		// Path traversal in a file path, every spelling: in the URL...
		read("dot dot", "../../../etc/passwd", 400),
		read("encoded slash", "..%2f..%2fetc%2fpasswd", 400),
		read("encoded dots", "%2e%2e/%2e%2e/etc/passwd", 400),
		read("encoded dots upper", "%2E%2E%2F%2E%2E%2Fetc", 400),
		read("backslash", "..%5c..%5cetc%5cpasswd", 400),
		read("double encoded is a plain name", "%252e%252e%252fetc%252fpasswd", 404),
		read("overlong UTF-8 dot", "%c0%ae%c0%ae/etc/passwd", 400),
		read("overlong UTF-8 slash", "..%c0%afetc", 400),
		read("absolute", "/etc/passwd", 400),
		read("dot git", ".git/config", 400),
		read("dot git upper", ".Git/HEAD", 400),
		read("NUL", "SKILL.md%00.txt", 400),
		read("dot git trailing dot", ".git./config", 400),
		read("dot git trailing space", ".git%20/config", 400),
		read("dot git NTFS stream", ".git::$INDEX_ALLOCATION/config", 400),
		read("dot git short name", "GIT~1/config", 400),
		read("dot git zero-width joiner", ".g%e2%80%8dit/config", 400),
		read("dot git BOM", "%ef%bb%bf.git/config", 400),
		read("dot dot mid path", "scripts/../../../x", 400),
		read("dot component", "./SKILL.md", 400),
		read("surrogate half", "%ed%a0%80.txt", 400),
		del("dot dot", "../../../x", 400),
		del("encoded dots", "%2e%2e%2f%2e%2e%2fx", 400),
		del("absolute", "/etc/passwd", 400),
		del("dot git", ".git/HEAD", 400),
		del("overlong UTF-8", "%c0%ae%c0%ae/x", 400),
		del("NUL", "a%00", 400),
		del("dot git trailing dots", ".git../x", 400),
		// ... and in a JSON body.
		file("dot dot", "../escape.txt"),
		file("dot dot deep", "a/b/../../../escape.txt"),
		file("backslash", `..\\\\escape.txt`),
		file("absolute", "/etc/cron.d/x"),
		file("dot git hooks", ".git/hooks/post-checkout"),
		file("dot git trailing dot", ".git./x"),
		file("dot git trailing space", ".git /x"),
		file("dot git short name", "git~1/x"),
		file("dot gitmodules", ".gitmodules"),
		file("dot gitmodules NTFS", "GITMOD~1"),
		file("dot git zero-width non-joiner", `.g\u200cit/x`),
		file("dot git BOM", `\ufeff.git/x`),
		file("NUL escaped", `a\u0000b`),
		file("carriage return", `a\rb`),
		file("C1 control escaped", `a\u009bb`),
		{name: "upsert lone surrogate", method: "POST", path: "{draft}/files", body: `{"file_path": "\ud800.txt", "content": "x"}`, status: 400},
		{name: "upsert overlong UTF-8 in body", method: "POST", path: "{draft}/files", body: "{\"file_path\": \"\xc0\xae\xc0\xae/x\", \"content\": \"x\"}", status: 400},
		{name: "upsert invalid UTF-8 in content", method: "POST", path: "{draft}/files", body: "{\"file_path\": \"ok.txt\", \"content\": \"\xff\xfe\"}", status: 400},

		// Traversal and junk in ids: never a file system path.
		{name: "project id dot dot", method: "GET", path: "/v1/projects/..%2f..%2f_system.git", status: 404},
		{name: "project id system", method: "DELETE", path: "/v1/projects/_system", status: 404},
		{name: "skill id dot dot", method: "DELETE", path: "/v1/skills/..%2f..%2f_system", status: 404},
		{name: "skill id encoded dots", method: "GET", path: "/v1/skills/%2e%2e/versions", status: 404},
		{name: "skill id invalid UTF-8", method: "POST", path: "/v1/skills/%ff%fe/versions", status: 404},
		{name: "prompt id NUL", method: "PATCH", path: "/v1/prompts/a%00b", body: `{"name": "x"}`, status: 404},
		{name: "payload id dot dot", method: "DELETE", path: "{prompt}/payloads/..%2f..%2fx", status: 404},
		{name: "user id dot dot", method: "DELETE", path: "/v1/users/..%2fadmin", status: 404},
		{name: "api key id dot dot", method: "POST", path: "/v1/api-keys/..%2f..%2fx/rotate", status: 404},
		{name: "member id dot dot", method: "DELETE", path: "/v1/projects/{project}/members/..%2fx", status: 404},
		{name: "git project dot dot", method: "GET", path: "/git/%2e%2e/_system.git/info/refs?service=git-upload-pack", status: 404},
		{name: "git system repository", method: "GET", path: "/git/_system/skills/_system.git/info/refs?service=git-upload-pack", status: 404},
		{name: "git asset dot dot", method: "GET", path: "/git/{project}/skills/..%2f..%2f_system.git/info/refs?service=git-upload-pack", status: 404},
		{name: "git dumb protocol file", method: "GET", path: "/git/{project}/skills/guard.git/objects/info/packs", status: 404},
		{name: "git config file", method: "GET", path: "/git/{project}/skills/guard.git/config", status: 404},

		{name: "session id dot dot", method: "DELETE", path: "/v1/auth/sessions/..%2f..%2fsess", status: 404},
		{name: "session id glob", method: "DELETE", path: "/v1/auth/sessions/*", status: 404},
		{name: "render by project slug dot dot", method: "POST", path: "/v1/projects/{project}/prompts/..%2f..%2fx/render", status: 404},
		{name: "render payload_id dot dot", method: "POST", path: "{prompt}/render", body: `{"payload_id": "../../x"}`, status: 404},
		{name: "live prompt id encoded dots", method: "GET", path: "/v1/prompts/%2e%2e/live", status: 404},
		{name: "variables version junk", method: "GET", path: "{prompt}/versions/1;/variables", status: 400},

		// Lookalikes and injections in names the rules define.
		{name: "slug Cyrillic lookalike", method: "POST", path: "/v1/projects", body: `{"name": "x", "slug": "аdmin"}`, status: 400},
		{name: "slug dot dot", method: "PATCH", path: "{skill}", body: `{"slug": "../x"}`, status: 400},
		{name: "slug fullwidth", method: "POST", path: "/v1/projects/{project}/skills", body: `{"name": "x", "slug": "ｇuard"}`, status: 400},
		{name: "email with CRLF", method: "POST", path: "/v1/users", body: `{"email": "a@example.com\r\nBcc: b@example.com", "password": "long-enough"}`, status: 400},
		{name: "email with display name", method: "POST", path: "/v1/users", body: `{"email": "\"Admin\" <evil@example.com>", "password": "long-enough"}`, status: 400},
		{name: "login email with CRLF", method: "POST", path: "/v1/auth/login", body: `{"email": "admin@example.com\r\n", "password": "admin-password"}`, status: 401},
		{name: "member role with space", method: "POST", path: "/v1/projects/{project}/members", body: `{"email": "admin@example.com", "role": "owner "}`, status: 400},
		{name: "key scope upper case", method: "POST", path: "/v1/api-keys", body: `{"name": "k", "scope": "ADMIN"}`, status: 400},
		{name: "key project id dot dot", method: "POST", path: "/v1/api-keys", body: `{"name": "k", "project_ids": ["../_system"]}`, status: 400},

		// Deeply nested and huge JSON.
		{name: "nested arrays as body", method: "POST", path: "{draft}/files", body: nestedJSON(10001, "[", "]"), status: 400},
		{name: "nested objects in file_path", method: "POST", path: "{draft}/files", body: `{"file_path": ` + nestedJSON(10001, `{"a":`, "}") + `}`, status: 400},
		{name: "nested arrays in variables", method: "POST", path: "{prompt}/payloads", body: `{"variables": {"a": ` + nestedJSON(10001, "[", "]") + `}}`, status: 400},
		{name: "nested arrays in render variables", method: "POST", path: "{prompt}/render", body: `{"variables": {"a": ` + nestedJSON(10001, "[", "]") + `}}`, status: 400},
		{name: "nested objects in model_params", method: "PATCH", path: "{prompt}/versions/2", body: `{"model_params": ` + nestedJSON(10001, `{"a":`, "}") + `}`, status: 400},
		{name: "nested arrays unclosed", method: "POST", path: "/v1/projects", body: strings.Repeat("[", 100000), status: 400},
		{name: "huge payload body", method: "POST", path: "{prompt}/payloads", body: `{"variables": {"a": "` + strings.Repeat("x", 2*mib) + `"}}`, status: 413},
		{name: "huge render body", method: "POST", path: "{prompt}/render", body: `{"variables": {"a": "` + strings.Repeat("x", 2*mib) + `"}}`, status: 413},
		{name: "huge login body", method: "POST", path: "/v1/auth/login", body: `{"email": "` + strings.Repeat("a", 2*mib) + `", "password": "x"}`, status: 413},
		{name: "huge user body", method: "POST", path: "/v1/users", body: `{"email": "a@b.c", "password": "` + strings.Repeat("p", 2*mib) + `"}`, status: 413},
		{name: "huge prompt version body", method: "POST", path: "{prompt}/versions", body: `{"template": "` + strings.Repeat("t", 2*mib) + `"}`, status: 413},
		{name: "huge whitespace body", method: "POST", path: "/v1/api-keys", body: strings.Repeat(" ", 2*mib+1) + `{"name": "k"}`, status: 413},
		{name: "variables over 64 KiB", method: "POST", path: "{prompt}/payloads", body: `{"variables": {"a": "` + strings.Repeat("v", 65*1024) + `"}}`, status: 413},
		{name: "template over 1 MiB", method: "PATCH", path: "{prompt}/versions/2", body: `{"template": "` + strings.Repeat("t", mib+1) + `"}`, status: 413},

		// Duplicate keys: which one counts is up to the parser, so none does.
		{name: "duplicate file_path, bad last", method: "POST", path: "{draft}/files", body: `{"file_path": "ok.txt", "file_path": "../x", "content": "x"}`, status: 400},
		{name: "duplicate file_path, bad first", method: "POST", path: "{draft}/files", body: `{"file_path": "../x", "file_path": "ok.txt", "content": "x"}`, status: 400},
		{name: "duplicate role", method: "PATCH", path: "/v1/users/me", body: `{"role": "member", "role": "admin"}`, status: 400},
		{name: "duplicate scope", method: "POST", path: "/v1/api-keys", body: `{"name": "k", "scope": "read", "scope": "admin"}`, status: 400},
		{name: "duplicate variable", method: "POST", path: "{prompt}/payloads", body: `{"variables": {"a": 1, "a": 2}}`, status: 400},
		{name: "duplicate key in nested variables", method: "POST", path: "{prompt}/render", body: `{"variables": {"o": {"k": 1, "k": 2}}}`, status: 400},
		{name: "duplicate key case-folded", method: "POST", path: "/v1/projects", body: `{"name": "a", "NAME": "b"}`, status: 400},
		{name: "duplicate key Unicode-folded", method: "POST", path: "/v1/api-keys", body: `{"name": "k", "scope": "read", "\u017fcope": "admin"}`, status: 400},
		{name: "duplicate slug with a long s", method: "POST", path: "/v1/projects", body: `{"name": "a", "\u017flug": "x", "slug": "b"}`, status: 400},

		// Trailing garbage and broken documents.
		{name: "trailing garbage payload", method: "POST", path: "{prompt}/payloads", body: `{"variables": {}} x`, status: 400},
		{name: "trailing garbage render", method: "POST", path: "{prompt}/render", body: `{"variables": {}}]`, status: 400},
		{name: "two documents member", method: "POST", path: "/v1/projects/{project}/members", body: `{"email": "admin@example.com", "role": "viewer"}{}`, status: 400},
		{name: "truncated prompt version", method: "PATCH", path: "{prompt}/versions/2", body: `{"template": "x`, status: 400},
		{name: "NaN", method: "POST", path: "{prompt}/render", body: `{"variables": {"a": NaN}}`, status: 400},
		{name: "BOM before JSON", method: "POST", path: "/v1/projects", body: "\xef\xbb\xbf{\"name\": \"bom\"}", status: 400},
		{name: "UTF-16 body", method: "POST", path: "/v1/projects", body: "\xff\xfe{\x00}\x00", headers: []string{"Content-Type: application/json; charset=utf-16"}, status: 400},
		{name: "comment in JSON", method: "POST", path: "/v1/projects", body: `{"name": "x" /* c */}`, status: 400},

		// Wrong JSON types, field by field, where other tests do not go.
		{name: "variables array", method: "POST", path: "{prompt}/payloads", body: `{"variables": ["a"]}`, status: 400},
		{name: "variables string", method: "POST", path: "{prompt}/payloads", body: `{"variables": "a=1"}`, status: 400},
		{name: "variables missing", method: "POST", path: "{prompt}/payloads", body: `{"name": "n"}`, status: 400},
		{name: "payload name number", method: "PUT", path: "{prompt}/payloads/{payload}", body: `{"variables": {}, "name": 5}`, status: 400},
		{name: "render version string", method: "POST", path: "{prompt}/render", body: `{"version": "1"}`, status: 400},
		{name: "render version zero", method: "POST", path: "{prompt}/render", body: `{"version": 0}`, status: 400},
		{name: "render version huge", method: "POST", path: "{prompt}/render", body: `{"version": 1e40}`, status: 400},
		{name: "render payload_id number", method: "POST", path: "{prompt}/render", body: `{"payload_id": 7}`, status: 400},
		{name: "render variables array", method: "POST", path: "{prompt}/render", body: `{"variables": [1]}`, status: 400},
		{name: "template number", method: "PATCH", path: "{prompt}/versions/2", body: `{"template": 5}`, status: 400},
		{name: "messages object", method: "PATCH", path: "{prompt}/versions/2", body: `{"messages": {"role": "user"}}`, status: 400},
		{name: "message content number", method: "PATCH", path: "{prompt}/versions/2", body: `{"messages": [{"role": "user", "content": 1}]}`, status: 400},
		{name: "model array", method: "POST", path: "{prompt}/versions", body: `{"model": ["m"]}`, status: 400},
		{name: "model_params string", method: "PATCH", path: "{prompt}/versions/2", body: `{"model_params": "hot"}`, status: 400},
		{name: "from in a version edit", method: "PATCH", path: "{prompt}/versions/2", body: `{"from": 1}`, status: 400},
		{name: "user email number", method: "POST", path: "/v1/users", body: `{"email": 1, "password": "long-enough"}`, status: 400},
		{name: "user disabled string", method: "PATCH", path: "/v1/users/me", body: `{"disabled": "yes"}`, status: 400},
		{name: "user role number", method: "POST", path: "/v1/users", body: `{"email": "r@example.com", "password": "long-enough", "role": 1}`, status: 400},
		{name: "key project_ids numbers", method: "POST", path: "/v1/api-keys", body: `{"name": "k", "project_ids": [1, 2]}`, status: 400},
		{name: "key expires_at number", method: "POST", path: "/v1/api-keys", body: `{"name": "k", "expires_at": 1700000000}`, status: 400},
		{name: "member user_id number", method: "POST", path: "/v1/projects/{project}/members", body: `{"user_id": 5, "role": "viewer"}`, status: 400},
		{name: "login password number", method: "POST", path: "/v1/auth/login", body: `{"email": "admin@example.com", "password": 12345678}`, status: 400},
		{name: "project description object", method: "PATCH", path: "/v1/projects/{project}", body: `{"description": {}}`, status: 400},
		{name: "prompt slug bool", method: "POST", path: "/v1/projects/{project}/prompts", body: `{"name": "p", "slug": true}`, status: 400},

		// Overlong names, slugs and emails.
		{name: "skill name 10k", method: "POST", path: "/v1/projects/{project}/skills", body: `{"name": "` + strings.Repeat("n", 10000) + `"}`, status: 400},
		{name: "prompt slug 64", method: "POST", path: "/v1/projects/{project}/prompts", body: `{"name": "p", "slug": "` + strings.Repeat("p", 64) + `"}`, status: 400},
		{name: "email 300", method: "POST", path: "/v1/users", body: `{"email": "` + strings.Repeat("e", 290) + `@example.com", "password": "long-enough"}`, status: 400},
		{name: "key name 201", method: "POST", path: "/v1/api-keys", body: `{"name": "` + strings.Repeat("k", 201) + `"}`, status: 400},
		{name: "payload name 201", method: "POST", path: "{prompt}/payloads", body: `{"variables": {}, "name": "` + strings.Repeat("n", 201) + `"}`, status: 400},
		{name: "user name 201", method: "PATCH", path: "/v1/users/me", body: `{"name": "` + strings.Repeat("n", 201) + `"}`, status: 400},
		{name: "password 73 bytes", method: "PATCH", path: "/v1/users/me", body: `{"password": "` + strings.Repeat("p", 73) + `"}`, status: 400},
		{name: "commit message 2001", method: "POST", path: "{draft}/files", body: `{"file_path": "m.txt", "content": "x", "message": "` + strings.Repeat("m", 2001) + `"}`, status: 400},
		{name: "file path 4097 in URL", method: "DELETE", path: "{draft}/files/" + strings.Repeat("a/", 2048) + "bb", status: 400},

		// Zip slip and zip bombs, by the other upload routes.
		zip("slip", zipOf(t, "../../escape.txt", "x"), 400),
		zip("slip dot first", zipOf(t, "./../escape.txt", "x"), 400),
		zip("slip absolute", zipOf(t, "/tmp/escape.txt", "x"), 400),
		zip("slip windows drive", zipOf(t, `C:\escape.txt`, "x"), 400),
		zip("dot git trailing space", zipOf(t, "top/.git /config", "x"), 400),
		zip("NUL in name", zipOf(t, "a\x00b.txt", "x"), 400),
		zip("invalid UTF-8 name", zipOf(t, "a\xffb.txt", "x"), 400),
		zip("symlink", symlinkZip(t), 400),
		zip("high ratio, many entries", zipOf(t, many...), 413),
		zip("lying sizes", lyingZip(t), 400),
		zip("JSON sent as zip", []byte(`{"from": 1}`), 400),
		{name: "zip multipart slip", method: "POST", path: "{skill}/versions/upload", body: multipartZip(t, zipOf(t, "a/../../escape.txt", "x")),
			headers: []string{"Content-Type: multipart/form-data; boundary=hostile"}, status: 400},
		{name: "zip multipart without boundary", method: "POST", path: "{skill}/versions/upload", body: "--x--", headers: []string{"Content-Type: multipart/form-data"}, status: 400},

		// Header abuse.
		{name: "no credential", method: "POST", path: "/v1/projects", body: `{"name": "x"}`, headers: []string{"Authorization:"}, status: 401},
		{name: "Bearer without token", method: "POST", path: "/v1/projects", body: `{"name": "x"}`, headers: []string{"Authorization: Bearer"}, status: 401},
		{name: "Bearer with spaces only", method: "POST", path: "/v1/projects", body: `{"name": "x"}`, headers: []string{"Authorization: Bearer      "}, status: 401},
		{name: "Basic on the API", method: "POST", path: "/v1/projects", body: `{"name": "x"}`, headers: []string{"Authorization: Basic {admin}"}, status: 401},
		{name: "token twice in one header", method: "POST", path: "/v1/projects", body: `{"name": "x"}`, headers: []string{"Authorization: Bearer {admin} {admin}"}, status: 401},
		{name: "huge Authorization", method: "POST", path: "/v1/projects", body: `{"name": "x"}`, headers: []string{"Authorization: Bearer sess_" + strings.Repeat("a", 200000)}, status: 401},
		{name: "two Authorization headers, good first", method: "POST", path: "/v1/projects", body: `{"name": "two-auth-a"}`,
			headers: []string{"Authorization: Bearer {admin}", "Authorization: Bearer ak_x_y"}, status: 400},
		{name: "two Authorization headers, good last", method: "POST", path: "{draft}/files", body: `{"file_path": "two.txt", "content": "x"}`,
			headers: []string{"Authorization: Bearer ak_x_y", "Authorization: Bearer {admin}"}, status: 400},
		{name: "two Authorization headers on git", method: "GET", path: "/git/{project}/skills/guard.git/info/refs?service=git-upload-pack",
			headers: []string{"Authorization: Bearer {admin}", "Authorization: Basic eDp5"}, status: 400},
		{name: "token with control characters", method: "POST", raw: rawHTTP("POST /v1/projects HTTP/1.1", "Authorization: Bearer x\x01y", "Content-Length: 13", `{"name": "x"}`), status: 400, plain: true},
		{name: "CRLF smuggled in a header value", method: "POST", raw: rawHTTP("POST /v1/projects HTTP/1.1", "X-Request-ID: a\rSet-Cookie: x=y", "Content-Length: 13", `{"name": "x"}`), status: 400, plain: true},
		// Folded lines join the header before them (RFC 9112 allows it): the
		// token is part of X-Note, and no credential was sent.
		{name: "header line folding", method: "POST", raw: rawHTTP("POST /v1/projects HTTP/1.1", "X-Note: a", " Authorization: Bearer {admin}", "Authorization:", "Content-Length: 13", `{"name": "x"}`), status: 401},
		{name: "header too large", method: "GET", raw: rawHTTP("GET /v1/auth/me HTTP/1.1", "X-Big: "+strings.Repeat("b", 1<<20+4096), ""), status: 431, plain: true},
		{name: "Content-Length longer than body", method: "POST", raw: rawHTTP("POST {draft}/files HTTP/1.1", "Content-Type: application/json", "Content-Length: 100", `{"file_path": "cl.txt", "content": "x"}`), status: 400},
		{name: "Content-Length shorter than body", method: "POST", raw: rawHTTP("POST {draft}/files HTTP/1.1", "Content-Type: application/json", "Content-Length: 20", `{"file_path": "cl.txt", "content": "x"}`), status: 400},
		{name: "two Content-Lengths", method: "POST", raw: rawHTTP("POST {draft}/files HTTP/1.1", "Content-Length: 38", "Content-Length: 10", `{"file_path": "cl.txt", "content": "x"}`), status: 400, plain: true},
		{name: "negative Content-Length", method: "POST", raw: rawHTTP("POST {draft}/files HTTP/1.1", "Content-Length: -1", `{"file_path": "cl.txt", "content": "x"}`), status: 400, plain: true},
		{name: "chunked and Content-Length", method: "POST", raw: rawHTTP("POST {draft}/files HTTP/1.1", "Content-Length: 38", "Transfer-Encoding: chunked", "26\r\n"+`{"file_path": "cl.txt", "content": "x"}`+"\r\n0\r\n\r\n"), status: 400, plain: true},
		{name: "bad chunk size", method: "POST", raw: rawHTTP("POST {draft}/files HTTP/1.1", "Transfer-Encoding: chunked", "zz\r\n"+`{"file_path": "cl.txt", "content": "x"}`+"\r\n0\r\n\r\n"), status: 400},
		{name: "chunked body over the limit", method: "POST", raw: rawHTTP("POST {draft}/files HTTP/1.1", "Transfer-Encoding: chunked",
			fmt.Sprintf("%x\r\n", 2*mib+1)+strings.Repeat("x", 2*mib+1)+"\r\n0\r\n\r\n"), status: 413},
		{name: "zip Content-Type on a JSON body", method: "POST", path: "{skill}/versions", body: `{"from": 1}`, headers: []string{"Content-Type: application/zip"}, status: 400},
		{name: "git request Content-Type JSON", method: "POST", path: "/git/{project}/skills/guard.git/git-receive-pack", body: "0000", status: 400},
		{name: "git Content-Encoding unknown", method: "POST", path: "/git/{project}/skills/guard.git/git-receive-pack", body: "0000",
			headers: []string{"Content-Type: application/x-git-receive-pack-request", "Content-Encoding: br"}, status: 400},

		// Query parameters.
		{name: "download format tar", method: "GET", path: "{skill}/versions/1/download?format=tar", status: 400},
		{name: "download format traversal", method: "GET", path: "{skill}/versions/1/download?format=../zip", status: 400},
		{name: "diff format unknown", method: "GET", path: "{skill}/diff?from=1&to=3&format=xml", status: 400},
		{name: "diff from missing", method: "GET", path: "{skill}/diff?to=3", status: 400},
		{name: "diff from junk", method: "GET", path: "{skill}/diff?from=1;DROP&to=3", status: 400},
		{name: "limit zero", method: "GET", path: "/v1/projects?limit=0", status: 400},
		{name: "limit negative", method: "GET", path: "/v1/projects/{project}/skills?limit=-1", status: 400},
		{name: "limit over 500", method: "GET", path: "{skill}/versions?limit=501", status: 400},
		{name: "limit float", method: "GET", path: "{skill}/versions/1/files?limit=1.5", status: 400},
		{name: "limit exponent", method: "GET", path: "{prompt}/payloads?limit=1e3", status: 400},
		{name: "limit huge", method: "GET", path: "{skill}/history?limit=99999999999999999999", status: 400},
		{name: "cursor negative", method: "GET", path: "/v1/projects?cursor=-5", status: 400},
		{name: "cursor junk", method: "GET", path: "{prompt}/versions?cursor=abc", status: 400},
		{name: "cursor overflow", method: "GET", path: "{prompt}/payloads?cursor=99999999999999999999", status: 400},
		{name: "history cursor junk", method: "GET", path: "{skill}/history?cursor=..%2f..%2fHEAD", status: 400},
		{name: "activity cursor junk", method: "GET", path: "/v1/projects/{project}/activity?cursor=%00", status: 400},
		{name: "version state unknown", method: "GET", path: "{skill}/versions?state=deleted", status: 400},
	}
	return rows
}

// multipartZip wraps a zip as the "file" part of a form.
func multipartZip(t *testing.T, zip []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("--hostile\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.zip\"\r\nContent-Type: application/zip\r\n\r\n")
	b.Write(zip)
	b.WriteString("\r\n--hostile--\r\n")
	return b.Bytes()
}

// TestHostileRequests sends the hostile table.
func TestHostileRequests(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	f := newHostileFixture(t)
	root := f.e.Store.Root()
	rows := hostileRows(t)
	if len(rows) < 100 {
		t.Fatalf("%d rows; the table promises at least 100", len(rows))
	}
	seen := map[string]bool{}
	for _, row := range rows {
		if seen[row.name] {
			t.Fatalf("two rows named %q", row.name)
		}
		seen[row.name] = true
		t.Run(row.name, func(t *testing.T) {
			before := allRefs(t, root)
			r := f.send(t, row)
			if r.Status >= 500 {
				t.Errorf("server error %d: %.300s", r.Status, r.Body)
			}
			if row.plain {
				// net/http answered before quire saw the request.
				if r.Status != row.status {
					t.Errorf("status %d, want %d (from net/http): %.300s", r.Status, row.status, r.Body)
				}
			} else {
				wantError(t, r, row.status)
			}
			sameAllRefs(t, before, allRefs(t, root))
		})
	}
	// The one hostile request quire cannot answer with a 4xx: net/http
	// refuses a transfer coding it does not know with 501 Not Implemented
	// and a plain-text body before any handler runs, as RFC 9112 §6.1
	// asks of a server.
	t.Run("unknown Transfer-Encoding", func(t *testing.T) {
		before := allRefs(t, root)
		r := rawRequest(t, f.e.URL, f.expand(rawHTTP("POST {draft}/files HTTP/1.1", "Transfer-Encoding: bogus", `{"file_path": "te.txt", "content": "x"}`)))
		if r.Status != http.StatusNotImplemented {
			t.Errorf("status %d, want 501 from net/http: %s", r.Status, r.Body)
		}
		sameAllRefs(t, before, allRefs(t, root))
	})
	if _, err := os.Stat(filepath.Join(root, "escape.txt")); err == nil {
		t.Fatal("a file escaped into the data root")
	}
	f.fsck(t)
}
