package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quire/quire/client"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Login keeps one server and its token in a file readable by its owner
// only, under the user's config directory, never in a project folder.

// SavedToken is the file quire login writes.
type SavedToken struct {
	Server string `json:"server"`
	Token  string `json:"token"`
}

// TokenPath is where quire login keeps the token:
// $XDG_CONFIG_HOME/quire/token.json on Linux (~/.config/quire/…),
// ~/Library/Application Support/quire/… on macOS, %AppData%\quire\… on
// Windows; $QUIRE_CONFIG_DIR overrides the directory.
func TokenPath(getenv func(string) string) (string, error) {
	if dir := getenv("QUIRE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "token.json"), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory for the token (set QUIRE_CONFIG_DIR): %w", err)
	}
	return filepath.Join(dir, "quire", "token.json"), nil
}

// LoadToken reads the saved login.
func LoadToken(getenv func(string) string) (*SavedToken, error) {
	p, err := TokenPath(getenv)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var t SavedToken
	if err := json.Unmarshal(b, &t); err != nil || t.Token == "" {
		return nil, fmt.Errorf("%s is not a token file quire login wrote", p)
	}
	return &t, nil
}

func (e *env) loadToken() (*SavedToken, error) { return LoadToken(e.Getenv) }

// saveToken writes the token readable by its owner only, replacing the
// file whole (a rename), so a reader never sees half of it.
func (e *env) saveToken(t SavedToken) (string, error) {
	p, err := TokenPath(e.Getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	b, _ := json.MarshalIndent(t, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(p), ".token-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return p, os.Rename(tmp.Name(), p)
}

func (e *env) loginCmd() *cobra.Command {
	var email, token string
	c := &cobra.Command{
		Use:   "login",
		Short: "Log in to a server and keep the token",
		Long: `Log in with an email and password (asked for, or $QUIRE_EMAIL and
$QUIRE_PASSWORD; a password not on a terminal is the first line of
stdin), or keep a token given with --token (an API key, ak_…). The token
is checked with the server, then kept in the user's config directory
(readable by the user only), for the server given.`,
		Example: "  quire login --server https://quire.example.com --email ann@example.com\n  quire login --server https://quire.example.com --token \"$QUIRE_KEY\"",
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			server := e.serverURL()
			if e.server == "" && e.Getenv("QUIRE_SERVER") == "" {
				server = DefaultServer
			}
			ctx := c.Context()
			in := bufio.NewReader(e.Stdin)
			if token == "" {
				var err error
				if token, err = e.passwordLogin(ctx, in, server, cmp.Or(email, e.Getenv("QUIRE_EMAIL"))); err != nil {
					return err
				}
			}
			sdk, err := client.New(server, client.WithToken(token), client.WithHTTPClient(e.HTTP))
			if err != nil {
				return usageError{err}
			}
			me, err := sdk.Me(ctx)
			if err != nil {
				return fail(err, "log in to %s", server)
			}
			p, err := e.saveToken(SavedToken{Server: server, Token: token})
			if err != nil {
				return fmt.Errorf("keep the token: %w", err)
			}
			return e.print(map[string]string{"server": server, "email": me.User.Email, "token_file": p}, func(w io.Writer) {
				fmt.Fprintf(w, "logged in to %s as %s; token saved in %s\n", server, me.User.Email, p)
			})
		},
	}
	c.Flags().StringVar(&email, "email", "", "your email ($QUIRE_EMAIL); asked for when absent")
	c.Flags().StringVar(&token, "token", "", "keep this token (an API key, ak_…) instead of logging in with a password")
	return c
}

// passwordLogin asks for what is missing of email and password and
// returns a session token.
func (e *env) passwordLogin(ctx context.Context, in *bufio.Reader, server, email string) (string, error) {
	line := func(prompt string) (string, error) {
		fmt.Fprint(e.Stderr, prompt)
		s, err := in.ReadString('\n')
		if err != nil && s == "" {
			return "", usagef("%sno answer on stdin", prompt)
		}
		return strings.TrimRight(s, "\r\n"), nil
	}
	var err error
	if email == "" {
		if email, err = line("email: "); err != nil {
			return "", err
		}
	}
	password := e.Getenv("QUIRE_PASSWORD")
	if password == "" {
		if f, ok := e.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			fmt.Fprint(e.Stderr, "password: ")
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(e.Stderr)
			if err != nil {
				return "", err
			}
			password = string(b)
		} else if password, err = line("password: "); err != nil {
			return "", err
		}
	}
	sdk, err := client.New(server, client.WithHTTPClient(e.HTTP))
	if err != nil {
		return "", usageError{err}
	}
	l, err := sdk.Login(ctx, email, password)
	if err != nil {
		return "", fail(err, "log in to %s", server)
	}
	return l.Token, nil
}

func (e *env) logoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "logout",
		Short:   "Forget the saved token (and end its session on the server)",
		Example: "  quire logout",
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			t, err := e.loadToken()
			if errors.Is(err, fs.ErrNotExist) {
				return e.print(map[string]any{"logged_out": false}, func(w io.Writer) { fmt.Fprintln(w, "not logged in") })
			}
			if err != nil {
				return err
			}
			// A session ends on the server too; an API key stays (it is
			// revoked with the API). The server being down does not keep
			// the file.
			var remote error
			if strings.HasPrefix(t.Token, "sess_") {
				if sdk, err := client.New(t.Server, client.WithToken(t.Token), client.WithHTTPClient(e.HTTP)); err == nil {
					remote = sdk.Logout(c.Context())
				}
			}
			p, _ := TokenPath(e.Getenv)
			if err := os.Remove(p); err != nil {
				return err
			}
			if remote != nil {
				fmt.Fprintf(e.Stderr, "quire: the session could not be ended on %s: %s\n", t.Server, Message(remote))
			}
			return e.print(map[string]any{"logged_out": true, "server": t.Server}, func(w io.Writer) { fmt.Fprintf(w, "logged out of %s\n", t.Server) })
		},
	}
}

func (e *env) whoamiCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "whoami",
		Short:   "Show who the token belongs to",
		Example: "  quire whoami\n  quire whoami --json",
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			sdk, err := e.client()
			if err != nil {
				return err
			}
			server := e.serverURL()
			if e.token(server) == "" {
				return fmt.Errorf("not logged in to %s: run quire login --server %s, or set QUIRE_TOKEN", server, server)
			}
			me, err := sdk.Me(c.Context())
			if err != nil {
				return fail(err, "whoami on %s", server)
			}
			return e.print(map[string]any{"server": server, "user": me.User, "kind": me.Kind}, func(w io.Writer) {
				how := me.Kind
				if me.APIKey != nil {
					how = fmt.Sprintf("API key %s (%s)", me.APIKey.Name, me.APIKey.Scope)
				}
				fmt.Fprintf(w, "%s (%s) on %s, by %s\n", me.User.Email, me.User.Role, server, how)
			})
		},
	}
}
