package crashtest

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Each epoch starts from an empty data root and runs up to epochTrials
// kill-and-restart trials against it, so the repositories the checks walk
// stay small however many trials run.
const (
	epochTrials = 25
	workers     = 6
	maxKillWait = 1500 * time.Millisecond
)

// TestCrashRecovery drives concurrent writes into a quire process, kills
// it with SIGKILL at a random moment (one trial in ten: SIGTERM), and
// after each death checks that
//
//   - every repository under the data root passes git fsck --strict and
//     has no ref naming a missing object;
//   - the server starts again and serves reads and writes;
//   - every acknowledged write is there, read back through git and the API,
//     and nothing is there that was neither acknowledged nor in flight.
//
// Odd trials run the server with --fsync.
func TestCrashRecovery(t *testing.T) {
	bin := quireBinary(t)
	seed := *flagSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	n := trials()
	t.Logf("crash test: %d trials, seed %d (rerun with -args -crash.seed=%d)", n, seed, seed)
	rng := rand.New(rand.NewSource(seed))
	var tot totals
	for trial, epoch := 0, 0; trial < n; epoch++ {
		root, err := os.MkdirTemp("", fmt.Sprintf("quire-crash-%d-", epoch))
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{t: t, bin: bin, root: root, rng: rand.New(rand.NewSource(rng.Int63())), m: newModel(), totals: &tot}
		k := min(epochTrials, n-trial)
		ok := h.epoch(trial, k)
		tot.applied.Add(int64(h.m.applied))
		trial += k
		if !ok {
			t.Logf("data root kept for inspection: %s", root)
			break
		}
		if *flagKeep {
			t.Logf("data root: %s", root)
		} else {
			os.RemoveAll(root)
		}
	}
	t.Logf("crash test: %d trials (%d SIGKILL, %d SIGTERM, %d during first start); %d writes acknowledged, %d in flight at a death (%d changes found applied); %d fsck runs; %d harmless leftovers seen",
		tot.trials.Load(), tot.kills.Load(), tot.terms.Load(), tot.bootKills.Load(), tot.acked.Load(), tot.inflight.Load(), tot.applied.Load(), tot.fscks.Load(), tot.leftovers.Load())
}

type totals struct {
	trials, kills, terms, bootKills atomic.Int64
	acked, inflight, applied, fscks atomic.Int64
	leftovers                       atomic.Int64 // staged refs, .init-*, .trash-* seen after deaths
}

type harness struct {
	t      *testing.T
	bin    string
	root   string
	rng    *rand.Rand
	m      *model
	totals *totals

	token   string // an admin-scope API key: survives restarts, unlike sessions
	project string
	owned   []*ownedSkill
	shared  skillRec
	sdraft  int                 // the shared draft every worker writes into
	views   map[string]*gitView // skill id -> git's view at the last check
}

// ownedSkill is a skill only one worker changes, so its expected state is
// exact.
type ownedSkill struct {
	skillRec
	draft int // the worker's current draft, 0 when it has none
}

// epoch runs trials first..first+k-1 on a fresh data root.
func (h *harness) epoch(first, k int) bool {
	t := h.t
	if h.rng.Intn(2) == 0 {
		// Kill the very first start at a random moment: the system
		// repository and the first admin may be half made.
		srv, err := startServer(t, h.bin, h.root, h.rng.Intn(2) == 0, false)
		if err != nil {
			t.Error(err)
			return false
		}
		time.Sleep(time.Duration(h.rng.Int63n(int64(400 * time.Millisecond)))) // a random kill moment, by design
		srv.kill()
		h.totals.bootKills.Add(1)
		if !h.checkDisk("after a kill during first start") {
			return false
		}
	}
	srv, err := startServer(t, h.bin, h.root, false, true)
	if err != nil {
		t.Error(err)
		return false
	}
	if err := h.setup(srv); err != nil {
		t.Errorf("setup: %v\nserver log:\n%s", err, srv.logs.Tail(3000))
		srv.kill()
		return false
	}
	for i := 0; i < k; i++ {
		trial := first + i
		fsync := trial%2 == 1
		graceful := h.rng.Intn(10) == 0
		wait := time.Duration(h.rng.Int63n(int64(maxKillWait)))
		if err := h.load(srv, trial, wait, graceful); err != nil {
			t.Errorf("trial %d: %v\nserver log:\n%s", trial, err, srv.logs.Tail(3000))
			return false
		}
		if bad := srv.logs.Lines("WARNING: DATA RACE"); len(bad) > 0 || len(srv.logs.Lines("panic")) > 0 {
			t.Errorf("trial %d: the server reported a data race or a panic:\n%s", trial, srv.logs.Tail(8000))
			return false
		}
		h.totals.trials.Add(1)
		if graceful {
			h.totals.terms.Add(1)
		} else {
			h.totals.kills.Add(1)
		}
		if !h.checkDisk(fmt.Sprintf("trial %d, after the %s", trial, map[bool]string{true: "SIGTERM", false: "SIGKILL"}[graceful])) {
			return false
		}
		if srv, err = startServer(t, h.bin, h.root, fsync, true); err != nil {
			t.Errorf("trial %d: restart: %v", trial, err)
			return false
		}
		if err := h.verify(srv, i == k-1); err != nil {
			t.Errorf("trial %d: after restart: %v\nserver log:\n%s", trial, err, srv.logs.Tail(3000))
			srv.kill()
			return false
		}
	}
	if err := srv.stop(); err != nil {
		t.Error(err)
		return false
	}
	return h.checkDisk("after the final graceful stop")
}

// checkDisk runs fsck over the data root and reads git's view of every
// skill the model knows.
func (h *harness) checkDisk(when string) bool {
	rep, err := checkDisk(h.root)
	h.totals.fscks.Add(int64(rep.repos))
	if err != nil {
		h.t.Errorf("%s: %v", when, err)
		return false
	}
	// quire stages refs outside refs/, so a <ref>.lock there (which go-git
	// would list as a ref, or fail on when empty) is a bug.
	if len(rep.refLocks) > 0 {
		h.t.Errorf("%s: lock files under refs/: %v", when, rep.refLocks)
		return false
	}
	h.totals.leftovers.Add(int64(len(rep.staged) + len(rep.initDirs) + len(rep.trashDirs)))
	h.views = map[string]*gitView{}
	var bad []string
	for _, s := range h.skillsToCheck() {
		v, err := readGitView(filepath.Join(h.root, s.projectID, "skills", s.id+".git"))
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		h.views[s.id] = v
		bad = append(bad, h.m.checkRepo(s.id, v)...)
	}
	if len(bad) > 0 {
		h.t.Errorf("%s: acknowledged writes lost or unexpected writes found:\n  %s", when, strings.Join(bad, "\n  "))
		return false
	}
	return true
}

func (h *harness) skillsToCheck() []skillRec {
	var out []skillRec
	for _, o := range h.owned {
		out = append(out, o.skillRec)
	}
	if h.shared.id != "" {
		out = append(out, h.shared)
	}
	return out
}

// setup logs in, makes the API key every later request uses, a project,
// one skill per worker and a shared skill with an open draft.
func (h *harness) setup(srv *server) error {
	c := newClient(srv.URL, "")
	defer c.close()
	r, err := c.call("POST", "/v1/auth/login", map[string]string{"email": adminEmail, "password": adminPassword})
	if err != nil {
		return err
	}
	if err := expect(r, 200, "login"); err != nil {
		return err
	}
	var login struct{ Token string }
	if err := r.decode(&login); err != nil {
		return err
	}
	c = c.with(login.Token)
	r, err = c.call("POST", "/v1/api-keys", map[string]string{"name": "crash harness", "scope": "admin"})
	if err != nil {
		return err
	}
	if err := expect(r, 201, "create admin key"); err != nil {
		return err
	}
	var key struct {
		Token  string
		APIKey struct{ ID string } `json:"api_key"`
	}
	if err := r.decode(&key); err != nil {
		return err
	}
	h.token = key.Token
	h.m.addKey(keyRec{key.APIKey.ID, key.Token})
	c = c.with(h.token)

	w := &worker{h: h, c: c, rng: h.rng}
	if h.project, err = w.createProject("crash"); err != nil {
		return err
	}
	for i := 0; i < workers; i++ {
		s, err := w.createSkill(h.project, fmt.Sprintf("skill-%d", i))
		if err != nil {
			return err
		}
		h.owned = append(h.owned, &ownedSkill{skillRec: s})
	}
	if h.shared, err = w.createSkill(h.project, "shared"); err != nil {
		return err
	}
	h.sdraft, err = w.createDraft(h.shared.id)
	return err
}

// load runs the workers against srv and kills it (or, when graceful,
// stops it with SIGTERM) after wait.
func (h *harness) load(srv *server, trial int, wait time.Duration, graceful bool) error {
	c := newClient(srv.URL, h.token)
	defer c.close()
	// Reconcile the workers with what the last check found: a draft whose
	// publish or archive was in flight may be gone.
	for _, o := range h.owned {
		if o.draft != 0 && h.m.state(o.id, o.draft) != "draft" {
			o.draft = 0
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(h.owned))
	for i, o := range h.owned {
		w := &worker{h: h, c: c, id: i, trial: trial, own: o, rng: rand.New(rand.NewSource(h.rng.Int63()))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.run()
		}()
	}
	time.Sleep(wait) // the random moment of the kill: the behavior under test
	var stopErr error
	if graceful {
		stopErr = srv.stop()
	} else {
		srv.kill()
	}
	wg.Wait()
	return errors.Join(append(errs, stopErr)...)
}

// verify checks, after a restart, that the server serves what git holds:
// every version's state and commit, a sample of files (all of them when
// full), every project, skill and API key.
func (h *harness) verify(srv *server, full bool) error {
	c := newClient(srv.URL, h.token)
	defer c.close()
	if r, err := c.call("GET", "/readyz", nil); err != nil {
		return err
	} else if err := expect(r, 200, "readyz"); err != nil {
		return err
	}
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()

	for _, s := range h.skillsToCheck() {
		r, err := c.call("GET", "/v1/skills/"+s.id+"/versions?limit=500", nil)
		if err != nil {
			return err
		}
		if err := expect(r, 200, "list versions"); err != nil {
			return err
		}
		var list struct {
			Versions []struct {
				Version int
				State   string
				Commit  string
				Live    bool
			}
		}
		if err := r.decode(&list); err != nil {
			return err
		}
		seen := map[int]bool{}
		g := h.views[s.id]
		main := g.refs["refs/heads/main"].commit
		for _, v := range list.Versions {
			if seen[v.Version] {
				return fmt.Errorf("skill %s: version %d listed twice", s.slug, v.Version)
			}
			seen[v.Version] = true
			state, commit := g.version(v.Version)
			if v.State != state || v.Commit != commit {
				return fmt.Errorf("skill %s: API says version %d is %s at %s; git says %s at %s", s.slug, v.Version, v.State, v.Commit, state, commit)
			}
			if live := state == "published" && commit == main; v.Live != live {
				return fmt.Errorf("skill %s: API says version %d live=%v; git says %v", s.slug, v.Version, v.Live, live)
			}
		}
		for k := range m.versions {
			if k.skill == s.id && !seen[k.n] {
				return fmt.Errorf("skill %s: acknowledged version %d is not listed", s.slug, k.n)
			}
		}
		if err := h.checkProjectRepo(s, main); err != nil {
			return err
		}
	}

	// Files: those written in the last trial and a random sample (all when full).
	var keys []fileKey
	for k := range m.files {
		if full || m.touched[k] || h.rng.Intn(20) == 0 {
			keys = append(keys, k)
		}
	}
	m.touched = map[fileKey]bool{}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		want := m.files[k].acked
		r, err := c.call("GET", "/v1/skills/"+k.skill+"/versions/"+strconv.Itoa(k.version)+"/files/"+k.path, nil)
		if err != nil {
			return err
		}
		switch {
		case want.present && (r.status != 200 || string(r.body) != want.data):
			return fmt.Errorf("GET file %v: %d %.200q, want %v", k, r.status, r.body, want)
		case !want.present && r.status != 404:
			return fmt.Errorf("GET deleted file %v: %d %.200q, want 404", k, r.status, r.body)
		}
	}

	// Metadata: through the API and in the system repository's tree.
	tree, err := git(filepath.Join(h.root, "_system.git"), nil, "ls-tree", "-r", "--name-only", "main")
	if err != nil {
		return err
	}
	paths := map[string]bool{}
	for _, p := range strings.Split(string(tree), "\n") {
		paths[p] = true
	}
	inSystem := func(dir, id string) error {
		if !paths[dir+"/"+id[:2]+"/"+id+".json"] {
			return fmt.Errorf("acknowledged %s %s is not in _system.git", dir, id)
		}
		return nil
	}
	for i, p := range m.projects {
		if err := inSystem("projects", p.id); err != nil {
			return err
		}
		if !full && i%7 != 0 {
			continue
		}
		r, err := c.call("GET", "/v1/projects/"+p.id, nil)
		if err != nil {
			return err
		}
		var out struct{ Project struct{ Slug string } }
		if err := expect(r, 200, "get project"); err != nil {
			return err
		}
		if err := r.decode(&out); err != nil || out.Project.Slug != p.slug {
			return fmt.Errorf("project %s: slug %q (%v), want %q", p.id, out.Project.Slug, err, p.slug)
		}
	}
	for i, s := range m.skills {
		if err := inSystem("skills", s.id); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(h.root, s.projectID, "skills", s.id+".git", "HEAD")); err != nil {
			return fmt.Errorf("acknowledged skill %s has no repository: %v", s.slug, err)
		}
		if !full && i%7 != 0 {
			continue
		}
		r, err := c.call("GET", "/v1/skills/"+s.id, nil)
		if err != nil {
			return err
		}
		if err := expect(r, 200, "get skill "+s.slug); err != nil {
			return err
		}
	}
	for i, k := range m.keys {
		if err := inSystem("apikeys", k.id); err != nil {
			return err
		}
		if !full && i%7 != 0 {
			continue
		}
		r, err := c.with(k.token).call("GET", "/v1/auth/me", nil)
		if err != nil {
			return err
		}
		if err := expect(r, 200, "GET /v1/auth/me with an acknowledged API key"); err != nil {
			return err
		}
	}
	return nil
}

// checkProjectRepo checks that the project repository of skill s holds
// its live version (main, "" for none) under skills/<slug>: whatever the
// kill interrupted between a publish and the view, start-up mended.
func (h *harness) checkProjectRepo(s skillRec, main string) error {
	proj := filepath.Join(h.root, s.projectID, "project.git")
	got, err := git(proj, nil, "rev-parse", "-q", "--verify", "main:skills/"+s.slug)
	if main == "" {
		if err == nil {
			return fmt.Errorf("skill %s has no live version, yet the project repository holds it", s.slug)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("skill %s: live at %s, not in the project repository: %v", s.slug, main, err)
	}
	want, err := git(filepath.Join(h.root, s.projectID, "skills", s.id+".git"), nil, "rev-parse", main+"^{tree}")
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(got)) != strings.TrimSpace(string(want)) {
		return fmt.Errorf("skill %s: the project repository holds tree %s, the live version %s", s.slug, strings.TrimSpace(string(got)), strings.TrimSpace(string(want)))
	}
	return nil
}

// worker writes through one client until the server stops answering.
type worker struct {
	h     *harness
	c     *client
	rng   *rand.Rand
	id    int
	trial int
	seq   int
	own   *ownedSkill
}

// run returns nil when the server went away, an error when it answered
// wrongly.
func (w *worker) run() error {
	for {
		err := w.step()
		var te *errTransport
		if errors.As(err, &te) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("worker %d: %w", w.id, err)
		}
	}
}

var ownedPaths = []string{"SKILL.md", "notes.txt", "scripts/run.py", "scripts/lib/util.py", "docs/a.md", "docs/b.md"}

func (w *worker) step() error {
	o := w.own
	if o.draft == 0 {
		n, err := w.createDraft(o.id)
		if err != nil {
			return err
		}
		o.draft = n
		return nil
	}
	if !w.h.m.file(fileKey{o.id, o.draft, "SKILL.md"}).present {
		return w.upsert(o.id, o.draft, "SKILL.md", manifest(o.slug, w.unique()))
	}
	switch r := w.rng.Intn(100); {
	case r < 50:
		p := ownedPaths[1+w.rng.Intn(len(ownedPaths)-1)]
		return w.upsert(o.id, o.draft, p, w.unique())
	case r < 53:
		return w.upsert(o.id, o.draft, "SKILL.md", manifest(o.slug, w.unique()))
	case r < 58:
		p := ownedPaths[1+w.rng.Intn(len(ownedPaths)-1)]
		if !w.h.m.file(fileKey{o.id, o.draft, p}).present {
			return w.upsert(o.id, o.draft, p, w.unique())
		}
		return w.deleteFile(o.id, o.draft, p)
	case r < 66:
		return w.publish(o)
	case r < 70:
		n, err := w.createDraft(o.id) // the old draft stays open, untouched
		if err == nil {
			o.draft = n
		}
		return err
	case r < 72:
		return w.archive(o)
	case r < 85:
		p := fmt.Sprintf("w%d/f%d.txt", w.id, w.rng.Intn(4))
		return w.upsert(w.h.shared.id, w.h.sdraft, p, w.unique())
	case r < 91:
		return w.createKey()
	case r < 96:
		w.seq++
		_, err := w.createProject(fmt.Sprintf("p-%d-%d-%d", w.trial, w.id, w.seq))
		return err
	default:
		w.seq++
		_, err := w.createSkill(w.h.project, fmt.Sprintf("s-%d-%d-%d", w.trial, w.id, w.seq))
		return err
	}
}

func (w *worker) unique() string {
	w.seq++
	return fmt.Sprintf("trial %d worker %d write %d %x\n", w.trial, w.id, w.seq, w.rng.Uint64())
}

func manifest(slug, note string) string {
	return "---\nname: " + slug + "\ndescription: Crash test skill.\n---\n# " + slug + "\n\n" + note
}

func (w *worker) upsert(skill string, n int, path, data string) error {
	k := fileKey{skill, n, path}
	r, err := w.c.call("POST", fmt.Sprintf("/v1/skills/%s/versions/%d/files", skill, n), map[string]string{"file_path": path, "content": data})
	if err != nil {
		w.h.m.write(k, content{true, data}, false, "")
		w.h.totals.inflight.Add(1)
		return err
	}
	if err := expect(r, 200, "upsert "+path); err != nil {
		return err
	}
	var out struct{ Version struct{ Commit string } }
	if err := r.decode(&out); err != nil {
		return err
	}
	w.h.m.write(k, content{true, data}, true, out.Version.Commit)
	w.h.totals.acked.Add(1)
	return nil
}

func (w *worker) deleteFile(skill string, n int, path string) error {
	k := fileKey{skill, n, path}
	r, err := w.c.call("DELETE", fmt.Sprintf("/v1/skills/%s/versions/%d/files/%s", skill, n, path), nil)
	if err != nil {
		w.h.m.write(k, content{}, false, "")
		w.h.totals.inflight.Add(1)
		return err
	}
	if err := expect(r, 200, "delete "+path); err != nil {
		return err
	}
	var out struct{ Version struct{ Commit string } }
	if err := r.decode(&out); err != nil {
		return err
	}
	w.h.m.write(k, content{}, true, out.Version.Commit)
	w.h.totals.acked.Add(1)
	return nil
}

func (w *worker) createDraft(skill string) (int, error) {
	r, err := w.c.call("POST", "/v1/skills/"+skill+"/versions", nil)
	if err != nil {
		w.h.totals.inflight.Add(1)
		return 0, err // an unknown draft is left alone
	}
	if err := expect(r, 201, "create version"); err != nil {
		return 0, err
	}
	var out struct {
		Version struct {
			Version int
			Commit  string
			Base    int `json:"base_version"`
		}
	}
	if err := r.decode(&out); err != nil {
		return 0, err
	}
	w.h.totals.acked.Add(1)
	v := out.Version
	return v.Version, w.h.m.newVersion(skill, v.Version, v.Base, v.Commit)
}

func (w *worker) publish(o *ownedSkill) error {
	n := o.draft
	tip := w.h.m.tip(o.id, n)
	r, err := w.c.call("POST", fmt.Sprintf("/v1/skills/%s/versions/%d/publish", o.id, n), nil)
	if err != nil {
		w.h.m.transition(o.id, n, "published", false)
		w.h.m.setLive(o.id, tip, false)
		w.h.totals.inflight.Add(1)
		return err
	}
	if err := expect(r, 200, "publish"); err != nil {
		return err
	}
	var out struct {
		Version struct {
			Commit string
			Live   bool
		}
	}
	if err := r.decode(&out); err != nil {
		return err
	}
	if out.Version.Commit != tip || !out.Version.Live {
		return fmt.Errorf("publish answered commit %s live=%v; the draft was at %s", out.Version.Commit, out.Version.Live, tip)
	}
	w.h.m.transition(o.id, n, "published", true)
	w.h.m.setLive(o.id, tip, true)
	w.h.totals.acked.Add(1)
	o.draft = 0
	return nil
}

func (w *worker) archive(o *ownedSkill) error {
	n := o.draft
	r, err := w.c.call("POST", fmt.Sprintf("/v1/skills/%s/versions/%d/archive", o.id, n), nil)
	if err != nil {
		w.h.m.transition(o.id, n, "archived", false)
		w.h.totals.inflight.Add(1)
		return err
	}
	if err := expect(r, 200, "archive"); err != nil {
		return err
	}
	w.h.m.transition(o.id, n, "archived", true)
	w.h.totals.acked.Add(1)
	o.draft = 0
	return nil
}

func (w *worker) createKey() error {
	r, err := w.c.call("POST", "/v1/api-keys", map[string]string{"name": fmt.Sprintf("key %d/%d", w.trial, w.id), "scope": "read"})
	if err != nil {
		w.h.totals.inflight.Add(1)
		return err
	}
	if err := expect(r, 201, "create API key"); err != nil {
		return err
	}
	var out struct {
		Token  string
		APIKey struct{ ID string } `json:"api_key"`
	}
	if err := r.decode(&out); err != nil {
		return err
	}
	w.h.m.addKey(keyRec{out.APIKey.ID, out.Token})
	w.h.totals.acked.Add(1)
	return nil
}

func (w *worker) createProject(slug string) (string, error) {
	r, err := w.c.call("POST", "/v1/projects", map[string]string{"name": "Project " + slug, "slug": slug})
	if err != nil {
		w.h.totals.inflight.Add(1)
		return "", err
	}
	if err := expect(r, 201, "create project"); err != nil {
		return "", err
	}
	var out struct{ Project struct{ ID string } }
	if err := r.decode(&out); err != nil {
		return "", err
	}
	w.h.m.addProject(projRec{out.Project.ID, slug})
	w.h.totals.acked.Add(1)
	return out.Project.ID, nil
}

func (w *worker) createSkill(project, slug string) (skillRec, error) {
	r, err := w.c.call("POST", "/v1/projects/"+project+"/skills", map[string]string{"name": "Skill " + slug, "slug": slug, "description": "crash test"})
	if err != nil {
		w.h.totals.inflight.Add(1)
		return skillRec{}, err
	}
	if err := expect(r, 201, "create skill"); err != nil {
		return skillRec{}, err
	}
	var out struct{ Skill struct{ ID string } }
	if err := r.decode(&out); err != nil {
		return skillRec{}, err
	}
	s := skillRec{id: out.Skill.ID, slug: slug, projectID: project}
	w.h.m.addSkill(s)
	w.h.totals.acked.Add(1)
	return s, nil
}
