package crashtest

import (
	"fmt"
	"slices"
	"sync"
)

// The model records every write the server acknowledged, and the writes
// in flight when it died (their outcome is unknown). After a crash each
// fact is checked against what git and the API say; an unknown outcome is
// resolved to what was found, so it must then survive later crashes too.

// content is a file's content, or its absence.
type content struct {
	present bool
	data    string
}

func (c content) String() string {
	if !c.present {
		return "(absent)"
	}
	return fmt.Sprintf("%.60q", c.data)
}

type fileKey struct {
	skill   string
	version int
	path    string
}

type fileState struct {
	acked content
	maybe []content // writes in flight at the crash
}

type verKey struct {
	skill string
	n     int
}

type verState struct {
	state      string   // acknowledged state: draft, published, archived
	maybeState string   // a transition in flight at the crash
	open       string   // the draft's first commit
	tip        string   // the last commit known to be on the version
	commits    []string // acknowledged commits after open
	count      int      // commits after open known to exist
	pending    int      // writes in flight at the crash
}

type liveState struct {
	acked string   // commit main must be at ("" none)
	maybe []string // publishes in flight at the crash
}

type keyRec struct{ id, token string }

type projRec struct{ id, slug string }

type skillRec struct{ id, slug, projectID string }

type model struct {
	mu       sync.Mutex
	files    map[fileKey]*fileState
	versions map[verKey]*verState
	live     map[string]*liveState
	keys     []keyRec
	projects []projRec
	skills   []skillRec
	touched  map[fileKey]bool // written since the last check
	applied  int              // writes in flight at a crash found applied
}

func newModel() *model {
	return &model{
		files: map[fileKey]*fileState{}, versions: map[verKey]*verState{},
		live: map[string]*liveState{}, touched: map[fileKey]bool{},
	}
}

// newVersion records an acknowledged create of version n from base (0:
// none), copying the base's files.
func (m *model) newVersion(skill string, n, base int, open string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := verKey{skill, n}
	if _, ok := m.versions[k]; ok {
		return fmt.Errorf("skill %s: version number %d handed out twice", skill, n)
	}
	m.versions[k] = &verState{state: "draft", open: open, tip: open}
	if base == 0 {
		return nil
	}
	if _, ok := m.versions[verKey{skill, base}]; !ok {
		return fmt.Errorf("skill %s: version %d was opened from v%d, which the test never saw", skill, n, base)
	}
	for fk, fs := range m.files {
		if fk.skill == skill && fk.version == base && fs.acked.present {
			if len(fs.maybe) > 0 {
				return fmt.Errorf("harness: base file %v unresolved", fk)
			}
			m.files[fileKey{skill, n, fk.path}] = &fileState{acked: fs.acked}
		}
	}
	return nil
}

// write records a file write (acked or in flight) on a draft.
func (m *model) write(k fileKey, c content, acked bool, commit string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fs := m.files[k]
	if fs == nil {
		fs = &fileState{}
		m.files[k] = fs
	}
	v := m.versions[verKey{k.skill, k.version}]
	m.touched[k] = true
	if acked {
		fs.acked = c
		v.commits = append(v.commits, commit)
		v.tip = commit
		v.count++
	} else {
		fs.maybe = append(fs.maybe, c)
		v.pending++
	}
}

// file returns the acknowledged content of a file.
func (m *model) file(k fileKey) content {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fs := m.files[k]; fs != nil {
		return fs.acked
	}
	return content{}
}

// transition records a state change (acked or in flight) of a version.
func (m *model) transition(skill string, n int, state string, acked bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.versions[verKey{skill, n}]
	if acked {
		v.state = state
	} else {
		v.maybeState = state
	}
}

func (m *model) state(skill string, n int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v := m.versions[verKey{skill, n}]; v != nil {
		return v.state
	}
	return ""
}

// setLive records main moving to commit (acked or in flight).
func (m *model) setLive(skill, commit string, acked bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.live[skill]
	if l == nil {
		l = &liveState{}
		m.live[skill] = l
	}
	if acked {
		l.acked = commit
	} else {
		l.maybe = append(l.maybe, commit)
	}
}

func (m *model) addKey(k keyRec) {
	m.mu.Lock()
	m.keys = append(m.keys, k)
	m.mu.Unlock()
}

func (m *model) addProject(p projRec) {
	m.mu.Lock()
	m.projects = append(m.projects, p)
	m.mu.Unlock()
}

func (m *model) addSkill(s skillRec) {
	m.mu.Lock()
	m.skills = append(m.skills, s)
	m.mu.Unlock()
}

// tip returns the last acknowledged commit of a version.
func (m *model) tip(skill string, n int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.versions[verKey{skill, n}].tip
}

// checkRepo checks the model's facts about one skill against git and
// resolves unknown outcomes to what git shows. It returns every
// violation found.
func (m *model) checkRepo(skill string, g *gitView) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }

	tips := map[int]string{}
	for k, v := range m.versions {
		if k.skill != skill {
			continue
		}
		state, tip := g.version(k.n)
		if state != v.state && (v.maybeState == "" || state != v.maybeState) {
			badf("version %d is %q in git; acknowledged %q (in flight: %q)", k.n, state, v.state, v.maybeState)
			continue
		}
		if state != v.state {
			m.applied++
		}
		v.state, v.maybeState, v.tip = state, "", tip
		tips[k.n] = tip
		chain := g.chain(tip)
		at := slices.Index(chain, v.open)
		if at < 0 {
			badf("version %d: its first commit %s is not in the history of %s", k.n, v.open, tip)
			continue
		}
		if at < v.count || at > v.count+v.pending {
			badf("version %d: %d commits after the first; %d acknowledged, %d in flight", k.n, at, v.count, v.pending)
		}
		m.applied += at - v.count
		v.count, v.pending = at, 0
		for _, c := range v.commits {
			if !slices.Contains(chain[:at], c) {
				badf("version %d: acknowledged commit %s is not in the history of %s", k.n, c, tip)
			}
		}
	}

	var specs []string
	var keys []fileKey
	for k := range m.files {
		if k.skill == skill && tips[k.version] != "" {
			keys = append(keys, k)
			specs = append(specs, tips[k.version]+":"+k.path)
		}
	}
	blobs, err := catFiles(g.path, specs)
	if err != nil {
		return append(bad, err.Error())
	}
	for i, k := range keys {
		fs := m.files[k]
		b := blobs[specs[i]]
		got := content{present: b != nil, data: string(b)}
		if got != fs.acked && !slices.Contains(fs.maybe, got) {
			badf("version %d file %s is %v in git; acknowledged %v (in flight: %v)", k.version, k.path, got, fs.acked, fs.maybe)
			continue
		}
		if got != fs.acked {
			m.applied++
		}
		fs.acked, fs.maybe = got, nil
	}

	if l := m.live[skill]; l != nil {
		got := g.refs["refs/heads/main"].commit
		if got != l.acked && !slices.Contains(l.maybe, got) {
			badf("main is at %q; acknowledged %q (in flight: %v)", got, l.acked, l.maybe)
		} else {
			if got != l.acked {
				m.applied++
			}
			l.acked, l.maybe = got, nil
		}
	}
	for i := range bad {
		bad[i] = "skill " + skill + ": " + bad[i]
	}
	return bad
}
