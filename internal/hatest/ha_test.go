package hatest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire/internal/redistest"
)

// loadFor is how long the mixed load runs: QUIRE_HA_SECONDS, else 60 s,
// or 20 s with -short (CI).
func loadFor() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("QUIRE_HA_SECONDS")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if testing.Short() {
		return 20 * time.Second
	}
	return 60 * time.Second
}

// downAfter is Sentinel's down-after-milliseconds: how long a silent
// primary is given before the Sentinels fail it over.
const downAfter = 1500 * time.Millisecond

// maxWindow is the longest a client may see errors around the failover.
const maxWindow = 15 * time.Second

// event is one thing a client saw go wrong.
type event struct {
	at   time.Time
	what string
}

// run is the shared state of one test run.
type run struct {
	t     *testing.T
	lb    *balancer
	token string // an admin API key: lives in git, not in Redis
	sess  string // a login session: lives in Redis

	mu       sync.Mutex
	errs     []event  // answers a client should not have had
	lost     []event  // requests sent to a node as it died: outcome unknown
	stale    []event  // reads older than a write acknowledged before they began
	sessGone []event  // the session refused as unknown (401)
	pushed   []string // files whose git push was acknowledged
	ops      map[string]int

	liveAcked atomic.Int64 // the newest prompt version whose publish was acknowledged
	// templates holds the template of each version whose creation was
	// acknowledged (a lost request may have made one of another number).
	templates sync.Map // int -> string
}

func (r *run) note(list *[]event, format string, args ...any) {
	r.mu.Lock()
	*list = append(*list, event{time.Now(), fmt.Sprintf(format, args...)})
	r.mu.Unlock()
}

func (r *run) count(op string) {
	r.mu.Lock()
	r.ops[op]++
	r.mu.Unlock()
}

// failed records an unwanted answer: lost when nothing came back.
func (r *run) failed(op string, rep reply) {
	if rep.Lost != nil {
		r.note(&r.lost, "%s: %s", op, rep)
		return
	}
	r.note(&r.errs, "%s: %s", op, rep)
}

// TestHighAvailability is the failure test: three quire nodes on
// one data root, each through a path of its own (a symlink), Redis as a
// primary, a replica and three Sentinels; under a steady mixed load, a
// node is SIGKILLed and restarted, the Redis primary is SIGKILLed and
// Sentinel promotes the replica, and a Sentinel is killed.
func TestHighAvailability(t *testing.T) {
	bin := quireBinary(t)
	redistest.Binary(t)
	start := time.Now()
	rd := redistest.StartSentinel(t, "quire", 1, 3, downAfter)
	t.Logf("redis: primary %s, replica %s, sentinels %v (%.1fs to start)", rd.Primary.Addr, rd.Replicas[0].Addr, rd.SentinelAddrs(), time.Since(start).Seconds())

	tmp := t.TempDir()
	root := filepath.Join(tmp, "data")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	var nodes []*node
	for i := range 3 {
		view := filepath.Join(tmp, fmt.Sprintf("node%d-view", i))
		if err := os.Symlink(root, view); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, newNode(fmt.Sprintf("node%d", i), bin, []string{
			"--data", view,
			"--redis-sentinel-master", "quire", "--redis-sentinel-addrs", strings.Join(rd.SentinelAddrs(), ","),
			"--redis-prefix", "hatest:", "--usage-flush", "2s", "--log-level", "info",
			"--rate-limit", "0", "--login-limit", "0", "--login-address-limit", "0",
		}, []string{"QUIRE_ADMIN_EMAIL=" + adminEmail, "QUIRE_ADMIN_PASSWORD=" + adminPassword}))
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.Kill()
		}
	})
	// The first node creates the admin; the others start on its data root.
	for _, n := range nodes {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	r := &run{t: t, lb: newBalancer(nodes), ops: map[string]int{}}
	setup := r.setup(nodes)

	// The session is on the replica: quire waited for it (WAIT 1) before
	// answering the login. The test asks nothing of Redis itself here.

	d := loadFor()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); r.writer(stop, setup, w) }()
	}
	wg.Add(4)
	go func() { defer wg.Done(); r.publisher(stop, setup) }()
	go func() { defer wg.Done(); r.renderer(stop, setup) }()
	go func() { defer wg.Done(); r.sessionChecker(stop) }()
	go func() { defer wg.Done(); r.fetcher(stop, setup, nodes, filepath.Join(tmp, "fetched.git")) }()
	wg.Add(1)
	go func() { defer wg.Done(); r.pusher(stop, setup, nodes, filepath.Join(tmp, "push-clone")) }()
	ready := &readiness{}
	wg.Add(1)
	go func() { defer wg.Done(); ready.poll(stop, r.lb, nodes[0]) }()

	loadStart := time.Now()
	at := func(frac float64) { time.Sleep(time.Until(loadStart.Add(time.Duration(frac * float64(d))))) }

	at(0.2)
	t.Logf("%5.1fs SIGKILL %s and restart it", time.Since(loadStart).Seconds(), nodes[1].Name)
	nodes[1].Kill()
	if err := nodes[1].Start(); err != nil {
		t.Fatal(err)
	}

	at(0.4)
	oldPrimary := rd.PrimaryAddr(t)
	redisKill := time.Now()
	t.Logf("%5.1fs SIGKILL the Redis primary %s", time.Since(loadStart).Seconds(), oldPrimary)
	rd.Primary.Kill()
	redistest.WaitFor(t, maxWindow, "Sentinel to promote the replica", func() bool {
		a := rd.PrimaryAddr(t)
		return a != "" && a != oldPrimary
	})
	promoted := time.Now()
	t.Logf("%5.1fs Sentinel promoted %s (%.1fs after the kill)", time.Since(loadStart).Seconds(), rd.PrimaryAddr(t), promoted.Sub(redisKill).Seconds())

	at(0.7)
	t.Logf("%5.1fs SIGKILL Sentinel %s", time.Since(loadStart).Seconds(), rd.Sentinels[0].Addr)
	rd.Sentinels[0].Kill()

	at(1)
	close(stop)
	wg.Wait()
	t.Logf("%5.1fs load stopped", time.Since(loadStart).Seconds())

	r.verify(nodes, root, setup, redisKill, ready)
}

// setupState is what the load works on.
type setupState struct {
	project string
	skills  []string // one per writer, each with draft 1
	prompt  string
	slug    []string
	// push is a skill whose draft 1 only the pusher moves, by git push.
	push, pushSlug string
}

func (r *run) setup(nodes []*node) *setupState {
	t := r.t
	var login struct{ Token string }
	decode(t, r.lb.Do("POST", "/v1/auth/login", "", map[string]string{"email": adminEmail, "password": adminPassword}), 200, &login)
	r.sess = login.Token
	var key struct{ Token string }
	decode(t, r.lb.Do("POST", "/v1/api-keys", r.sess, map[string]string{"name": "ha", "scope": "admin"}), 201, &key)
	r.token = key.Token
	s := &setupState{}
	var p struct{ Project struct{ ID string } }
	decode(t, r.lb.Do("POST", "/v1/projects", r.token, map[string]string{"name": "HA", "slug": "ha"}), 201, &p)
	s.project = p.Project.ID
	for w := range 2 {
		slug := fmt.Sprintf("skill-%d", w)
		var sk struct{ Skill struct{ ID string } }
		decode(t, r.lb.Do("POST", "/v1/projects/"+s.project+"/skills", r.token, map[string]string{"name": "Skill " + slug, "slug": slug, "description": "ha"}), 201, &sk)
		decode(t, r.lb.Do("POST", "/v1/skills/"+sk.Skill.ID+"/versions", r.token, nil), 201, nil)
		s.skills = append(s.skills, sk.Skill.ID)
		s.slug = append(s.slug, slug)
	}
	var sk struct{ Skill struct{ ID string } }
	s.pushSlug = "pushed"
	decode(t, r.lb.Do("POST", "/v1/projects/"+s.project+"/skills", r.token, map[string]string{"name": "Pushed", "slug": s.pushSlug, "description": "ha"}), 201, &sk)
	decode(t, r.lb.Do("POST", "/v1/skills/"+sk.Skill.ID+"/versions", r.token, nil), 201, nil)
	s.push = sk.Skill.ID
	var pr struct{ Prompt struct{ ID string } }
	decode(t, r.lb.Do("POST", "/v1/projects/"+s.project+"/prompts", r.token, map[string]string{"name": "Greeting"}), 201, &pr)
	s.prompt = pr.Prompt.ID
	decode(t, r.lb.Do("POST", "/v1/prompts/"+s.prompt+"/versions", r.token, map[string]string{"template": "t1 {{name}}"}), 201, nil)
	r.templates.Store(1, "t1 {{name}}")
	decode(t, r.lb.Do("POST", "/v1/prompts/"+s.prompt+"/versions/1/publish", r.token, nil), 200, nil)
	r.liveAcked.Store(1)
	// Every node answers with what another wrote, from the first request.
	for _, n := range nodes {
		var me struct{}
		decode(t, r.lb.At(n, "GET", "/v1/auth/me", r.sess, nil), 200, &me)
		decode(t, r.lb.At(n, "POST", "/v1/prompts/"+s.prompt+"/render", r.token, map[string]any{"variables": map[string]string{"name": "x"}}), 200, nil)
	}
	return s
}

// files each writer cycles through: a draft holds at most 1,000 files.
const files = 50

// acked holds, per writer, the last acknowledged content of each path.
var ackedMu sync.Mutex
var acked = map[string]map[string]int{} // skill id -> path -> sequence

func (r *run) writer(stop <-chan struct{}, s *setupState, w int) {
	skill := s.skills[w]
	ackedMu.Lock()
	acked[skill] = map[string]int{}
	ackedMu.Unlock()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		path := fmt.Sprintf("notes/f%02d.txt", i%files)
		content := fmt.Sprintf("writer %d write %d\n", w, i)
		rep := r.lb.Do("POST", "/v1/skills/"+skill+"/versions/1/files", r.token, map[string]string{"file_path": path, "content": content})
		r.count("upsert")
		if rep.Lost != nil || rep.Status != 200 {
			r.failed("upsert", rep)
			continue
		}
		ackedMu.Lock()
		acked[skill][path] = i
		ackedMu.Unlock()
		// Read it back through the balancer (another node, as a rule):
		// it must be this write, acknowledged before the read began.
		back := r.lb.Do("GET", "/v1/skills/"+skill+"/versions/1/files/"+path, r.token, nil)
		r.count("read")
		if back.Lost != nil || back.Status != 200 {
			r.failed("read", back)
			continue
		}
		if string(back.Body) != content {
			r.note(&r.stale, "read %s from %s: %q, acknowledged %q", path, back.Node, back.Body, content)
		}
	}
}

func (r *run) publisher(stop <-chan struct{}, s *setupState) {
	for attempt := 2; ; attempt++ {
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
		tmpl := fmt.Sprintf("t%d {{name}}", attempt)
		rep := r.lb.Do("POST", "/v1/prompts/"+s.prompt+"/versions", r.token, map[string]string{"template": tmpl})
		r.count("create version")
		if rep.Lost != nil || rep.Status != 201 {
			r.failed("create version", rep)
			continue
		}
		var v struct {
			Version struct {
				Number int `json:"version"`
			} `json:"version"`
		}
		if err := json.Unmarshal(rep.Body, &v); err != nil || v.Version.Number == 0 {
			r.note(&r.errs, "create version: no number in %s", rep)
			continue
		}
		n := v.Version.Number
		r.templates.Store(n, tmpl)
		rep = r.lb.Do("POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", s.prompt, n), r.token, nil)
		r.count("publish")
		if rep.Lost != nil || rep.Status != 200 {
			r.failed("publish", rep)
			continue
		}
		r.liveAcked.Store(int64(n))
	}
}

func (r *run) renderer(stop <-chan struct{}, s *setupState) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		before := r.liveAcked.Load()
		rep := r.lb.Do("POST", "/v1/prompts/"+s.prompt+"/render", r.token, map[string]any{"variables": map[string]string{"name": "Ada"}})
		r.count("render")
		if rep.Lost != nil || rep.Status != 200 {
			r.failed("render", rep)
			continue
		}
		var out struct {
			Version  int
			Rendered string
		}
		json.Unmarshal(rep.Body, &out)
		if int64(out.Version) < before {
			r.note(&r.stale, "render on %s: version %d %q, publish of %d acknowledged before", rep.Node, out.Version, out.Rendered, before)
		}
		if tmpl, ok := r.templates.Load(out.Version); ok && strings.Replace(tmpl.(string), "{{name}}", "Ada", 1) != out.Rendered {
			r.note(&r.errs, "render on %s: version %d rendered %q from template %q", rep.Node, out.Version, out.Rendered, tmpl)
		}
	}
}

// sessionChecker uses the login session made before the failover.
func (r *run) sessionChecker(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		rep := r.lb.Do("GET", "/v1/auth/me", r.sess, nil)
		r.count("session")
		switch {
		case rep.Lost == nil && rep.Status == 200:
		case rep.Lost == nil && rep.Status == 401:
			r.note(&r.sessGone, "session refused: %s", rep)
		default:
			r.failed("session", rep)
		}
	}
}

// gitURL is the smart-HTTP address of a skill on node n, with the token.
func (r *run) gitURL(n *node, slug string) string {
	return strings.Replace(n.URL(), "http://", "http://git:"+r.token+"@", 1) + "/git/ha/skills/" + slug + ".git"
}

// gitAt runs the stock git client against node n; a failure while n is
// down (or going down) is a request lost with the node, not an error.
func (r *run) gitAt(n *node, op, dir string, args ...string) (string, bool) {
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.Name=HA", "-c", "user.email=ha@example.com"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	r.count(op)
	if err == nil {
		return string(out), true
	}
	if !n.Up.Load() || strings.Contains(string(out), "Failed to connect") || strings.Contains(string(out), "Empty reply") {
		r.note(&r.lost, "%s on %s: %s", op, n.Name, out)
	} else {
		r.note(&r.errs, "%s on %s: %v %s", op, n.Name, err, out)
	}
	return string(out), false
}

// nextUp returns the i-th node that is up, round robin.
func nextUp(nodes []*node, i int) *node {
	for k := range nodes {
		if n := nodes[(i+k)%len(nodes)]; n.Up.Load() {
			return n
		}
	}
	return nil
}

// fetcher fetches writer 0's draft with the stock git client (smart HTTP,
// upload-pack) from each node in turn: the fetched commit must hold every
// upsert acknowledged before the fetch began.
func (r *run) fetcher(stop <-chan struct{}, s *setupState, nodes []*node, dir string) {
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		r.note(&r.errs, "git init: %v %s", err, out)
		return
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
		n := nextUp(nodes, i)
		if n == nil {
			continue
		}
		ackedMu.Lock()
		before := map[string]int{}
		for p, seq := range acked[s.skills[0]] {
			before[p] = seq
		}
		ackedMu.Unlock()
		if _, ok := r.gitAt(n, "git fetch", dir, "fetch", "-q", r.gitURL(n, s.slug[0]), "+refs/heads/draft/1:refs/heads/fetched"); !ok {
			continue
		}
		for p, seq := range before {
			got, err := gitOut(dir, "show", "refs/heads/fetched:"+p)
			var w, k int
			if _, serr := fmt.Sscanf(got, "writer %d write %d", &w, &k); err != nil || serr != nil || k < seq {
				r.note(&r.stale, "git fetch from %s: %s is %q, write %d was acknowledged before", n.Name, p, got, seq)
			}
		}
	}
}

// pusher commits a new file on a clone of the push skill's draft and
// pushes it with the stock git client, to each node in turn.
func (r *run) pusher(stop <-chan struct{}, s *setupState, nodes []*node, dir string) {
	if out, err := exec.Command("git", "clone", "-q", "-b", "draft/1", r.gitURL(nodes[0], s.pushSlug), dir).CombinedOutput(); err != nil {
		r.note(&r.errs, "git clone: %v %s", err, out)
		return
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(150 * time.Millisecond):
		}
		n := nextUp(nodes, i)
		if n == nil {
			continue
		}
		// Start from what the server has: a push whose answer was lost
		// may or may not have moved the draft.
		if _, ok := r.gitAt(n, "git fetch", dir, "fetch", "-q", r.gitURL(n, s.pushSlug), "+refs/heads/draft/1:refs/remotes/origin/draft/1"); !ok {
			continue
		}
		if out, err := gitOut(dir, "reset", "-q", "--hard", "refs/remotes/origin/draft/1"); err != nil {
			r.note(&r.errs, "git reset: %v %s", err, out)
			return
		}
		path := fmt.Sprintf("pushed/p%04d.txt", i)
		if err := os.MkdirAll(filepath.Join(dir, "pushed"), 0o755); err != nil {
			r.note(&r.errs, "mkdir: %v", err)
			return
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(fmt.Sprintf("push %d\n", i)), 0o644); err != nil {
			r.note(&r.errs, "write: %v", err)
			return
		}
		if out, err := gitOut(dir, "-c", "user.Name=HA", "-c", "user.email=ha@example.com", "add", path); err != nil {
			r.note(&r.errs, "git add: %v %s", err, out)
			return
		}
		if out, err := gitOut(dir, "-c", "user.Name=HA", "-c", "user.email=ha@example.com", "commit", "-q", "-m", path); err != nil {
			r.note(&r.errs, "git commit: %v %s", err, out)
			return
		}
		if _, ok := r.gitAt(n, "git push", dir, "push", "-q", r.gitURL(n, s.pushSlug), "HEAD:refs/heads/draft/1"); ok {
			r.mu.Lock()
			r.pushed = append(r.pushed, path)
			r.mu.Unlock()
		}
	}
}

// readiness polls one node's /readyz.
type readiness struct {
	mu   sync.Mutex
	seen []readyAt
}

type readyAt struct {
	at     time.Time
	status int
}

func (rd *readiness) poll(stop <-chan struct{}, lb *balancer, n *node) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
		rep := lb.At(n, "GET", "/readyz", "", nil)
		rd.mu.Lock()
		rd.seen = append(rd.seen, readyAt{time.Now(), rep.Status})
		rd.mu.Unlock()
	}
}

func (r *run) verify(nodes []*node, root string, s *setupState, redisKill time.Time, ready *readiness) {
	t := r.t
	// Every node comes back ready, and the session made before the
	// failover works on each.
	for _, n := range nodes {
		redistest.WaitFor(t, 30*time.Second, n.Name+" ready", func() bool {
			return r.lb.At(n, "GET", "/readyz", "", nil).Status == 200
		})
		if rep := r.lb.At(n, "GET", "/v1/auth/me", r.sess, nil); rep.Status != 200 {
			t.Errorf("the session made before the failover, on %s after it: %s", n.Name, rep)
		}
	}

	// Readiness said so while Redis had no primary, and recovered.
	var down, upAfter bool
	for _, s := range ready.seen {
		if s.at.After(redisKill) && s.status == 503 {
			down = true
		}
		if down && s.status == 200 {
			upAfter = true
		}
	}
	if !down || !upAfter {
		t.Errorf("/readyz of %s: 503 while Redis had no primary %v, 200 after %v", nodes[0].Name, down, upAfter)
	}

	// Every acknowledged upsert is in git.
	for _, skill := range s.skills {
		repo := ""
		for _, p := range findRepos(root) {
			if strings.Contains(p, skill) {
				repo = p
			}
		}
		if repo == "" {
			t.Fatalf("no repository for skill %s under %s", skill, root)
		}
		ackedMu.Lock()
		want := acked[skill]
		ackedMu.Unlock()
		for path, seq := range want {
			got, err := gitOut(repo, "show", "refs/heads/draft/1:"+path)
			if err != nil {
				t.Errorf("acknowledged %s (write %d) missing from %s: %v %s", path, seq, repo, err, got)
				continue
			}
			var w, i int
			if _, err := fmt.Sscanf(got, "writer %d write %d", &w, &i); err != nil || i < seq {
				t.Errorf("%s in git is %q; write %d was acknowledged", path, got, seq)
			}
		}
	}

	// Every acknowledged push is in git.
	pushRepo := ""
	for _, p := range findRepos(root) {
		if strings.Contains(p, s.push) {
			pushRepo = p
		}
	}
	if pushRepo == "" {
		t.Fatalf("no repository for the pushed skill under %s", root)
	}
	r.mu.Lock()
	pushed := append([]string(nil), r.pushed...)
	r.mu.Unlock()
	if len(pushed) == 0 {
		t.Errorf("no push was acknowledged")
	}
	for _, path := range pushed {
		if out, err := gitOut(pushRepo, "cat-file", "-e", "refs/heads/draft/1:"+path); err != nil {
			t.Errorf("acknowledged push of %s missing from draft/1: %v %s", path, err, out)
		}
	}

	// git fsck --strict on every repository, quiesced. First while the
	// nodes still run, holding each repository's repack lock (so no
	// background repack removes the loose objects or packs fsck listed:
	// what an unlocked fsck here once tripped on), then again once every
	// node has stopped: an object missing then is lost data, not a race.
	repos := findRepos(root)
	for _, p := range repos {
		release := holdRepackLock(t, p)
		out, err := gitOut(p, "fsck", "--strict", "--no-dangling", "--no-progress")
		release()
		if err != nil {
			t.Errorf("git fsck --strict %s (nodes running, repack lock held): %v\n%s", p, err, out)
		}
	}
	for _, n := range nodes {
		if err := n.Stop(); err != nil {
			t.Errorf("stop %s: %v", n.Name, err)
		}
	}
	for _, p := range findRepos(root) {
		if out, err := gitOut(p, "fsck", "--strict", "--no-dangling", "--no-progress"); err != nil {
			t.Errorf("git fsck --strict %s (every node stopped: lost data): %v\n%s", p, err, out)
		}
	}

	// Errors only in the failover window, and it is short.
	r.mu.Lock()
	defer r.mu.Unlock()
	var first, last time.Time
	for _, e := range r.errs {
		if e.at.Before(redisKill) {
			t.Errorf("error before the Redis failover: %s", e.what)
			continue
		}
		if first.IsZero() {
			first = e.at
		}
		last = e.at
	}
	window := time.Duration(0)
	if !last.IsZero() {
		window = last.Sub(redisKill)
	}
	if window > maxWindow {
		t.Errorf("clients saw errors for %.1fs after the primary died (at most %s)", window.Seconds(), maxWindow)
	}
	for _, e := range r.stale {
		t.Errorf("stale read: %s", e.what)
	}
	for _, e := range r.sessGone {
		t.Errorf("session lost: %s", e.what)
	}
	var names []string
	for k := range r.ops {
		names = append(names, k)
	}
	sort.Strings(names)
	var ops []string
	total := 0
	for _, k := range names {
		ops = append(ops, fmt.Sprintf("%s %d", k, r.ops[k]))
		total += r.ops[k]
	}
	t.Logf("requests: %d (%s)", total, strings.Join(ops, ", "))
	t.Logf("failover window (Redis primary SIGKILLed to the last client error): %.2fs; %d errors in it; %d requests without an answer as a node died; %d stale reads; %d repositories fsck'd",
		window.Seconds(), len(r.errs), len(r.lost), len(r.stale), len(repos))
	byOp := map[string]int{}
	for _, e := range r.errs {
		op, _, _ := strings.Cut(e.what, ":")
		byOp[op]++
	}
	t.Logf("errors by request: %v", byOp)
	for i, e := range r.errs {
		if i == 5 {
			t.Logf("  … %d more", len(r.errs)-5)
			break
		}
		t.Logf("  error +%.2fs: %s", e.at.Sub(redisKill).Seconds(), e.what)
	}
	for _, e := range r.lost {
		t.Logf("  no answer: %s", e.what)
	}
	if t.Failed() {
		for _, n := range nodes {
			t.Logf("%s log tail:\n%s", n.Name, n.Logs().Tail(3000))
		}
	}
}
