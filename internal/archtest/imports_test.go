// Package archtest holds the tests that keep quire's package map true:
// which package may import which (docs/architecture.md draws the same
// map), and that every package says in its doc comment what it owns;
// and the one that keeps make test's split true (racesplit_test.go).
package archtest

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/quire/quire"

// Dependencies each wrapped by one storage or transport package.
const (
	gin      = "github.com/gin-gonic/gin"
	goGit    = "github.com/go-git/go-git"
	goRedis  = "github.com/redis/go-redis"
	mini     = "github.com/alicebob/miniredis"
	mcpSDK   = "github.com/modelcontextprotocol/go-sdk"
	chromedp = "github.com/chromedp"
	openai   = "github.com/openai/openai-go"
)

// forbidden lists, per package (a path relative to the module; "." is the
// root), the import path prefixes its non-test files must not import; a
// path ending in "$" forbids that package only.
// Arrows point down only: doors (httpapi, gitproto, web, mcp, cmd) over
// app, app over the root and the stores' interfaces, stores never over
// doors. A package not yet present is skipped.
var forbidden = map[string][]string{
	".":        {module + "/", gin, goGit, goRedis, mini, openai},
	"valid":    {module + "/app", module + "/httpapi", module + "/gitstore", module + "/cache", gin, goGit, goRedis},
	"render":   {module + "/app", module + "/httpapi", module + "/gitstore", module + "/cache", gin, goGit, goRedis},
	"app":      {openai, module + "/llm", module + "/internal/server", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/web", module + "/mcp", gin, goGit, goRedis, mini},
	"httpapi":  {module + "/internal/server", module + "/gitstore", module + "/cache", module + "/mcp", goGit, goRedis, mini},
	"gitproto": {module + "/httpapi", module + "/cache", module + "/gitstore/odb", gin, goRedis},
	"gitstore": {module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitproto", module + "/cache", module + "/web", module + "/mcp", gin, goRedis, mini},
	// The object database under the version engine: objects and packs
	// only, nothing that knows refs, versions or a transport.
	"gitstore/odb": {module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/web", module + "/mcp", gin, goRedis, mini},
	// The system metadata under the version engine: it gets the system
	// repository's refs and the asset repositories' part through
	// interfaces gitstore implements, so it imports odb but never gitstore
	// itself ("$": that path only, not the packages under it).
	"gitstore/meta": {module + "/gitstore$", module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitproto", module + "/cache", module + "/web", module + "/mcp", gin, goRedis, mini},
	"cache":         {module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitstore", gin, goGit},
	"telemetry":     {module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitstore", module + "/cache", gin, goGit},
	"zipfile":       {module + "/app", module + "/httpapi", module + "/gitstore", module + "/cache", gin, goGit, goRedis},
	"web":           {module + "/internal/server", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", gin, goGit, goRedis, mini, chromedp},
	"mcp":           {module + "/gitstore", module + "/cache", module + "/httpapi", module + "/internal/server", module + "/gitproto", goGit, goRedis, mini, gin},
	// The Go SDK talks HTTP only: of quire it knows the root types, the
	// renderer (to render as the server does) and skillpack (digests).
	"client": {module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/internal", module + "/telemetry", module + "/zipfile", module + "/valid", module + "/web", module + "/mcp", gin, goGit, goRedis, mini},
	// The command line is a door over the network: it reaches a server
	// through the SDK only (and skillpack's digests), never app or a store.
	"cli": {module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/internal", module + "/telemetry", module + "/zipfile", module + "/valid", module + "/web", module + "/mcp", module + "/eventlog", module + "/webhook", gin, goGit, goRedis, mini, mcpSDK},
	// Archives and digests: the standard library and the root types.
	"skillpack": {module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/internal", module + "/telemetry", module + "/zipfile", module + "/valid", module + "/render", module + "/client", module + "/web", module + "/mcp", gin, goGit, goRedis, mini},
	// The event log and webhook store, and the outbound webhook client:
	// stores under app, knowing no door and no other store.
	// The code-to-status table shared by the HTTP doors: the root's codes
	// and net/http only.
	"httpstatus": {module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/web", module + "/mcp", gin, goGit, goRedis, mini},
	"eventlog":   {module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/webhook", gin, goGit, goRedis, mini},
	// The model providers' client: a store under app, knowing no door.
	"llm": {module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/web", module + "/mcp", gin, goGit, goRedis, mini},
	// pipeline is the doors' shared request pipeline: over app, under
	// every door, net/http only.
	"pipeline": {module + "/internal/server", module + "/httpapi", module + "/web", module + "/mcp", module + "/gitproto", module + "/gitstore", module + "/cache", gin, goGit, goRedis, mini},
	// The OAuth authorization server: the protocol over quire.OAuthStore,
	// knowing no door and no use case.
	"oauth":   {module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/web$", module + "/mcp", gin, goGit, goRedis, mini},
	"webhook": {module + "/internal/server", module + "/app", module + "/httpapi", module + "/gitstore", module + "/gitproto", module + "/cache", module + "/eventlog", gin, goGit, goRedis, mini},
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", dir, err)
	}
	return dir
}

func TestImportRules(t *testing.T) {
	top := root(t)
	checked := 0
	for pkg, bad := range forbidden {
		dir := filepath.Join(top, pkg)
		// A rule covers the package and every package under it.
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if path != dir && (pkg == "." || strings.Contains(path, "testdata")) {
				return filepath.SkipDir
			}
			p, err := build.ImportDir(path, 0)
			if err != nil {
				return nil // no Go files
			}
			checked++
			for _, imp := range p.Imports {
				for _, b := range bad {
					if only, ok := strings.CutSuffix(b, "$"); ok && imp == only || !ok && (imp == strings.TrimSuffix(b, "/") || strings.HasPrefix(imp, b)) {
						rel, _ := filepath.Rel(top, path)
						t.Errorf("%s imports %s; its rule forbids %s (docs/architecture.md)", rel, imp, b)
					}
				}
			}
			return nil
		})
	}
	if checked < 5 {
		t.Fatalf("checked only %d packages: the rules no longer find the code", checked)
	}
}

// TestPackageDocs asks every package for a doc comment: what it owns, and
// what it must not import.
func TestPackageDocs(t *testing.T) {
	top := root(t)
	filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != top && (strings.HasPrefix(name, ".") || name == "testdata" || name == "repos" || name == "node_modules") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, build.ImportComment)
		if err != nil || len(p.GoFiles) == 0 {
			return nil // no Go files, or tests only
		}
		if p.Doc == "" {
			rel, _ := filepath.Rel(top, path)
			t.Errorf("package %s (%s) has no doc comment", p.Name, rel)
		}
		return nil
	})
}
