package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// TestConcurrentPromptWriters is TestConcurrentWriters for prompts, with
// renders: at once, 64 writers rewrite the template of one shared draft
// and write payloads of that prompt, 64 writers rewrite drafts of their
// own (eight in each of eight prompts, opened concurrently), two writers
// per prompt publish theirs when done, and readers fetch the live version
// and render it. Nothing may be lost: every draft and the payload log hold
// exactly one commit per acknowledged write, each acknowledged commit
// holds what was written, each payload its last write. A live render must
// always be a published version's content, matching the version number it
// reports: never a draft's, never a mix. No 5xx, and all of it before a
// deadline (a stall fails with every goroutine's stack).
func TestConcurrentPromptWriters(t *testing.T) {
	const (
		writers    = 64
		prompts    = 8
		rounds     = 2 // template writes by each writer
		publishers = 2 // writers per prompt that publish their draft
	)
	e := testenv.New(t)
	c := newClient(t, e)

	pid := e.CreateProject(e.Admin, "pconc")
	live := func(name string) string { return name + " v1 {{name}}" }
	shared := e.CreatePrompt(e.Admin, pid, "shared")
	e.Must(201, "POST", "/v1/prompts/"+shared+"/versions", e.Admin, obj{"template": live("shared")})
	e.Must(200, "POST", "/v1/prompts/"+shared+"/versions/1/publish", e.Admin, nil)
	sharedBase := str(t, e.Must(201, "POST", "/v1/prompts/"+shared+"/versions", e.Admin, nil).JSON(t), "version", "commit")
	promptIDs := make([]string, prompts)
	for i := range promptIDs {
		promptIDs[i] = e.CreatePrompt(e.Admin, pid, fmt.Sprintf("own-%d", i))
		e.Must(201, "POST", "/v1/prompts/"+promptIDs[i]+"/versions", e.Admin, obj{"template": live(fmt.Sprintf("own-%d", i))})
		e.Must(200, "POST", "/v1/prompts/"+promptIDs[i]+"/versions/1/publish", e.Admin, nil)
	}
	e.Must(201, "POST", "/v1/prompts/"+shared+"/payloads", e.Admin, obj{"name": "first", "variables": obj{}})
	payloadLog := func() int {
		return gitCount(t, e.RepoPath(quire.KindPrompt, shared), "refs/quire/payloads")
	}
	payloadsBefore := payloadLog()

	// Phase 1: 64 drafts opened at once, eight per prompt, from the live
	// version (so each starts with its template).
	type draft struct {
		n    int
		base string // the draft's commit when opened
	}
	own := make([]draft, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := c.must(201, "POST", "/v1/prompts/"+promptIDs[w%prompts]+"/versions", nil)
			var out struct{ Version quire.Version }
			json.Unmarshal(b, &out)
			own[w] = draft{out.Version.Number, out.Version.Commit}
		}()
	}
	if !waitFor(t, c.ctx, &wg) {
		return
	}
	for i := range prompts {
		var got []int
		for w := i; w < writers; w += prompts {
			got = append(got, own[w].n)
		}
		slices.Sort(got)
		if want := []int{2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(got, want) {
			t.Fatalf("prompt own-%d: concurrent creates handed out versions %v, want %v", i, got, want)
		}
	}

	// What each version may render as once published, by prompt and number.
	var pubMu sync.Mutex
	published := make([]map[int]string, prompts)
	for i := range published {
		published[i] = map[int]string{1: live(fmt.Sprintf("own-%d", i))}
	}

	// Phase 2: writers, publishers, readers and renderers.
	type ack struct{ commit, template string }
	sharedAcks := make([][]ack, writers)
	ownAcks := make([][]ack, writers)
	payloadAcks := make([]int, writers)
	lastPayload := make([]string, writers)
	payloadIDs := make([]string, writers)
	write := func(id string, n int, template string) string {
		b := c.must(200, "PATCH", fmt.Sprintf("/v1/prompts/%s/versions/%d", id, n), obj{"template": template})
		var out struct{ Version quire.Version }
		json.Unmarshal(b, &out)
		return out.Version.Commit
	}
	var writing sync.WaitGroup
	for w := range writers {
		writing.Add(3)
		go func() { // the shared draft's template
			defer writing.Done()
			for r := range rounds {
				tmpl := fmt.Sprintf("shared draft: writer %d round %d {{name}}", w, r)
				if commit := write(shared, 2, tmpl); commit != "" {
					sharedAcks[w] = append(sharedAcks[w], ack{commit, tmpl})
				}
			}
		}()
		go func() { // a payload of the shared prompt: create, then update
			defer writing.Done()
			b := c.must(201, "POST", "/v1/prompts/"+shared+"/payloads", obj{"name": fmt.Sprintf("p%d", w), "variables": obj{"name": "created"}})
			var out struct{ Payload struct{ ID string } }
			if json.Unmarshal(b, &out) != nil || out.Payload.ID == "" {
				return
			}
			payloadIDs[w], lastPayload[w], payloadAcks[w] = out.Payload.ID, "created", 1
			for r := range rounds {
				name := fmt.Sprintf("writer %d round %d", w, r)
				status, _ := c.do("PUT", "/v1/prompts/"+shared+"/payloads/"+out.Payload.ID, obj{"variables": obj{"name": name}})
				if status == 200 {
					lastPayload[w] = name
					payloadAcks[w]++
				} else if status != 0 {
					c.fail("PUT payload: status %d", status)
				}
			}
		}()
		go func() { // its own draft, published at the end by a few
			defer writing.Done()
			p, d := w%prompts, own[w]
			var tmpl string
			for r := range rounds {
				tmpl = fmt.Sprintf("own-%d draft %d: writer %d round %d {{name}}", p, d.n, w, r)
				if commit := write(promptIDs[p], d.n, tmpl); commit != "" {
					ownAcks[w] = append(ownAcks[w], ack{commit, tmpl})
				}
			}
			if w/prompts < publishers && len(ownAcks[w]) == rounds {
				// Known before the publish answers: a render may see it
				// as soon as main moves.
				pubMu.Lock()
				published[p][d.n] = tmpl
				pubMu.Unlock()
				c.must(200, "POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", promptIDs[p], d.n), nil)
			}
		}()
	}
	stop := make(chan struct{})
	var reading sync.WaitGroup
	var reads, renders sync.Map
	for r := range 4 {
		reading.Add(1)
		go func() {
			defer reading.Done()
			n, rendered := 0, 0
			defer func() { reads.Store(r, n); renders.Store(r, rendered) }()
			for ; ; n++ {
				select {
				case <-stop:
					return
				case <-c.ctx.Done():
					return
				default:
				}
				p := (r + n) % prompts
				switch n % 3 {
				case 0: // the shared prompt: live stays version 1 throughout
					b := c.must(200, "POST", "/v1/prompts/"+shared+"/render", obj{"variables": obj{"name": "R"}})
					var out struct {
						Version  int
						Rendered string
					}
					if json.Unmarshal(b, &out) == nil && out.Rendered != "" {
						rendered++
						if out.Version != 1 || out.Rendered != "shared v1 R" {
							c.fail("shared prompt rendered version %d %q; only version 1 is live", out.Version, out.Rendered)
						}
					}
				case 1: // an own prompt, live moving under publishes
					b := c.must(200, "POST", "/v1/prompts/"+promptIDs[p]+"/render", obj{"variables": obj{"name": "R"}})
					var out struct {
						Version  int
						Rendered string
					}
					if json.Unmarshal(b, &out) != nil || out.Rendered == "" {
						continue
					}
					rendered++
					pubMu.Lock()
					want, ok := published[p][out.Version]
					pubMu.Unlock()
					if !ok || out.Rendered != strings.ReplaceAll(want, "{{name}}", "R") {
						c.fail("own-%d rendered version %d as %q; published as %q (%v)", p, out.Version, out.Rendered, want, ok)
					}
				case 2:
					b := c.must(200, "GET", "/v1/prompts/"+promptIDs[p]+"/live", nil)
					var out struct{ Version promptVersionJSON }
					if json.Unmarshal(b, &out) == nil && out.Version.Template != nil {
						pubMu.Lock()
						want, ok := published[p][out.Version.Version]
						pubMu.Unlock()
						if !ok || *out.Version.Template != want {
							c.fail("own-%d live version %d has template %q; published as %q (%v)", p, out.Version.Version, *out.Version.Template, want, ok)
						}
					}
				}
			}
		}()
	}
	ok := waitFor(t, c.ctx, &writing)
	close(stop)
	if !ok || !waitFor(t, c.ctx, &reading) {
		return
	}
	for _, f := range c.fails {
		t.Error(f)
	}
	if t.Failed() {
		return
	}
	sum := func(m *sync.Map) (total int) {
		m.Range(func(_, v any) bool { total += v.(int); return true })
		return total
	}
	t.Logf("%d template writes on one draft, %d on 64 drafts, %d payload writes, %d publishes, %d reads of which %d renders, all at once",
		writers*rounds, writers*rounds, writers*(1+rounds), prompts*publishers, sum(&reads), sum(&renders))

	// Exact commit counts, and each acknowledged commit holds its write.
	check := func(promptID, ref, base string, acks [][]ack) {
		t.Helper()
		repo := e.RepoPath(quire.KindPrompt, promptID)
		history := strings.Fields(testenv.Git(t, repo, "rev-list", base+".."+ref))
		want := 0
		for _, as := range acks {
			want += len(as)
			for _, a := range as {
				if !slices.Contains(history, a.commit) {
					t.Errorf("%s: acknowledged commit %s is not in its history", ref, a.commit)
				} else if got := testenv.Git(t, repo, "show", a.commit+":"+quire.PromptTemplateFile); got != a.template {
					t.Errorf("%s: commit %s holds %q, written as %q", ref, a.commit, got, a.template)
				}
			}
		}
		if len(history) != want {
			t.Errorf("%s: %d commits since the draft was opened, %d writes acknowledged", ref, len(history), want)
		}
	}
	check(shared, "refs/heads/draft/2", sharedBase, sharedAcks)
	for w := range writers {
		p, d := w%prompts, own[w]
		ref := "refs/heads/draft/" + strconv.Itoa(d.n)
		state := "draft"
		if w/prompts < publishers {
			ref, state = "refs/tags/v"+strconv.Itoa(d.n), "published"
		}
		check(promptIDs[p], ref, d.base, ownAcks[w:w+1])
		v := e.Must(200, "GET", fmt.Sprintf("/v1/prompts/%s/versions/%d", promptIDs[p], d.n), e.Admin, nil).JSON(t)
		if got, last := str(t, v, "version", "template"), ownAcks[w][rounds-1].template; got != last || str(t, v, "version", "state") != state {
			t.Errorf("own-%d version %d: %s %q, want %s %q", p, d.n, str(t, v, "version", "state"), got, state, last)
		}
	}
	acked := 0
	for w := range writers {
		acked += payloadAcks[w]
		p := e.Must(200, "GET", "/v1/prompts/"+shared+"/payloads/"+payloadIDs[w], e.Admin, nil).JSON(t)
		if got := str(t, p, "payload", "variables", "name"); got != lastPayload[w] {
			t.Errorf("payload of writer %d holds %q, last written %q", w, got, lastPayload[w])
		}
	}
	if got := payloadLog() - payloadsBefore; got != acked {
		t.Errorf("payload log: %d new commits, %d writes acknowledged", got, acked)
	}
	for _, id := range append(promptIDs, shared) {
		testenv.Git(t, e.RepoPath(quire.KindPrompt, id), "fsck", "--strict")
	}
}

// promptVersionJSON is the part of a prompt version view the test reads.
type promptVersionJSON struct {
	Version  int     `json:"version"`
	Template *string `json:"template"`
}

// gitCount is the number of commits reachable from rev.
func gitCount(t *testing.T, repo, rev string) int {
	t.Helper()
	n, err := strconv.Atoi(testenv.Git(t, repo, "rev-list", "--count", rev))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
