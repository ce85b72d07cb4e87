package httpapi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/internal/testenv"
)

// TestEventIntentsRecovered: writes that landed in git but whose events
// could not be recorded (the event log broken under them, as a process
// killed between the two would leave them) get their events when the
// server starts again, read from the repository; a write that was refused
// gets none, and nothing gets two.
func TestEventIntentsRecovered(t *testing.T) {
	root := t.TempDir()
	var pid, skillID, head2, lastID string
	t.Run("broken log", func(t *testing.T) {
		e := testenv.NewWith(t, testenv.Options{Root: root})
		pid = e.CreateProject(e.Admin, "intents")
		skillID = e.CreateSkill(e.Admin, pid, "pdf")
		s := &skill{e: e, projectID: pid, id: skillID, slug: "pdf"}
		s.publish(t, s.draft(t, nil)) // v1, live
		n := s.draft(t, nil)          // draft 2, under review
		e.Must(201, "POST", fmt.Sprintf("/v1/skills/%s/versions/%d/reviews", skillID, n), e.Admin, map[string]string{"title": "two"})
		evs := arr(t, e.Must(200, "GET", "/v1/projects/"+pid+"/events?limit=500", e.Admin, nil).JSON(t), "events")
		lastID = str(t, evs[len(evs)-1], "id")

		// The log cannot be written: every write below lands, then fails.
		log := filepath.Join(root, "_events", pid, "events.jsonl")
		if err := os.Rename(log, log+".aside"); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(log, 0o755); err != nil {
			t.Fatal(err)
		}
		landed := []struct {
			method, path string
			body         any
		}{
			{"POST", "/v1/projects/" + pid + "/skills", map[string]string{"name": "Other", "slug": "other"}},
			{"POST", s.url("/versions"), nil},
			{"POST", s.vurl(n, "/files"), map[string]string{"file_path": "notes.md", "content": "landed"}},
			{"PUT", s.url("/labels/staging"), map[string]any{"version": 1}},
			{"POST", s.url("/reviews/1/comments"), map[string]string{"body": "landed too"}},
		}
		for _, w := range landed {
			wantError(t, e.Do(w.method, w.path, e.Admin, w.body), 500)
		}
		wantError(t, e.Do("POST", s.vurl(99, "/publish"), e.Admin, nil), 404) // refused: nothing landed
		head2 = str(t, e.Must(200, "GET", s.vurl(n), e.Admin, nil).JSON(t), "version", "commit")

		os.Remove(log)
		if err := os.Rename(log+".aside", log); err != nil {
			t.Fatal(err)
		}
	}) // the server stops here, its intents unsettled

	e := newEnv(t, testenv.Options{Root: root})
	evs := arr(t, e.Must(200, "GET", "/v1/projects/"+pid+"/events?after="+lastID+"&limit=500", e.Admin, nil).JSON(t), "events")
	var got []string
	for _, ev := range evs {
		m := ev.(map[string]any)
		d := str(t, ev, "type") + " " + str(t, ev, "asset", "slug")
		if v, ok := m["version"]; ok {
			d += fmt.Sprintf(" v%v", v)
		}
		if l, ok := m["label"]; ok {
			d += " " + l.(string)
		}
		if r, ok := m["review"]; ok {
			d += fmt.Sprintf(" #%v", r)
		}
		if c, ok := get(t, ev, "data").(map[string]any)["commit"]; ok && str(t, ev, "type") == "version.updated" && c != head2 {
			t.Errorf("version.updated carries commit %v, the draft is at %s", c, head2)
		}
		got = append(got, d)
	}
	sort.Strings(got)
	want := []string{
		"asset.created other",
		"label.moved pdf v1 staging",
		"review.commented pdf v2 #1",
		"version.created pdf v3",
		"version.updated pdf v2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events recovered at start:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Settled once: another start records nothing more.
	e2 := newEnv(t, testenv.Options{Root: root})
	again := arr(t, e2.Must(200, "GET", "/v1/projects/"+pid+"/events?after="+lastID+"&limit=500", e2.Admin, nil).JSON(t), "events")
	if len(again) != len(evs) {
		t.Errorf("a second start recorded %d events more", len(again)-len(evs))
	}
}

// TestDeletedProjectEvents: deleting a project removes its event log,
// webhooks and intents from <data>/_events; nothing else's go with it.
func TestDeletedProjectEvents(t *testing.T) {
	root := t.TempDir()
	e := newEnv(t, testenv.Options{Root: root, Webhooks: server.WebhookOptions{AllowPrivate: true}})
	gone := e.CreateProject(e.Admin, "gone")
	kept := e.CreateProject(e.Admin, "kept")
	for _, pid := range []string{gone, kept} {
		createWebhook(t, e, pid, "http://127.0.0.1:9/hook", "*")
		e.CreateSkill(e.Admin, pid, "pdf")
	}
	dir := func(pid string) string { return filepath.Join(root, "_events", pid) }
	for _, pid := range []string{gone, kept} {
		for _, f := range []string{"events.jsonl", "intents.jsonl", "webhooks"} {
			if _, err := os.Stat(filepath.Join(dir(pid), f)); err != nil {
				t.Fatalf("before the delete: %v", err)
			}
		}
	}
	e.Must(204, "DELETE", "/v1/projects/"+gone, e.Admin, nil)
	if _, err := os.Stat(dir(gone)); !os.IsNotExist(err) {
		t.Errorf("a deleted project's events stay: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir(kept), "events.jsonl")); err != nil {
		t.Errorf("another project's events went too: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(root, "_events", ".trash-*")); len(leftovers) > 0 {
		t.Errorf("left behind: %v", leftovers)
	}
	evs := arr(t, e.Must(200, "GET", "/v1/projects/"+kept+"/events?limit=50", e.Admin, nil).JSON(t), "events")
	if len(evs) != 1 || str(t, evs[0], "type") != "asset.created" {
		t.Errorf("the kept project's events: %v", evs)
	}
}
