// Package e2e runs quire's end-to-end journeys: txtar scripts under
// testdata/ that start the real quire binary and drive it as its users do,
// with HTTP requests and the stock git client. They read as documentation;
// a new journey is a new .txtar file.
//
// Commands the scripts have beside testscript's own:
//
//	quire-serve [flags]             start `quire serve` on a free port with a fresh
//	                                data root; sets $URL, $HOSTPORT, $TOKEN (the
//	                                admin's session) and $GITURL (git smart HTTP
//	                                base with $TOKEN as the password)
//	api [-want N] [-as VAR] METHOD PATH [BODY|@file]
//	                                one request with the bearer token in $VAR
//	                                (default TOKEN; -as none sends none); the body
//	                                goes to stdout, the status line and headers
//	                                to stderr; fails unless the status is N
//	                                (default 200)
//	setjson VAR PATH                set $VAR from the last api body (PATH like
//	                                .skill.id or .versions.0.state)
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

const (
	adminEmail    = "admin@example.com"
	adminPassword = "e2e-admin-password"
)

// quireBin is the quire binary the scripts run, built once per test run.
var quireBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "quire-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	quireBin = filepath.Join(dir, "quire")
	cmd := exec.Command("go", "build", "-o", quireBin, "github.com/quire/quire/cmd/quire")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building quire:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestScripts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_TERMINAL_PROMPT", "0")
			env.Setenv("GIT_AUTHOR_NAME", "E2E Author")
			env.Setenv("GIT_AUTHOR_EMAIL", "author@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "E2E Author")
			env.Setenv("GIT_COMMITTER_EMAIL", "author@example.com")
			env.Setenv("ADMIN_EMAIL", adminEmail)
			env.Setenv("ADMIN_PASSWORD", adminPassword)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"quire-serve": cmdServe,
			"quire":       cmdQuire,
			"api":         cmdAPI,
			"setjson":     cmdSetJSON,
		},
		RequireExplicitExec: true,
	})
}

// cmdServe starts quire on a free loopback port and logs the admin in.
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! quire-serve")
	}
	port := freePort(ts)
	hostport := "127.0.0.1:" + strconv.Itoa(port)
	data := ts.MkAbs("data")
	cmd := exec.Command(quireBin, append([]string{"serve", "--addr", hostport, "--data", data, "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), "QUIRE_ADMIN_EMAIL="+adminEmail, "QUIRE_ADMIN_PASSWORD="+adminPassword)
	logf, err := os.Create(ts.MkAbs("quire.log"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = logf, logf
	ts.Check(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ts.Defer(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		logf.Close()
	})
	url := "http://" + hostport
	// Wait for /healthz, or for the process to die.
	for deadline := time.Now().Add(30 * time.Second); ; {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logf.Name())
			ts.Fatalf("quire exited before serving: %v\n%s", err, log)
		default:
		}
		if res, err := http.Get(url + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("quire did not answer /healthz within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Setenv("URL", url)
	ts.Setenv("HOSTPORT", hostport)
	body, _ := json.Marshal(map[string]string{"email": adminEmail, "password": adminPassword})
	res, err := http.Post(url+"/v1/auth/login", "application/json", bytes.NewReader(body))
	ts.Check(err)
	defer res.Body.Close()
	var login struct {
		Token string `json:"token"`
	}
	ts.Check(json.NewDecoder(res.Body).Decode(&login))
	if login.Token == "" {
		ts.Fatalf("admin login answered %d with no token", res.StatusCode)
	}
	ts.Setenv("TOKEN", login.Token)
	ts.Setenv("GITURL", "http://git:"+login.Token+"@"+hostport+"/git")
}

// cmdQuire runs the quire binary's command line (cli/) in the script's
// directory and environment; "! quire" expects a failure.
func cmdQuire(ts *testscript.TestScript, neg bool, args []string) {
	err := ts.Exec(quireBin, args...)
	switch {
	case err != nil && !neg:
		ts.Fatalf("quire %s: %v", strings.Join(args, " "), err)
	case err == nil && neg:
		ts.Fatalf("quire %s succeeded", strings.Join(args, " "))
	}
}

// cmdAPI sends one request and checks its status.
func cmdAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! api (use -want)")
	}
	want, as := http.StatusOK, "TOKEN"
	var headers []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if len(args) < 2 {
			ts.Fatalf("usage: api [-want N] [-as VAR] [-H 'Name: value'] METHOD PATH [BODY|@file]")
		}
		switch args[0] {
		case "-want":
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			want = n
		case "-as":
			as = args[1]
		case "-H":
			headers = append(headers, args[1])
		default:
			ts.Fatalf("api: unknown flag %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: api [-want N] [-as VAR] [-H 'Name: value'] METHOD PATH [BODY|@file]")
	}
	var body io.Reader
	if len(args) == 3 {
		b := args[2]
		if strings.HasPrefix(b, "@") {
			b = ts.ReadFile(b[1:])
		}
		body = strings.NewReader(b)
	}
	req, err := http.NewRequest(args[0], ts.Getenv("URL")+args[1], body)
	ts.Check(err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if as != "none" {
		tok := ts.Getenv(as)
		if tok == "" {
			ts.Fatalf("api: $%s is empty", as)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			ts.Fatalf("api: header %q is not Name: value", h)
		}
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	res, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	ts.Check(err)
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s\n", res.Proto, res.Status)
	ts.Check(res.Header.Write(&head))
	ts.Stdout().Write(out)
	ts.Stderr().Write([]byte(head.String()))
	if res.StatusCode != want {
		ts.Fatalf("%s %s: got %d, want %d\n%s", args[0], args[1], res.StatusCode, want, out)
	}
}

// cmdSetJSON sets an environment variable from a field of the last body.
func cmdSetJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: setjson VAR .path.to.field")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &v); err != nil {
		ts.Fatalf("setjson: last output is not JSON: %v", err)
	}
	for _, k := range strings.Split(strings.TrimPrefix(args[1], "."), ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				ts.Fatalf("setjson: no field %q in %s", k, args[1])
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				ts.Fatalf("setjson: no element %q in %s", k, args[1])
			}
			v = x[i]
		default:
			ts.Fatalf("setjson: %s goes through a %T", args[1], v)
		}
	}
	switch x := v.(type) {
	case string:
		ts.Setenv(args[0], x)
	default:
		b, _ := json.Marshal(x)
		ts.Setenv(args[0], string(b))
	}
}

func freePort(ts *testscript.TestScript) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
