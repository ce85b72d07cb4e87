package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/mcp"
)

// manyPrompts is a metadata store and a prompt store holding n live
// prompts in each of its projects, in memory: a listing of 10,000
// prompts without 10,000 git repositories (TestPromptPages lists a
// thousand through git).
type manyPrompts struct {
	quire.MetaStore
	quire.PromptStore
	projects []*quire.Project
	n        int
}

func (m *manyPrompts) Projects(context.Context) ([]*quire.Project, error) { return m.projects, nil }

func (m *manyPrompts) Project(_ context.Context, ref string) (*quire.Project, error) {
	for _, pr := range m.projects {
		if pr.ID == ref || pr.Slug == ref {
			return pr, nil
		}
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "project not found")
}

// AssetsPage pages by position: the cursor is the index of the next asset.
func (m *manyPrompts) AssetsPage(_ context.Context, kind quire.Kind, projectID string, o quire.ListOptions) ([]*quire.Asset, string, error) {
	if kind != quire.KindPrompt {
		return nil, "", nil
	}
	start, _ := strconv.Atoi(o.Cursor)
	end := min(start+o.Limit, m.n)
	var out []*quire.Asset
	for i := start; i < end; i++ {
		slug := fmt.Sprintf("p-%05d", i)
		out = append(out, &quire.Asset{ID: projectID + "-" + slug, ProjectID: projectID, Kind: quire.KindPrompt, Slug: slug, Name: slug})
	}
	next := ""
	if end < m.n {
		next = strconv.Itoa(end)
	}
	return out, next, nil
}

func (m *manyPrompts) LivePrompt(context.Context, *quire.Asset) (*quire.PromptVersion, error) {
	t := "Hi {{name}}"
	return &quire.PromptVersion{
		Version: &quire.Version{Number: 1, State: quire.StatePublished, Commit: "c0ffee"},
		Content: &quire.PromptContent{Template: &t},
	}, nil
}

// TestTenThousandPrompts lists 10,000 live prompts, in two projects,
// through the SDK's client: every prompt once, in order, pages of at
// most 500, the cursor carrying the listing from one project to the
// next.
func TestTenThousandPrompts(t *testing.T) {
	store := &manyPrompts{n: 5000, projects: []*quire.Project{{ID: "p1", Slug: "one"}, {ID: "p2", Slug: "two"}}}
	a := app.New(app.Config{Meta: store, Prompts: store})
	srv := mcp.New(a, mcp.Options{})
	admin := &quire.Principal{User: &quire.User{ID: "u1", Name: "Admin", Role: quire.RoleAdmin}, SessionID: "s1"}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r.WithContext(app.WithPrincipal(r.Context(), admin)))
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearer{"any", http.DefaultTransport}}, MaxRetries: -1,
			}, &sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			cursor, pages, i := "", 0, 0
			for {
				res, err := cs.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if len(res.Prompts) > 500 || len(res.Prompts) == 0 {
					t.Fatalf("page %d holds %d prompts", pages, len(res.Prompts))
				}
				for _, p := range res.Prompts {
					want := fmt.Sprintf("%s/p-%05d", map[bool]string{true: "one", false: "two"}[i < 5000], i%5000)
					if p.Name != want {
						t.Fatalf("page %d: prompt %d is %s, want %s", pages, i, p.Name, want)
					}
					i++
				}
				if cursor = res.NextCursor; cursor == "" {
					break
				}
			}
			if i != 10000 || pages != 20 {
				t.Fatalf("listed %d prompts in %d pages, want 10,000 in 20", i, pages)
			}
			if _, err := cs.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: "garbage"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
				t.Fatalf("a bad cursor: %v, want -32602", err)
			}
		})
	}
}
