package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quire/quire/internal/bench"
)

// reviewPageCases is the size of the evaluation on the measured review
// page; reviewPageClients the requests in flight.
const reviewPageCases, reviewPageClients = 50, 4

// describeVocabulary makes the long answers of the review page's prompt.
var describeVocabulary = strings.Fields(`the a model answer prompt review output case payload version
greeting customer warm brief detail clear polite short long note team
change word line check test passes fails shows reads keeps sends stores
today always never often rarely quickly slowly kindly simply fully`)

// describeAnswer is the local model's answer to a prompt of the review
// page ("Describe NAME …"): about 120 words, the same for a name in every
// version but for a few words that depend on the whole prompt, as a
// model's answers to two close prompts share most of their words.
func describeAnswer(content string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(content, "Describe "), " ")
	seed, all := fnv.New64a(), fnv.New64a()
	seed.Write([]byte(name))
	all.Write([]byte(content))
	s, v := seed.Sum64(), all.Sum64()
	words := make([]string, 0, 120)
	for i := range 120 {
		s = s*6364136223846793005 + 1442695040888963407
		w := describeVocabulary[s>>33%uint64(len(describeVocabulary))]
		if i%9 == int(v%9) {
			v = v*6364136223846793005 + 1442695040888963407
			w = describeVocabulary[v>>33%uint64(len(describeVocabulary))]
		}
		if i%15 == 14 {
			w += "."
		}
		words = append(words, w)
	}
	return name + ": " + strings.Join(words, " ")
}

// reviewPage measures the review page of a prompt review whose head's
// evaluation against its base has 50 cases (each output about 120 words,
// base and head sharing most of them), read by a signed-in reviewer with
// 4 requests in flight, beside the API's read of the same review (which
// also reads the evaluation). Goal: the page's p99 ≤ 50 ms.
func reviewPage(ctx context.Context, c *config, r *report, q *bench.Quire) error {
	call := func(method, path string, body, out any) error { return q.Call(method, path, q.Admin, body, out) }
	var pr struct{ Prompt struct{ ID string } }
	if err := call("POST", "/v1/projects/"+q.ProjectID+"/prompts", map[string]string{"name": "Descriptions", "slug": "describe"}, &pr); err != nil {
		return err
	}
	p := "/v1/prompts/" + pr.Prompt.ID
	for _, step := range []struct {
		path string
		body any
	}{
		{p + "/versions", map[string]any{"template": "Describe {{name}} in detail.", "model": "m"}},
		{p + "/versions/1/publish", nil},
		{p + "/versions", map[string]any{"template": "Describe {{name}} in detail, warmly.", "model": "m"}},
	} {
		if err := call("POST", step.path, step.body, nil); err != nil {
			return err
		}
	}
	for i := range reviewPageCases {
		if err := call("POST", p+"/payloads", map[string]any{"name": fmt.Sprintf("case-%02d", i), "variables": map[string]string{"name": fmt.Sprintf("N%02d", i)},
			"assertions": []map[string]any{{"type": "contains", "value": fmt.Sprintf("N%02d", i)}, {"type": "max_length", "value": 2000}, {"type": "not_contains", "value": "never"}}}, nil); err != nil {
			return err
		}
	}
	// The reviewer: an editor of the project, signed in.
	const email, password = "reviewer@example.com", "reviewer-password"
	var u struct{ User struct{ ID string } }
	if err := call("POST", "/v1/users", map[string]string{"email": email, "password": password, "name": "Reviewer"}, &u); err != nil {
		return err
	}
	if err := call("PUT", "/v1/projects/"+q.ProjectID+"/members/"+u.User.ID, map[string]string{"role": "editor"}, nil); err != nil {
		return err
	}
	var login struct{ Token string }
	if err := q.Call("POST", "/v1/auth/login", "", map[string]string{"email": email, "password": password}, &login); err != nil {
		return err
	}
	if err := call("POST", p+"/versions/2/reviews", map[string]string{"title": "Warmer descriptions"}, nil); err != nil {
		return err
	}
	var started struct{ Evaluation struct{ ID string } }
	if err := call("POST", p+"/versions/2/evaluations", map[string]any{"against": "base"}, &started); err != nil {
		return err
	}
	for {
		var v struct{ Evaluation struct{ State string } }
		if err := call("GET", p+"/versions/2/evaluations/"+started.Evaluation.ID, nil, &v); err != nil {
			return err
		}
		if v.Evaluation.State == "completed" {
			break
		}
		if v.Evaluation.State != "queued" && v.Evaluation.State != "running" {
			return fmt.Errorf("the review's evaluation is %s", v.Evaluation.State)
		}
		time.Sleep(25 * time.Millisecond)
	}
	// Two comments on cases, one on the review.
	var payloads struct{ Payloads []struct{ ID string } }
	if err := call("GET", p+"/payloads", nil, &payloads); err != nil {
		return err
	}
	for _, body := range []map[string]any{
		{"body": "This one lost its warmth", "case": payloads.Payloads[3].ID},
		{"body": "Better", "case": payloads.Payloads[17].ID},
		{"body": "Looks good overall"},
	} {
		if err := call("POST", p+"/reviews/1/comments", body, nil); err != nil {
			return err
		}
	}

	page := "/ui/p/bench/prompts/describe/reviews/1"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: reviewPageClients}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	get := func(path string, ui bool) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", q.URL+path, nil)
		if err != nil {
			return 0, err
		}
		if ui {
			req.AddCookie(&http.Cookie{Name: "quire_session", Value: login.Token})
		} else {
			req.Header.Set("Authorization", "Bearer "+login.Token)
		}
		t := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		d := time.Since(t)
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %d", path, res.StatusCode)
		}
		if err == nil && ui && strings.Count(string(b), `class="diff eval-case"`) != reviewPageCases {
			err = fmt.Errorf("GET %s: the page does not show %d cases", path, reviewPageCases)
		}
		return d, err
	}
	// The setup's writes are followed, 2 s later, by a background repack
	// of the repositories they changed (gitstore RepackDelay): measure
	// after it (most reads of a review come between writes, not during
	// a repack). Then warm: the first
	// reads fill what the server keeps.
	time.Sleep(4 * time.Second)
	for range 3 {
		if _, err := get(page, true); err != nil {
			return err
		}
	}
	n := max(c.upserts, 8) // requests of each kind: 200, or 8 with -quick
	var (
		mu        sync.Mutex
		uiT, apiT []time.Duration
		firstErr  error
		wg        sync.WaitGroup
	)
	per := n / reviewPageClients
	for w := range reviewPageClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				// Each client alternates, in opposite phases, so the page
				// and the API read are measured under the same load.
				first := (i+w)%2 == 0
				for _, ui := range []bool{first, !first} {
					path := page
					if !ui {
						path = p + "/reviews/1"
					}
					d, err := get(path, ui)
					mu.Lock()
					if err != nil && firstErr == nil {
						firstErr = err
					}
					if ui {
						uiT = append(uiT, d)
					} else {
						apiT = append(apiT, d)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	pct := func(ds []time.Duration, q int) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[min(len(s)-1, len(s)*q/100)]
	}
	r.text(fmt.Sprintf(`The review page of a prompt review whose head's evaluation against its
base has %d cases (outputs of about 120 words, base and head sharing most
of them, three assertions each; two comments on cases, one on the
review), read by a signed-in reviewer (an editor of the project) %d
times with %d requests in flight, interleaved with the API's read of the
same review (GET …/reviews/1, which also reads the evaluation: the
baseline), from 4 s after the setup's last write (the background repack
of what it changed starts 2 s after it). Goal: the page's p99 ≤ 50 ms.`, reviewPageCases, per*reviewPageClients, reviewPageClients))
	a50, a99 := pct(uiT, 50), pct(uiT, 99)
	b50, b99 := pct(apiT, 50), pct(apiT, 99)
	r.table("API", []row{
		{figure: fmt.Sprintf("review page, %d cases: p50", reviewPageCases), quire: ms(a50), baseline: ms(b50), ratio: float64(a50) / float64(b50)},
		{figure: fmt.Sprintf("review page, %d cases: p99", reviewPageCases), quire: ms(a99), baseline: ms(b99), ratio: float64(a99) / float64(b99), goal: "≤ 50 ms", pass: a99 <= 50*time.Millisecond},
	})
	return nil
}
