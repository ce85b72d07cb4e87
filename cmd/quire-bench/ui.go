package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/quire/quire"
	"github.com/quire/quire/internal/bench"
)

// uiSection measures the browser UI on a data root of 1,000 skills and
// 1,000 prompts (20 projects of 50 each; small files, so generation takes
// a minute or two; -quick makes 20 of each): the server time of each main page (p50, p99) beside the JSON
// API request that reads the same thing, the JavaScript and CSS a page
// loads (gzipped), and the first contentful paint of the asset page in
// headless Chromium. Goals: every page's p99 ≤ 50 ms, JS + CSS ≤ 150 KB
// gzipped, first contentful paint < 500 ms.
func uiSection(ctx context.Context, c *config, r *report) error {
	q, err := bench.Start(ctx, bench.Options{RedisURL: c.redis})
	if err != nil {
		return err
	}
	defer q.Close()
	projects, perProject := c.uiProjects, c.uiPerProject
	t0 := time.Now()
	first, err := fillUI(ctx, q, projects, perProject)
	if err != nil {
		return err
	}
	r.logf("ui: %d skills and %d prompts in %s", projects*perProject, projects*perProject, time.Since(t0).Round(time.Millisecond))
	// A review with a comment on the first skill's draft, and a label on
	// its published version.
	sk := "/v1/skills/" + first.ID
	if err := q.Call("POST", sk+"/versions/2/reviews", q.Admin, map[string]string{"title": "Benchmark review"}, nil); err != nil {
		return err
	}
	if err := q.Call("POST", sk+"/reviews/1/comments", q.Admin, map[string]any{"body": "A note", "path": "SKILL.md", "line": 1}, nil); err != nil {
		return err
	}
	if err := q.Call("PUT", sk+"/labels/production", q.Admin, map[string]any{"version": 1}, nil); err != nil {
		return err
	}

	// The first activity read after a start builds the system
	// repository's activity index (gitstore/meta); it is timed apart,
	// then the pages are measured warm.
	t1 := time.Now()
	if err := q.Call("GET", "/v1/projects/ui-00/activity?limit=20", q.Admin, nil, nil); err != nil {
		return err
	}
	coldActivity := time.Since(t1)
	n := c.upserts // 200, or 5 with -quick
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	get := func(path string, ui bool) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", q.URL+path, nil)
		if err != nil {
			return 0, err
		}
		if ui {
			req.AddCookie(&http.Cookie{Name: "quire_session", Value: q.Admin})
		} else {
			req.Header.Set("Authorization", "Bearer "+q.Admin)
		}
		t := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		d := time.Since(t)
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %d", path, res.StatusCode)
		}
		return d, err
	}
	base := "/ui/p/ui-00/skills/" + first.Slug
	api := "/v1/skills/" + first.ID
	pages := []struct{ name, ui, api string }{
		{"projects", "/ui/", "/v1/projects"},
		{"project (25 skills, 25 prompts)", "/ui/p/ui-00", "/v1/projects/ui-00/skills?limit=25"},
		{"asset", base, api + "/versions"},
		{"version", base + "/v/1", api + "/versions/1/files"},
		{"diff", base + "/diff?from=1&to=2", api + "/diff?from=1&to=2"},
		{"review", base + "/reviews/1", api + "/reviews/1"},
	}
	uiTimes := make([][]time.Duration, len(pages))
	apiTimes := make([][]time.Duration, len(pages))
	for i := 0; i < n; i++ {
		for j, p := range pages {
			d, err := get(p.ui, true)
			if err != nil {
				return err
			}
			uiTimes[j] = append(uiTimes[j], d)
			if d, err = get(p.api, false); err != nil {
				return err
			}
			apiTimes[j] = append(apiTimes[j], d)
		}
	}
	pct := func(ds []time.Duration, q int) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[min(len(s)-1, len(s)*q/100)]
	}
	r.section("Web UI", fmt.Sprintf(`
The browser UI (/ui/) on a data root of %d skills and %d prompts (%d
projects of %d skills and %d prompts; each skill a published v1 of 4
small files, the measured one also a draft v2; each prompt a published
v1): each main page %d times over one keep-alive connection (a
signed-in session cookie), interleaved with the JSON API request that
reads the same thing (the baseline). The project page shows 25 skills
and 25 prompts with each one's live version and labels, and the latest
activity; the review page holds one line comment. Goal: every page's
p99 ≤ 50 ms.`, projects*perProject, projects*perProject, projects, perProject, perProject, n))
	var rows []row
	for j, p := range pages {
		a50, a99 := pct(uiTimes[j], 50), pct(uiTimes[j], 99)
		b50, b99 := pct(apiTimes[j], 50), pct(apiTimes[j], 99)
		rows = append(rows,
			row{figure: p.name + ": p50", quire: ms(a50), baseline: ms(b50), ratio: float64(a50) / float64(b50)},
			row{figure: p.name + ": p99", quire: ms(a99), baseline: ms(b99), ratio: float64(a99) / float64(b99), goal: "≤ 50 ms", pass: a99 <= 50*time.Millisecond},
		)
	}
	r.table("API", rows)
	r.text(fmt.Sprintf("Before these, the first read of a project's activity after the start, which builds the activity index of the system repository (%d commits), took %s.", 2*projects*perProject+projects, coldActivity.Round(time.Millisecond)))

	// What a page loads besides its HTML, gzipped as a server or proxy
	// that compresses would send it.
	var total, raw int
	for _, path := range []string{"/ui/static/style.css", "/ui/static/ui.js", "/ui/highlight.css"} {
		res, err := client.Get(q.URL + path)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %d %v", path, res.StatusCode, err)
		}
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		total, raw = total+z.Len(), raw+len(b)
	}
	r.text(fmt.Sprintf("JavaScript and CSS of every page: %.1f KB gzipped (%.1f KB raw); goal ≤ 150 KB: %s.", float64(total)/1024, float64(raw)/1024, passed(total <= 150*1024)))

	fcp, err := firstPaint(ctx, q.URL, base, max(3, min(n, 9)))
	if err != nil {
		r.text("First contentful paint of the asset page: not measured (" + err.Error() + ").")
		return nil
	}
	r.text(fmt.Sprintf("First contentful paint of the asset page in headless Chromium (cache disabled, median of %d loads): %.0f ms; goal < 500 ms: %s.", len(fcp), median(fcp), passed(median(fcp) < 500)))
	return nil
}

func passed(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// fillUI writes projects ui-00.. with perProject skills and prompts each
// straight into the store (a few at a time), and returns the first skill.
func fillUI(ctx context.Context, q *bench.Quire, projects, perProject int) (*quire.Asset, error) {
	by := benchActor
	ids := make([]string, projects)
	for i := range ids {
		p := &quire.Project{Name: fmt.Sprintf("UI project %d", i), Slug: fmt.Sprintf("ui-%02d", i)}
		if err := q.Store.CreateProject(ctx, by, p); err != nil {
			return nil, err
		}
		ids[i] = p.ID
	}
	var (
		mu    sync.Mutex
		first *quire.Asset
		errs  []error
		wg    sync.WaitGroup
	)
	jobs := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				a, err := fillAsset(ctx, q, ids[i%projects], i/projects, i)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				if i == 0 {
					first = a
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 2*projects*perProject; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return first, nil
}

// fillAsset makes asset i, the slot-th of its project: on an even slot a
// skill (a published v1 of 4 files; the first skill also a draft v2
// changing one), on an odd one a prompt (a published v1).
func fillAsset(ctx context.Context, q *bench.Quire, project string, slot, i int) (*quire.Asset, error) {
	by := benchActor
	kind := quire.KindSkill
	if slot%2 == 1 {
		kind = quire.KindPrompt
	}
	slug := fmt.Sprintf("%s-%05d", kind, i)
	a := &quire.Asset{ProjectID: project, Kind: kind, Name: fmt.Sprintf("%s %d", kind, i), Slug: slug, Description: "A generated " + string(kind) + "."}
	if err := q.Store.CreateAsset(ctx, by, a); err != nil {
		return nil, err
	}
	if kind == quire.KindPrompt {
		v, err := q.Store.CreateVersion(ctx, by, a, quire.Base{Empty: true}, nil)
		if err != nil {
			return nil, err
		}
		tmpl := fmt.Sprintf("You are assistant %d. Greet {{name}} and write a short note about {{topic}}.", i)
		if _, err := q.Store.WritePrompt(ctx, by, a, v.Number, &quire.PromptContent{Template: &tmpl, Model: "gpt-test", ModelParams: json.RawMessage(`{}`)}, v.Commit); err != nil {
			return nil, err
		}
		_, err = q.Store.PublishVersion(ctx, by, a, v.Number, nil)
		return a, err
	}
	files := []quire.FileContent{{Path: "SKILL.md", Content: fmt.Appendf(nil, "---\nname: %s\ndescription: A generated skill.\n---\n# %s\n\nSteps for the agent.\n", slug, slug)}}
	for f := 1; f < 4; f++ {
		files = append(files, quire.FileContent{Path: fmt.Sprintf("reference/doc-%d.md", f), Content: fmt.Appendf(nil, "# Doc %d\n\nNotes and examples, line one.\nLine two.\n", f)})
	}
	if _, err := q.Store.CreateVersion(ctx, by, a, quire.Base{Empty: true}, files); err != nil {
		return nil, err
	}
	if _, err := q.Store.PublishVersion(ctx, by, a, 1, nil); err != nil {
		return nil, err
	}
	if i > 0 {
		return a, nil
	}
	files[0].Content = append(files[0].Content, "Check the policy first.\n"...)
	_, err := q.Store.CreateVersion(ctx, by, a, quire.Base{Live: true}, files[:1])
	return a, err
}

// firstPaint signs in to the UI in headless Chromium and loads path n
// times with the browser cache off, returning each load's first
// contentful paint in ms.
func firstPaint(ctx context.Context, url, path string, n int) ([]float64, error) {
	bin := os.Getenv("QUIRE_TEST_CHROMIUM")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("chromium"); err != nil {
			return nil, fmt.Errorf("chromium is not installed")
		}
	}
	dir, err := os.MkdirTemp("", "quire-bench-chromium-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(bin), chromedp.UserDataDir(dir),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true), chromedp.NoDefaultBrowserCheck)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(url+"/ui/login"),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), bench.AdminEmail),
		chromedp.SendKeys(chromedp.CSS("#password"), bench.AdminPassword),
		chromedp.Submit(chromedp.CSS("#password")),
		chromedp.WaitVisible(chromedp.CSS("a.who")),
	); err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	if _, err := chromedp.Call(bctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return nil, err
	}
	var out []float64
	for range n {
		tctx, cancel := context.WithTimeout(bctx, 20*time.Second)
		err := chromedp.Do(tctx, chromedp.Navigate(url+path), chromedp.WaitVisible(chromedp.CSS("#versions-h")))
		if err == nil {
			var fcp float64
			// The paint entry is written just after the frame is drawn.
			for try := 0; try < 50 && fcp == 0 && err == nil; try++ {
				fcp, err = chromedp.Run(tctx, chromedp.Evaluate[float64](`(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: 0}).startTime`))
				if fcp == 0 {
					time.Sleep(20 * time.Millisecond)
				}
			}
			out = append(out, fcp)
		}
		cancel()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
