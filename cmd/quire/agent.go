package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire/cli"
	"github.com/quire/quire/mcp"
	"github.com/spf13/cobra"
)

// `quire mcp` bridges an MCP host's stdio to a server's /mcp with the
// token quire login saved (cli/auth.go) or $QUIRE_TOKEN. It lives here,
// not in cli/, because it runs the mcp package's bridge.

func mcpCmd(stderr io.Writer) *cobra.Command {
	var verbose bool
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP on stdio, bridged to a server's /mcp",
		Long: `Speak MCP on stdin and stdout for an MCP host (its log goes to stderr),
bridged to the server's /mcp endpoint with $QUIRE_TOKEN or the token
quire login saved.`,
		Example: "  quire mcp\n  quire mcp --server https://quire.example.com -v",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			// The root's --server; the bridge's rule differs from the other
			// commands' (a saved token for another server is an error here).
			server := c.Flag("server").Value.String()
			return runMCP(ctx, cmp.Or(server, os.Getenv("QUIRE_SERVER")), verbose, os.Stdin, os.Stdout, stderr)
		},
	}
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "log the protocol's events to stderr")
	return c
}

// runMCP serves MCP on stdin and stdout, bridged to the server's /mcp.
// Its log goes to stderr: stdout is the protocol.
func runMCP(ctx context.Context, server string, verbose bool, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) error {
	token := os.Getenv("QUIRE_TOKEN")
	saved, err := cli.LoadToken(os.Getenv)
	switch {
	case token != "":
	case err == nil && (server == "" || strings.TrimSuffix(server, "/") == saved.Server):
		token = saved.Token
		server = saved.Server
	case err == nil:
		return fmt.Errorf("quire mcp: the saved token is for %s, not %s: run quire login --server %s, or set QUIRE_TOKEN", saved.Server, server, server)
	default:
		return fmt.Errorf("quire mcp: no token: set QUIRE_TOKEN or run quire login (%v)", err)
	}
	server = cmp.Or(server, cli.DefaultServer)
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	err = mcp.Bridge(ctx, &sdk.IOTransport{Reader: stdin, Writer: stdout}, mcp.BridgeOptions{Server: server, Token: token, Version: Version, Logger: log})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("quire mcp: %w", err)
	}
	return nil
}
