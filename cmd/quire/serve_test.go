package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire/cache"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/cluster"
	"golang.org/x/crypto/bcrypt"
)

const (
	adminEmail    = "root@example.com"
	adminPassword = "root-password"
)

// runningServer is one running Main and a client for it.
type runningServer struct {
	t      *testing.T
	m      *Main
	out    *cluster.Log
	url    string
	closed bool
}

// close stops the server gracefully, as SIGTERM does.
func (s *runningServer) close() error {
	s.closed = true
	return s.m.Close()
}

// start runs a Main on root, as `quire serve` would, on a free port.
func startServer(t *testing.T, root, redisURL, prefix string, withAdmin bool) *runningServer {
	t.Helper()
	out := &cluster.Log{}
	m := NewMain(out)
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = root
	m.Config.Redis = redisURL
	if prefix != "" {
		m.Config.RedisPrefix = prefix
	}
	m.Config.BcryptCost = bcrypt.MinCost
	if withAdmin {
		m.Config.AdminEmail, m.Config.AdminPassword = adminEmail, adminPassword
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := &runningServer{t: t, m: m, out: out, url: "http://" + m.Addr()}
	t.Cleanup(func() {
		if !s.closed {
			s.close()
		}
	})
	return s
}

func (s *runningServer) do(method, path, token string, body any) (int, map[string]any, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return res.StatusCode, m, raw
}

func (s *runningServer) must(want int, method, path, token string, body any) map[string]any {
	s.t.Helper()
	st, m, raw := s.do(method, path, token, body)
	if st != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, st, want, raw)
	}
	return m
}

func (s *runningServer) login(email, password string) string {
	s.t.Helper()
	return s.must(200, "POST", "/v1/auth/login", "", map[string]string{"email": email, "password": password})["token"].(string)
}

func field(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

// content is what TestRestart writes before a restart and checks after.
type content struct {
	token, revoked, key, skillID string
}

func write(t *testing.T, s *runningServer) content {
	t.Helper()
	tok := s.login(adminEmail, adminPassword)
	revoked := s.login(adminEmail, adminPassword)
	revokedID := field(s.must(200, "GET", "/v1/auth/me", revoked, nil), "session_id")
	s.must(204, "DELETE", "/v1/auth/sessions/"+revokedID, tok, nil)
	key := field(s.must(201, "POST", "/v1/api-keys", tok, map[string]string{"name": "ci", "scope": "read"}), "token")
	pid := field(s.must(201, "POST", "/v1/projects", tok, map[string]string{"name": "Durable"}), "project", "id")
	sid := field(s.must(201, "POST", "/v1/projects/"+pid+"/skills", tok, map[string]string{"name": "Keep"}), "skill", "id")
	s.must(201, "POST", "/v1/skills/keep/versions", tok, nil)
	s.must(200, "POST", "/v1/skills/keep/versions/1/files", tok, map[string]string{"file_path": "SKILL.md", "content": "---\nname: keep\ndescription: Survives restarts.\n---\n"})
	s.must(200, "POST", "/v1/skills/keep/versions/1/publish", tok, nil)
	s.must(201, "POST", "/v1/skills/keep/versions", tok, nil)
	s.must(200, "POST", "/v1/skills/keep/versions/2/files", tok, map[string]string{"file_path": "draft.txt", "content": "in progress"})
	return content{token: tok, revoked: revoked, key: key, skillID: sid}
}

func check(t *testing.T, s *runningServer, c content) {
	t.Helper()
	// The session and key from before the restart work; the revoked
	// session stays revoked.
	s.must(200, "GET", "/v1/auth/me", c.token, nil)
	s.must(200, "GET", "/v1/auth/me", c.key, nil)
	if st, _, _ := s.do("GET", "/v1/auth/me", c.revoked, nil); st != 401 {
		t.Fatalf("a revoked session came back after restart: %d", st)
	}
	v := s.must(200, "GET", "/v1/skills/keep/versions/1", c.key, nil)
	if field(v, "version", "state") != "published" || v["version"].(map[string]any)["live"] != true {
		t.Fatalf("v1 after restart: %v", v)
	}
	if st, _, raw := s.do("GET", "/v1/skills/keep/versions/2/files/draft.txt", c.key, nil); st != 200 || string(raw) != "in progress" {
		t.Fatalf("draft file after restart: %d %q", st, raw)
	}
	// And writing goes on where it stopped.
	s.must(200, "POST", "/v1/skills/keep/versions/2/files", c.token, map[string]string{"file_path": "after.txt", "content": "x"})
	repo := filepath.Join(s.m.store.Root(), field(s.must(200, "GET", "/v1/skills/"+c.skillID, c.token, nil), "skill", "project_id"), "skills", c.skillID+".git")
	gitOK(t, repo, "fsck", "--strict")
	gitOK(t, filepath.Join(s.m.store.Root(), "_system.git"), "fsck", "--strict")
}

func gitOK(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestRestartEmbedded: with the embedded Redis, a graceful restart keeps
// content, sessions (through the snapshot in the data root) and keys.
func TestRestartEmbedded(t *testing.T) {
	root := t.TempDir()
	s := startServer(t, root, "", "", true)
	c := write(t, s)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(root, "sessions.snapshot.json")
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatalf("no sessions snapshot after a graceful stop: %v", err)
	}
	if fi, _ := os.Stat(snap); fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("snapshot is readable by others: %v", fi.Mode())
	}
	if secret := c.token[len(c.token)-64:]; bytes.Contains(b, []byte(secret)) {
		t.Fatal("the snapshot holds a session secret")
	}
	if _, err := http.Get(s.url + "/healthz"); err == nil {
		t.Fatal("the old server still answers after Close")
	}

	s2 := startServer(t, root, "", "", true)
	// A restored snapshot is consumed: a crash after this point must not
	// bring back sessions revoked since.
	if _, err := os.Stat(snap); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the snapshot outlives its restore: %v", err)
	}
	check(t, s2, c)
	// Revoke on the second run; a third run must not resurrect it.
	id := field(s2.must(200, "GET", "/v1/auth/me", c.token, nil), "session_id")
	s2.must(204, "DELETE", "/v1/auth/sessions/"+id, s2.login(adminEmail, adminPassword), nil)
	if err := s2.close(); err != nil {
		t.Fatal(err)
	}
	s3 := startServer(t, root, "", "", true)
	if st, _, _ := s3.do("GET", "/v1/auth/me", c.token, nil); st != 401 {
		t.Fatalf("session revoked before the restart works after it: %d", st)
	}
	if users := s3.must(200, "GET", "/v1/users", s3.login(adminEmail, adminPassword), nil)["users"].([]any); len(users) != 1 {
		t.Fatalf("restart created users: %v", users)
	}
}

// TestRestartRealRedis: with a real Redis, sessions live there; a restart
// keeps them and the content.
func TestRestartRealRedis(t *testing.T) {
	url := os.Getenv("QUIRE_TEST_REDIS_URL")
	if url == "" {
		t.Skip("QUIRE_TEST_REDIS_URL is not set")
	}
	b := make([]byte, 6)
	rand.Read(b)
	prefix := "quiretest:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		r, err := cache.Open(context.Background(), cache.Options{URL: url, Prefix: prefix})
		if err == nil {
			r.DeleteAll(context.Background())
			r.Close()
		}
	})
	root := t.TempDir()
	s := startServer(t, root, url, prefix, true)
	c := write(t, s)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "sessions.snapshot.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a snapshot was written with a real Redis: %v", err)
	}
	check(t, startServer(t, root, url, prefix, true), c)
}

// TestGracefulShutdown: a request in flight when Close is called is
// served to the end and its write is in git; new connections are refused.
func TestGracefulShutdown(t *testing.T) {
	root := t.TempDir()
	s := startServer(t, root, "", "", true)
	tok := s.login(adminEmail, adminPassword)
	pid := field(s.must(201, "POST", "/v1/projects", tok, map[string]string{"name": "G"}), "project", "id")
	sid := field(s.must(201, "POST", "/v1/projects/"+pid+"/skills", tok, map[string]string{"name": "g"}), "skill", "id")
	s.must(201, "POST", "/v1/skills/g/versions", tok, nil)

	// Send the headers with Expect: 100-continue; the server's "100
	// Continue" proves the handler is running and reading the body.
	body := `{"file_path": "late.txt", "content": "made it"}`
	conn, err := net.Dial("tcp", s.m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := "POST /v1/skills/g/versions/1/files HTTP/1.1\r\nHost: quire\r\nAuthorization: Bearer " + tok +
		"\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "100") {
		t.Fatalf("no 100 Continue: %q %v", line, err)
	}
	br.ReadString('\n') // the blank line after the interim response

	closed := make(chan error, 1)
	go func() { closed <- s.close() }()
	// Wait until the listener is closed: Close is under way.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", s.m.Addr())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener stayed open during Close")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with a request in flight", err)
	default:
	}
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("in-flight upsert answered %d", res.StatusCode)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	repo := filepath.Join(root, pid, "skills", sid+".git")
	if got := gitOK(t, repo, "show", "refs/heads/draft/1:late.txt"); got != "made it" {
		t.Fatalf("in-flight write: %q", got)
	}
	gitOK(t, repo, "fsck", "--strict")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestBootstrapGeneratedPassword: with no QUIRE_ADMIN_PASSWORD the first
// start prints a generated password once; it works; later starts do not
// print one again.
func TestBootstrapGeneratedPassword(t *testing.T) {
	root := t.TempDir()
	s := startServer(t, root, "", "", false)
	re := regexp.MustCompile(`created admin (\S+) with password (\S+)`)
	m := re.FindStringSubmatch(s.out.String())
	if m == nil {
		t.Fatalf("no generated password printed:\n%s", s.out.String())
	}
	if m[1] != "admin@localhost" || len(m[2]) < 16 {
		t.Fatalf("bootstrap line %q", m[0])
	}
	s.login(m[1], m[2])
	if strings.Count(s.out.String(), m[2]) != 1 {
		t.Fatal("the generated password is logged more than once")
	}
	s.close()
	s2 := startServer(t, root, "", "", false)
	if re.MatchString(s2.out.String()) {
		t.Fatal("a second start generated another admin")
	}
	s2.login(m[1], m[2])
}

func TestFlagsAndEnv(t *testing.T) {
	t.Setenv("QUIRE_ADDR", "127.0.0.1:9999")
	t.Setenv("QUIRE_DATA", "/tmp/from-env")
	t.Setenv("QUIRE_SESSION_TTL", "2h")
	t.Setenv("QUIRE_FSYNC", "true")
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--data", "/tmp/from-flag"}); err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.Addr != "127.0.0.1:9999" || c.Data != "/tmp/from-flag" || c.SessionTTL != 2*time.Hour || !c.Fsync || c.Redis != "" {
		t.Fatalf("config %+v", c)
	}
	t.Setenv("QUIRE_SESSION_TTL", "soon")
	if err := NewMain(io.Discard).ParseFlags(nil); err == nil {
		t.Fatal("a bad QUIRE_SESSION_TTL was accepted")
	}
	if err := NewMain(io.Discard).ParseFlags([]string{"--nope"}); err == nil {
		t.Fatal("an unknown flag was accepted")
	}

	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "quire ") {
		t.Fatalf("version: %q %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"frobnicate"}, &out, &errOut); err == nil {
		t.Fatal("an unknown command succeeded")
	}
	if err := run(context.Background(), nil, &out, &errOut); err == nil {
		t.Fatal("no command succeeded")
	}
}

// TestBootstrapPasswordCost: the first admin's password is hashed at the
// cost the API uses for every other password, not bcrypt's lower default.
func TestBootstrapPasswordCost(t *testing.T) {
	m := NewMain(io.Discard)
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = t.TempDir()
	m.Config.AdminEmail, m.Config.AdminPassword = adminEmail, adminPassword
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	u, err := m.store.UserByEmail(context.Background(), adminEmail)
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil || cost != httpapi.DefaultBcryptCost {
		t.Fatalf("admin password hashed at cost %d (%v), want %d", cost, err, httpapi.DefaultBcryptCost)
	}
}
