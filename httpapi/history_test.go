package httpapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// clock is a fake time source that moves one second per reading, so every
// commit has a distinct time (git keeps seconds).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

type entryView struct {
	ID      string `json:"id"`
	Author  string `json:"author"`
	Message string `json:"message"`
	Time    string `json:"time"`
	Version int    `json:"version"`
	Ref     string `json:"ref"`
	AssetID string `json:"asset_id"`
	Kind    string `json:"kind"`
	Source  string `json:"source"`
}

// pages reads a paginated list to the end, limit entries at a time.
func pages(e *testenv.Env, path, key string, limit int) []entryView {
	e.T.Helper()
	var all []entryView
	cursor := ""
	for i := 0; i < 100; i++ {
		u := path + "?limit=" + strconv.Itoa(limit)
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		var page map[string]json.RawMessage
		e.Must(200, "GET", u, e.Admin, nil).Decode(e.T, &page)
		var entries []entryView
		if err := json.Unmarshal(page[key], &entries); err != nil {
			e.T.Fatal(err)
		}
		if len(entries) > limit {
			e.T.Fatalf("page of %d entries, limit %d", len(entries), limit)
		}
		all = append(all, entries...)
		if err := json.Unmarshal(page["next_cursor"], &cursor); err != nil {
			e.T.Fatal(err)
		}
		if cursor == "" {
			return all
		}
	}
	e.T.Fatal("pagination does not end")
	return nil
}

func TestSkillHistory(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	e := testenv.NewWith(t, testenv.Options{Now: clk.Now})
	pid := e.CreateProject(e.Admin, "demo")
	e.CreateSkill(e.Admin, pid, "pdf")
	file := func(v, path, content string) {
		e.Must(200, "POST", "/v1/skills/pdf/versions/"+v+"/files", e.Admin, map[string]string{"file_path": path, "content": content})
	}
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil) // 1
	file("1", "SKILL.md", testenv.SkillManifest("pdf"))
	file("1", "a.txt", "a")
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil) // 2
	file("2", "a.txt", "b")
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", e.Admin, nil)
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/promote", e.Admin, nil)
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil) // 3
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/archive", e.Admin, nil)
	e.Must(204, "DELETE", "/v1/skills/pdf/versions/3", e.Admin, nil)

	want := []struct {
		msg     string
		version int
		ref     string
	}{
		{"Delete draft 3", 3, "refs/quire/versions"},
		{"Archive version 2", 2, "refs/tags/archive/v2"},
		{"Promote version 1", 1, "refs/quire/versions"},
		{"Publish version 2", 2, "refs/tags/v2"},
		{"Update a.txt", 2, "refs/tags/archive/v2"}, // commits name their version's current ref
		{"Open draft 2 from v1", 2, "refs/tags/archive/v2"},
		{"Publish version 1", 1, "refs/tags/v1"},
		{"Add a.txt", 1, "refs/tags/v1"},
		{"Add SKILL.md", 1, "refs/tags/v1"},
		{"Open draft 1", 1, "refs/tags/v1"},
	}
	all := pages(e, "/v1/skills/pdf/history", "commits", 500)
	if len(all) != len(want) {
		for _, c := range all {
			t.Logf("%s %s v%d %s", c.Time, c.Message, c.Version, c.Ref)
		}
		t.Fatalf("%d history entries, want %d", len(all), len(want))
	}
	for i, w := range want {
		c := all[i]
		if c.Message != w.msg || c.Version != w.version || c.Ref != w.ref || c.Author != "Admin" || c.ID == "" {
			t.Errorf("entry %d = %q v%d %s by %s, want %q v%d %s", i, c.Message, c.Version, c.Ref, c.Author, w.msg, w.version, w.ref)
		}
		if i > 0 && c.Time >= all[i-1].Time {
			t.Errorf("entry %d not older than the one before", i)
		}
	}
	// Pages of 3 give the same list, each entry once.
	paged := pages(e, "/v1/skills/pdf/history", "commits", 3)
	if len(paged) != len(all) {
		t.Fatalf("paged %d entries, unpaged %d", len(paged), len(all))
	}
	for i := range all {
		if paged[i].ID != all[i].ID {
			t.Fatalf("paged entry %d = %s, want %s", i, paged[i].Message, all[i].Message)
		}
	}
	// A cursor stays good when newer entries arrive.
	first := e.Must(200, "GET", "/v1/skills/pdf/history?limit=4", e.Admin, nil).JSON(t)
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil)
	var rest struct {
		Commits []entryView `json:"commits"`
	}
	e.Must(200, "GET", "/v1/skills/pdf/history?limit=4&cursor="+url.QueryEscape(first["next_cursor"].(string)), e.Admin, nil).Decode(t, &rest)
	if len(rest.Commits) == 0 || rest.Commits[0].ID != all[4].ID {
		t.Fatalf("page after a cursor starts at %+v, want %s", rest.Commits, all[4].Message)
	}
	e.Must(400, "GET", "/v1/skills/pdf/history?cursor=bogus", e.Admin, nil)
	e.Must(400, "GET", "/v1/skills/pdf/history?limit=0", e.Admin, nil)
}

func TestPromptHistoryAndProjectActivity(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	e := testenv.NewWith(t, testenv.Options{Now: clk.Now})
	ctx := context.Background()
	pid := e.CreateProject(e.Admin, "demo")
	otherPID := e.CreateProject(e.Admin, "other")
	sid := e.CreateSkill(e.Admin, pid, "pdf")
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil)
	promptID := createPrompt(e, pid, "greet")
	e.Must(200, "PATCH", "/v1/prompts/greet", e.Admin, map[string]string{"description": "says hello"})
	e.CreateSkill(e.Admin, otherPID, "elsewhere")

	// Prompt versions are written through the store here: their HTTP
	// routes come with the prompts work.
	prompt, err := e.Store.Asset(ctx, quire.KindPrompt, promptID)
	if err != nil {
		t.Fatal(err)
	}
	by := quire.Actor{Name: "Writer", Email: "w@example.com"}
	if _, err := e.Store.CreateVersion(ctx, by, prompt, quire.Base{Empty: true}, []quire.FileContent{{Path: "template.mustache", Content: []byte("Hi {{name}}")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.PublishVersion(ctx, by, prompt, 1, nil); err != nil {
		t.Fatal(err)
	}
	hist := pages(e, "/v1/prompts/greet/history", "commits", 1)
	if len(hist) != 2 || hist[0].Message != "Publish version 1" || hist[1].Message != "Open draft 1" || hist[1].Author != "Writer" {
		t.Fatalf("prompt history = %+v", hist)
	}

	feed := pages(e, "/v1/projects/demo/activity", "activity", 2)
	wantFeed := []struct{ msg, source, asset string }{
		{"Publish version 1", "prompt", promptID},
		{"Open draft 1", "prompt", promptID},
		{"Update prompt greet", "metadata", promptID},
		{"Create prompt greet", "metadata", promptID},
		{"Open draft 1", "skill", sid},
		{"Create skill pdf", "metadata", sid},
		{"Create project demo", "metadata", ""},
	}
	if len(feed) != len(wantFeed) {
		for _, f := range feed {
			t.Logf("%s %s %s", f.Time, f.Source, f.Message)
		}
		t.Fatalf("%d activity entries, want %d", len(feed), len(wantFeed))
	}
	for i, w := range wantFeed {
		if feed[i].Message != w.msg || feed[i].Source != w.source || feed[i].AssetID != w.asset {
			t.Errorf("activity %d = %q %s %s, want %q %s %s", i, feed[i].Message, feed[i].Source, feed[i].AssetID, w.msg, w.source, w.asset)
		}
	}

	// Other projects' changes stay out; strangers see no feed.
	for _, f := range pages(e, "/v1/projects/other/activity", "activity", 50) {
		if f.AssetID == sid || f.AssetID == promptID {
			t.Errorf("other project's feed holds %+v", f)
		}
	}
	_, stranger := e.CreateUser("stranger@example.com")
	e.Must(404, "GET", "/v1/projects/demo/activity", stranger, nil)

	// A deleted skill's metadata stays in the feed; its repository is gone.
	e.Must(204, "DELETE", "/v1/skills/pdf", e.Admin, nil)
	feed = pages(e, "/v1/projects/demo/activity", "activity", 50)
	if feed[0].Message != "Delete skill pdf" || feed[0].Source != "metadata" {
		t.Fatalf("newest entry after delete = %+v", feed[0])
	}
}
