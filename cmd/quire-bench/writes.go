package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/bench"
	"github.com/quire/quire/internal/gitcli"
)

var benchActor = quire.Actor{Name: "Bench", Email: "bench@example.com"}

// draft opens draft 1 of a new skill holding files small files and
// returns the skill.
func draft(ctx context.Context, q *bench.Quire, slug string, files int) (*quire.Asset, error) {
	var sk struct{ Skill struct{ ID string } }
	if err := q.Call("POST", "/v1/projects/"+q.ProjectID+"/skills", q.Admin, map[string]string{"name": "Skill " + slug, "slug": slug, "description": "benchmark skill"}, &sk); err != nil {
		return nil, err
	}
	a, err := q.Store.Asset(ctx, quire.KindSkill, sk.Skill.ID)
	if err != nil {
		return nil, err
	}
	fc := []quire.FileContent{{Path: "SKILL.md", Content: []byte("---\nname: " + slug + "\ndescription: A benchmark skill.\n---\n# " + slug + "\n")}}
	for i := 1; i < files; i++ {
		fc = append(fc, quire.FileContent{Path: fmt.Sprintf("file-%02d.md", i), Content: []byte(fmt.Sprintf("file %d\n%s", i, strings.Repeat("text ", 50)))})
	}
	if _, err := q.Store.CreateVersion(ctx, benchActor, a, quire.Base{Empty: true}, fc); err != nil {
		return nil, err
	}
	return a, nil
}

// upsertBody is an upsert of file-05.md.
func upsertBody(rev string) []byte {
	b, _ := json.Marshal(map[string]string{"file_path": "file-05.md", "content": "revision " + rev + "\n"})
	return b
}

// writes measures one file upsert into a 10-file draft, in process and
// over HTTP, against the git CLI's plumbing making the same commit, then
// write throughput with concurrent writers.
func writes(ctx context.Context, c *config, r *report) error {
	q, err := bench.Start(ctx, bench.Options{RedisURL: c.redis})
	if err != nil {
		return err
	}
	defer q.Close()
	inproc, err := draft(ctx, q, "inproc", 10)
	if err != nil {
		return err
	}
	cliSkill, err := draft(ctx, q, "cli", 10)
	if err != nil {
		return err
	}
	httpSkill, err := draft(ctx, q, "http", 10)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "quire-bench-cli-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cli, err := gitcli.NewUpserter(q.Store.RepoPath(cliSkill), "refs/heads/draft/1", tmp)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	httpURL := q.URL + "/v1/skills/" + httpSkill.ID + "/versions/1/files"
	var tIn, tCLI, tHTTP []time.Duration
	// Interleave the three, so a burst of load hits them alike, and rotate
	// their order, so none always follows the same other one: file system
	// work one leaves behind can slow the next.
	for i := range c.upserts {
		content := fmt.Sprintf("revision %d\n", i)
		steps := []func() error{
			func() error {
				t0 := time.Now()
				_, err := q.Store.PutFiles(ctx, benchActor, inproc, 1, []quire.FileContent{{Path: "file-05.md", Content: []byte(content)}}, "", "")
				tIn = append(tIn, time.Since(t0))
				return err
			},
			func() error {
				t0 := time.Now()
				err := cli.Upsert("file-05.md", []byte(content))
				tCLI = append(tCLI, time.Since(t0))
				return err
			},
			func() error {
				t0 := time.Now()
				status, body, err := bench.Request{Method: "POST", URL: httpURL, Token: q.Admin, Body: upsertBody(fmt.Sprint(i))}.Do(client)
				tHTTP = append(tHTTP, time.Since(t0))
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("HTTP upsert: %d %s", status, body)
				}
				return err
			},
		}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return err
			}
		}
	}
	mIn, mCLI, mHTTP := bench.MedianDuration(tIn), bench.MedianDuration(tCLI), bench.MedianDuration(tHTTP)
	fsyncOn, fsyncOff, err := fsyncCost(ctx, c, q)
	if err != nil {
		return err
	}
	r.section("Writes", fmt.Sprintf(`
One file upsert into a draft of 10 files, each a commit: through the
store in process (what the API handler calls), and over HTTP (POST
/v1/skills/{id}/versions/1/files, admin session, one keep-alive
connection), against the git CLI's plumbing making the same commit
(hash-object, read-tree, update-index, write-tree, commit-tree,
update-ref: six processes). %d upserts each, interleaved in rotating
order; medians. fsync
off on both sides (quire's default, git's default core.fsync).`, c.upserts))
	r.table("git CLI", []row{
		{figure: "upsert in process: median", quire: ms(mIn), baseline: ms(mCLI), ratio: float64(mIn) / float64(mCLI), goal: "≤ 0.10x", pass: mIn*10 <= mCLI},
		{figure: "upsert over HTTP: median", quire: ms(mHTTP), baseline: ms(mCLI), ratio: float64(mHTTP) / float64(mCLI), goal: "≤ 0.25x", pass: mHTTP*4 <= mCLI},
	})

	r.text(fmt.Sprintf(`The cost of --fsync (docs/deployment.md): the same upsert over HTTP
on a server started with --fsync (every object and ref synced before the
answer) and on this one, %d each, interleaved; medians. The data roots
are in the temporary directory (the table at the top names its file
system); on a network file system each sync is a round trip to the
server, so the gap grows.`, c.upserts))
	r.table("fsync off", []row{
		{figure: "upsert over HTTP with --fsync: median", quire: ms(fsyncOn), baseline: ms(fsyncOff), ratio: float64(fsyncOn) / float64(fsyncOff)},
	})

	// Throughput: writers POST upserts back to back for writeDur.
	maxW := 0
	for _, w := range c.writers {
		maxW = max(maxW, w)
	}
	var distinct []*quire.Asset
	for i := range maxW {
		a, err := draft(ctx, q, fmt.Sprintf("w%02d", i), 10)
		if err != nil {
			return err
		}
		distinct = append(distinct, a)
	}
	cliRate := float64(time.Second) / float64(mCLI)
	var rows []row
	var failures []string
	for _, mode := range []string{"distinct drafts", "one draft"} {
		for _, w := range c.writers {
			skills := make([]*quire.Asset, w)
			for i := range skills {
				skills[i] = distinct[0]
				if mode == "distinct drafts" {
					skills[i] = distinct[i]
				}
			}
			rate, errs := throughput(q, skills, c.writeDur)
			if errs > 0 {
				failures = append(failures, fmt.Sprintf("%d writers on %s: %d failed upserts", w, mode, errs))
			}
			rows = append(rows, row{figure: fmt.Sprintf("%d writers, %s: commits/s", w, mode), quire: fmt.Sprintf("%.0f", rate), baseline: fmt.Sprintf("%.0f", cliRate), ratio: rate / cliRate})
		}
	}
	r.text(fmt.Sprintf(`Write throughput: W writers POST upserts back to back for %s, over
HTTP, each on its own connection, to W distinct drafts or all to one
draft (where commits serialize). The baseline is one git CLI writer's
commits per second (from the median above).`, c.writeDur))
	r.table("git CLI, 1 writer", rows)
	if len(failures) > 0 {
		r.text("Failed upserts: " + strings.Join(failures, "; ") + ".")
	}
	return nil
}

// throughput runs one writer per skill for d and returns commits per
// second and the number of failed upserts.
func throughput(q *bench.Quire, skills []*quire.Asset, d time.Duration) (float64, int64) {
	tr := &http.Transport{MaxIdleConnsPerHost: len(skills), MaxConnsPerHost: len(skills)}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var (
		ok, failed atomic.Int64
		stop       atomic.Bool
		wg         sync.WaitGroup
	)
	start := time.Now()
	for i, a := range skills {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := q.URL + "/v1/skills/" + a.ID + "/versions/1/files"
			for n := 0; !stop.Load(); n++ {
				status, _, err := bench.Request{Method: "POST", URL: url, Token: q.Admin, Body: upsertBody(fmt.Sprintf("w%d-%d", i, n))}.Do(client)
				if err != nil || status != http.StatusOK {
					failed.Add(1)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds(), failed.Load()
}

// fsyncCost measures the median HTTP upsert on a quire started with
// --fsync and on q (without), interleaved.
func fsyncCost(ctx context.Context, c *config, q *bench.Quire) (on, off time.Duration, err error) {
	qs, err := bench.Start(ctx, bench.Options{RedisURL: c.redis, Fsync: true})
	if err != nil {
		return 0, 0, err
	}
	defer qs.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	var urls []string
	for _, s := range []*bench.Quire{qs, q} {
		a, err := draft(ctx, s, "fsync", 10)
		if err != nil {
			return 0, 0, err
		}
		urls = append(urls, s.URL+"/v1/skills/"+a.ID+"/versions/1/files")
	}
	times := make([][]time.Duration, 2)
	tokens := []string{qs.Admin, q.Admin}
	for i := range c.upserts {
		for k := range 2 {
			j := (i + k) % 2 // alternate which goes first
			t0 := time.Now()
			status, body, err := bench.Request{Method: "POST", URL: urls[j], Token: tokens[j], Body: upsertBody(fmt.Sprint(i))}.Do(client)
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("HTTP upsert: %d %s", status, body)
			}
			if err != nil {
				return 0, 0, err
			}
			times[j] = append(times[j], time.Since(t0))
		}
	}
	return bench.MedianDuration(times[0]), bench.MedianDuration(times[1]), nil
}
