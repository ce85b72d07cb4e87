package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/quire/quire/internal/bench"
)

// reviewsSection measures the review workflow over HTTP against a file
// upsert into a draft of the same size with no review (the baseline):
// opening a review, posting a line comment, approving, an upsert into the
// reviewed draft (which also records the head move on the review), and
// reading a review that holds 200 comments. Goals: a comment costs at
// most 2x an upsert (median), and the read of a 200-comment review has a
// p99 under 20 ms.
func reviewsSection(ctx context.Context, c *config, r *report) error {
	q, err := bench.Start(ctx, bench.Options{RedisURL: c.redis})
	if err != nil {
		return err
	}
	defer q.Close()
	sk, err := draft(ctx, q, "reviewed", 10)
	if err != nil {
		return err
	}
	plain, err := draft(ctx, q, "plain", 10)
	if err != nil {
		return err
	}
	base := q.URL + "/v1/skills/" + sk.ID
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	call := func(method, url string, body any, want int) (time.Duration, error) {
		b, _ := json.Marshal(body)
		if body == nil {
			b = nil
		}
		t0 := time.Now()
		status, out, err := bench.Request{Method: method, URL: url, Token: q.Admin, Body: b}.Do(client)
		d := time.Since(t0)
		if err == nil && status != want {
			err = fmt.Errorf("%s %s: %d %s", method, url, status, out)
		}
		return d, err
	}
	// Review 1, of draft 1, takes the comments and approvals; drafts
	// 2..n+1, made before the clock runs, get a review each.
	n := c.upserts
	if _, err := call("POST", base+"/versions/1/reviews", map[string]string{"title": "review"}, http.StatusCreated); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if _, err := call("POST", base+"/versions", map[string]any{"from": "empty"}, http.StatusCreated); err != nil {
			return err
		}
	}
	var tUpsert, tReviewed, tOpen, tComment, tApprove, tGet []time.Duration
	for i := 0; i < n; i++ {
		steps := []func() error{
			func() error {
				d, err := call("POST", q.URL+"/v1/skills/"+plain.ID+"/versions/1/files", map[string]string{"file_path": "file-05.md", "content": fmt.Sprintf("revision %d\n", i)}, http.StatusOK)
				tUpsert = append(tUpsert, d)
				return err
			},
			func() error {
				d, err := call("POST", base+"/versions/1/files", map[string]string{"file_path": "file-05.md", "content": fmt.Sprintf("revision %d\n", i)}, http.StatusOK)
				tReviewed = append(tReviewed, d)
				return err
			},
			func() error {
				d, err := call("POST", fmt.Sprintf("%s/versions/%d/reviews", base, i+2), map[string]string{"title": "review"}, http.StatusCreated)
				tOpen = append(tOpen, d)
				return err
			},
			func() error {
				d, err := call("POST", base+"/reviews/1/comments", map[string]any{"body": fmt.Sprintf("comment %d", i), "path": "SKILL.md", "line": 1}, http.StatusCreated)
				tComment = append(tComment, d)
				return err
			},
			func() error {
				d, err := call("POST", base+"/reviews/1/approve", nil, http.StatusCreated)
				tApprove = append(tApprove, d)
				return err
			},
		}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return err
			}
		}
	}
	for len(tGet) < n {
		d, err := call("GET", base+"/reviews/1", nil, http.StatusOK)
		if err != nil {
			return err
		}
		tGet = append(tGet, d)
	}
	var got struct{ Comments []json.RawMessage }
	if err := q.Call("GET", "/v1/skills/"+sk.ID+"/reviews/1", q.Admin, nil, &got); err != nil {
		return err
	}
	p := func(ds []time.Duration, q int) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[min(len(s)-1, len(s)*q/100)]
	}
	up50, up99 := p(tUpsert, 50), p(tUpsert, 99)
	r.section("Reviews", fmt.Sprintf(`
The review workflow over HTTP (admin session, one keep-alive connection,
skill drafts of 10 files), against a file upsert into a draft with no
review: open a review (of a fresh draft each time), post a line comment
and approve (both on one review, which grows to %d comments), upsert a
file into that reviewed draft (the write also commits the head move to
its review), and read that review once it holds %d comments (files
against the base, comments, verdicts, mergeable). %d of each,
interleaved in rotating order. Goals: a comment at most 2x an upsert
(median); the read's p99 under 20 ms.`, n, len(got.Comments), n))
	row2 := func(name string, ds []time.Duration) []row {
		a, b := p(ds, 50), p(ds, 99)
		return []row{
			{figure: name + ": p50", quire: ms(a), baseline: ms(up50), ratio: float64(a) / float64(up50)},
			{figure: name + ": p99", quire: ms(b), baseline: ms(up99), ratio: float64(b) / float64(up99)},
		}
	}
	rows := row2("open review", tOpen)
	cm := row2("comment", tComment)
	cm[0].goal, cm[0].pass = "≤ 2.00x", p(tComment, 50) <= 2*up50
	rows = append(rows, cm...)
	rows = append(rows, row2("approve", tApprove)...)
	rows = append(rows, row2("upsert into the reviewed draft (+ head move)", tReviewed)...)
	g := row2(fmt.Sprintf("GET review, %d comments", len(got.Comments)), tGet)
	g[1].goal, g[1].pass = "< 20 ms", p(tGet, 99) < 20*time.Millisecond
	rows = append(rows, g...)
	r.table("upsert", rows)
	return nil
}
