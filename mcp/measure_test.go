package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMeasureGetPrompt measures prompts/get of a cached live prompt beside
// the REST render of the same prompt, on the same server in the same run:
// p50 and p99 over sequential calls on one session (one keep-alive
// connection for REST), then calls per second with 32 sessions at once.
// It runs only with QUIRE_MCP_MEASURE=1 (docs/mcp.md has the figures);
// QUIRE_MCP_MEASURE_N sets the sequential calls (default 10,000).
func TestMeasureGetPrompt(t *testing.T) {
	if os.Getenv("QUIRE_MCP_MEASURE") != "1" {
		t.Skip("a measurement: set QUIRE_MCP_MEASURE=1")
	}
	n := 10000
	fmt.Sscan(os.Getenv("QUIRE_MCP_MEASURE_N"), &n)
	f := newFixture(t)
	e := f.e
	key := e.CreateKey(e.Admin, "read")
	ctx := context.Background()
	params := &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "Ann"}}
	body := `{"variables":{"name":"Ann"}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	rest := func() error {
		req, _ := http.NewRequest("POST", e.URL+"/v1/prompts/"+f.greet+"/render", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	}
	sessions := map[string]*sdk.ClientSession{}
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		sessions[v] = connect(t, e, key, v, nil)
	}
	calls := map[string]func() error{
		"REST render": rest,
		"MCP prompts/get (2026-07-28)": func() error {
			_, err := sessions["2026-07-28"].GetPrompt(ctx, params)
			return err
		},
		"MCP prompts/get (2025-11-25)": func() error {
			_, err := sessions["2025-11-25"].GetPrompt(ctx, params)
			return err
		},
	}
	names := []string{"REST render", "MCP prompts/get (2026-07-28)", "MCP prompts/get (2025-11-25)"}
	for _, name := range names {
		call := calls[name]
		for range 200 { // warm: caches, connections
			if err := call(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		lat := make([]time.Duration, n)
		for i := range n {
			start := time.Now()
			if err := call(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			lat[i] = time.Since(start)
		}
		slices.Sort(lat)
		t.Logf("%-30s sequential %d: p50 %v p99 %v", name, n, lat[n/2].Round(time.Microsecond), lat[n*99/100].Round(time.Microsecond))
	}

	// 32 at once: REST on 32 connections, MCP on 32 sessions.
	const workers, each = 32, 300
	for _, v := range []string{"REST", "2026-07-28", "2025-11-25"} {
		fns := make([]func() error, workers)
		for w := range workers {
			if v == "REST" {
				fns[w] = rest
				continue
			}
			cs := connect(t, e, key, v, nil)
			fns[w] = func() error { _, err := cs.GetPrompt(ctx, params); return err }
		}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		start := time.Now()
		for _, fn := range fns {
			wg.Go(func() {
				for range each {
					if err := fn(); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		d := time.Since(start)
		close(errs)
		for err := range errs {
			t.Fatalf("%s: %v", v, err)
		}
		t.Logf("%-30s 32 concurrent: %.0f calls/s", v, float64(workers*each)/d.Seconds())
	}
}
