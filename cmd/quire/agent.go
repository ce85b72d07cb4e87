package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire/mcp"
)

// The client side for agents: `quire login` keeps a token, `quire mcp`
// bridges an MCP host's stdio to a server's /mcp with it. The token file
// is deliberately small (docs/mcp.md); a fuller CLI may grow around it.

const defaultServer = "http://127.0.0.1:8080"

// savedToken is the file quire login writes: one server and its token.
type savedToken struct {
	Server string `json:"server"`
	Token  string `json:"token"`
}

// tokenPath is where quire login keeps the token:
// $XDG_CONFIG_HOME/quire/token.json on Linux (~/.config/quire/…),
// ~/Library/Application Support/quire/… on macOS, %AppData%\quire\… on
// Windows; QUIRE_CONFIG_DIR overrides the directory.
func tokenPath() (string, error) {
	if dir := os.Getenv("QUIRE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "token.json"), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory for the token (set QUIRE_CONFIG_DIR): %w", err)
	}
	return filepath.Join(dir, "quire", "token.json"), nil
}

func loadToken() (*savedToken, error) {
	p, err := tokenPath()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var t savedToken
	if err := json.Unmarshal(b, &t); err != nil || t.Token == "" {
		return nil, fmt.Errorf("%s is not a token file quire login wrote", p)
	}
	return &t, nil
}

// saveToken writes the token readable by its owner only, replacing the
// file whole (a rename), so a reader never sees half of it.
func saveToken(t savedToken) (string, error) {
	p, err := tokenPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	b, _ := json.MarshalIndent(t, "", "  ")
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return "", err
	}
	return p, os.Rename(tmp, p)
}

// runLogin logs in with an email and password (QUIRE_PASSWORD, or the
// first line of stdin) and keeps the session token; --token keeps a
// token given instead (an API key).
func runLogin(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quire login", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", cmp.Or(os.Getenv("QUIRE_SERVER"), defaultServer), "the quire to log in to ($QUIRE_SERVER)")
	email := fs.String("email", os.Getenv("QUIRE_EMAIL"), "your email ($QUIRE_EMAIL); the password is $QUIRE_PASSWORD or the first line of stdin")
	token := fs.String("token", "", "keep this token (an API key, ak_…) instead of logging in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *token == "" {
		if *email == "" {
			return errors.New("quire login: give --email (or --token)")
		}
		password := os.Getenv("QUIRE_PASSWORD")
		if password == "" {
			fmt.Fprint(stderr, "password: ")
			line, err := bufio.NewReader(stdin).ReadString('\n')
			if err != nil && line == "" {
				return errors.New("quire login: no password on stdin")
			}
			password = strings.TrimRight(line, "\r\n")
		}
		t, err := login(ctx, *server, *email, password)
		if err != nil {
			return err
		}
		*token = t
	}
	p, err := saveToken(savedToken{Server: strings.TrimSuffix(*server, "/"), Token: *token})
	if err != nil {
		return fmt.Errorf("quire login: keep the token: %w", err)
	}
	fmt.Fprintf(stdout, "token for %s saved in %s\n", *server, p)
	return nil
}

// login asks server for a session token.
func login(ctx context.Context, server, email, password string) (string, error) {
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(server, "/")+"/v1/auth/login", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("quire login: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("quire login: %w", err)
	}
	defer res.Body.Close()
	var out struct {
		Token string `json:"token"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out); err != nil || (res.StatusCode == 200 && out.Token == "") {
		return "", fmt.Errorf("quire login: %s answered %d without a token", server, res.StatusCode)
	}
	if res.StatusCode != 200 {
		return "", fmt.Errorf("quire login: %s", cmp.Or(out.Error, res.Status))
	}
	return out.Token, nil
}

// runMCP serves MCP on stdin and stdout, bridged to the server's /mcp.
// Its log goes to stderr: stdout is the protocol.
func runMCP(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) error {
	fs := flag.NewFlagSet("quire mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", os.Getenv("QUIRE_SERVER"), "the quire to bridge to ($QUIRE_SERVER; else the one quire login saved, else "+defaultServer+")")
	verbose := fs.Bool("v", false, "log the protocol's events to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	token := os.Getenv("QUIRE_TOKEN")
	saved, err := loadToken()
	switch {
	case token != "":
	case err == nil && (*server == "" || strings.TrimSuffix(*server, "/") == saved.Server):
		token = saved.Token
		*server = saved.Server
	case err == nil:
		return fmt.Errorf("quire mcp: the saved token is for %s, not %s: run quire login --server %s, or set QUIRE_TOKEN", saved.Server, *server, *server)
	default:
		return fmt.Errorf("quire mcp: no token: set QUIRE_TOKEN or run quire login (%v)", err)
	}
	*server = cmp.Or(*server, defaultServer)
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	err = mcp.Bridge(ctx, &sdk.IOTransport{Reader: stdin, Writer: stdout}, mcp.BridgeOptions{Server: *server, Token: token, Version: Version, Logger: log})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("quire mcp: %w", err)
	}
	return nil
}
