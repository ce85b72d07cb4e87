// Package cli is the `quire` command line for people and scripts: login,
// pull and push of skills with a lockfile, renders, lists, publishing and
// reviews. It is a door like httpapi, but over the network: it talks to a
// server through the Go SDK (client/) only, never to app or the stores
// (internal/archtest). cmd/quire adds `serve` and `mcp` to its commands.
package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quire/quire/client"
	"github.com/spf13/cobra"
)

// DefaultServer is the server a command talks to when neither --server,
// $QUIRE_SERVER nor a saved login names one.
const DefaultServer = "http://127.0.0.1:8080"

// Options are what the commands run with; the zero value of each field
// is the process's own (os.Stdin, os.Getenv, the working directory...),
// so tests can run many commands side by side in one process.
type Options struct {
	Version string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	// Getenv reads QUIRE_SERVER, QUIRE_TOKEN, QUIRE_CONFIG_DIR...
	Getenv func(string) string
	// Dir is the working directory: relative paths and quire.lock are
	// resolved against it.
	Dir string
	// Terminal says stdout is a terminal: progress bars and prompts.
	Terminal bool
	// HTTP is the client requests go through (a 5-minute timeout when nil).
	HTTP *http.Client
}

func (o *Options) fill() {
	o.Stdin = cmp.Or[io.Reader](o.Stdin, os.Stdin)
	o.Stdout = cmp.Or[io.Writer](o.Stdout, os.Stdout)
	o.Stderr = cmp.Or[io.Writer](o.Stderr, os.Stderr)
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	o.Dir = cmp.Or(o.Dir, ".")
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 5 * time.Minute}
	}
}

// usageError is a command used wrongly: exit code 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// ExitCode is the process exit code for err: 0 ok, 2 a usage error
// (a wrong flag, argument or command, --help of serve), 1 any other.
func ExitCode(err error) int {
	var u usageError
	var coded interface{ ExitCode() int }
	switch {
	case err == nil:
		return 0
	case errors.As(err, &coded):
		return coded.ExitCode()
	case errors.As(err, &u), errors.Is(err, flag.ErrHelp):
		return 2
	}
	// cobra's own usage errors carry no type.
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "required flag", "invalid argument", "flag needs an argument"} {
		if strings.HasPrefix(msg, p) {
			return 2
		}
	}
	return 1
}

// Run runs the quire command line with args, extra commands added
// (cmd/quire's serve and mcp), and returns the error to report; Message
// words it, ExitCode turns it into the exit code.
func Run(ctx context.Context, o Options, args []string, extra ...*cobra.Command) error {
	o.fill()
	root := newRoot(&o)
	root.AddCommand(extra...)
	root.SetArgs(args)
	root.SetIn(o.Stdin)
	root.SetOut(o.Stdout)
	root.SetErr(o.Stderr)
	_, err := root.ExecuteContextC(ctx)
	return err
}

// env is the state every command shares: the options and global flags.
type env struct {
	*Options
	json   bool
	server string
}

func newRoot(o *Options) *cobra.Command {
	e := &env{Options: o}
	root := &cobra.Command{
		Use:   "quire",
		Short: "quire: versioned prompts and agent skills",
		Long: `quire keeps prompt templates and agent skills, each a git repository, on a
server. These commands log in to one, pull skills into folders (with a
lockfile, quire.lock), push folders back as drafts, and render, list,
publish and review.

Environment: QUIRE_SERVER (the server), QUIRE_TOKEN (a token, over the
saved login), QUIRE_CONFIG_DIR (where quire login keeps the token).
Exit codes: 0 ok, 1 an error, 2 a usage error.`,
		Example:       "  quire login --server https://quire.example.com --email ann@example.com\n  quire pull demo\n  quire push skills/pdf-tools -m \"Fix the form filler\"",
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       cmp.Or(o.Version, "dev"),
		RunE: func(c *cobra.Command, args []string) error {
			c.Help()
			return usagef("a command is required")
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetVersionTemplate("quire {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().BoolVar(&e.json, "json", false, "print the answer as JSON, for scripts")
	root.PersistentFlags().StringVar(&e.server, "server", "", "the quire server's URL ($QUIRE_SERVER; else the saved login's; else "+DefaultServer+")")
	root.AddCommand(
		&cobra.Command{
			Use: "version", Short: "Print the version", Args: args(cobra.NoArgs),
			Example: "  quire version",
			RunE: func(c *cobra.Command, _ []string) error {
				return e.print(map[string]string{"version": root.Version}, func(w io.Writer) { fmt.Fprintln(w, "quire", root.Version) })
			},
		},
		e.loginCmd(), e.logoutCmd(), e.whoamiCmd(),
		e.pullCmd(), e.pushCmd(), e.diffCmd(), e.publishCmd(), e.reviewCmd(),
		e.renderCmd(), e.promptsCmd(), e.skillsCmd(), e.evalCmd(),
	)
	return root
}

// args wraps a cobra argument check so that its failure is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, a []string) error {
		if err := check(c, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// path resolves p against the working directory.
func (e *env) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// print writes v as JSON with --json, else calls text.
func (e *env) print(v any, text func(io.Writer)) error {
	if e.json {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(e.Stdout)
	return nil
}

// serverURL is the server to talk to: --server, $QUIRE_SERVER, the saved
// login's, the default.
func (e *env) serverURL() string {
	s := cmp.Or(e.server, e.Getenv("QUIRE_SERVER"))
	if s == "" {
		if t, err := e.loadToken(); err == nil {
			s = t.Server
		}
	}
	return strings.TrimRight(cmp.Or(s, DefaultServer), "/")
}

// token is the credential for server: $QUIRE_TOKEN, else the saved
// login's when it is for that server, else none (anonymous: public
// projects only).
func (e *env) token(server string) string {
	if t := e.Getenv("QUIRE_TOKEN"); t != "" {
		return t
	}
	if t, err := e.loadToken(); err == nil && t.Server == server {
		return t.Token
	}
	return ""
}

// client returns an SDK client of the server with the caller's token; a server
// URL it cannot use is a usage error.
func (e *env) client() (*client.Client, error) {
	s := e.serverURL()
	c, err := client.New(s, client.WithToken(e.token(s)), client.WithHTTPClient(e.HTTP), client.WithUserAgent("quire-cli/"+cmp.Or(e.Version, "dev")))
	if err != nil {
		return nil, usageError{err} // a bad --server or QUIRE_SERVER
	}
	return c, nil
}

// Message words err as the one line quire prints: the server's answer,
// or why it could not be reached.
func Message(err error) string {
	var api *client.APIError
	var ne net.Error
	var op *net.OpError
	var ce *cmdError
	switch {
	case errors.As(err, &ce):
		return err.Error()
	case errors.As(err, &api):
		msg := api.Message
		switch api.Status {
		case http.StatusUnauthorized:
			msg += " (log in with quire login, or set QUIRE_TOKEN)"
		case http.StatusForbidden:
			msg += " (the token may not do this)"
		}
		return fmt.Sprintf("%s (%d %s)", msg, api.Status, api.Code)
	case errors.As(err, &op):
		return fmt.Sprintf("cannot reach the server (%s %s): %v", op.Op, op.Addr, op.Err)
	case errors.As(err, &ne) && ne.Timeout():
		return "the server did not answer in time: " + err.Error()
	}
	return err.Error()
}

// cmdError is a failure of one step of a command: what was being done,
// and why, worded by Message.
type cmdError struct {
	what string
	err  error
}

func (e *cmdError) Error() string { return e.what + ": " + Message(e.err) }
func (e *cmdError) Unwrap() error { return e.err }

// fail says what failed; nil stays nil.
func fail(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &cmdError{what: fmt.Sprintf(format, args...), err: err}
}
