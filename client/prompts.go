package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
	"golang.org/x/sync/singleflight"
)

// The prompt cache: what an application embeds to read prompts.
//
//	pc := c.Prompts(client.WithTTL(time.Minute))
//	defer pc.Close()
//	text, err := pc.Render(ctx, "support/greeting", map[string]any{"name": "Ann"})
//
// A prompt is fetched once, then served from memory. Once its TTL has
// passed, a Get still answers at once with what it holds and revalidates
// in the background (If-None-Match: a 304 costs no body). When the
// server cannot be reached or answers 5xx, the cache keeps serving the
// last good version (stale-if-error) and says so through WithStaleHandler
// and WithMetrics; a prompt never fetched can come from a fallback seeded
// with WithFallback. Render renders locally with the server's own engine
// (package render), partials included from the same cache.

// CacheEvent is what a cache reports to its metrics hook.
type CacheEvent string

const (
	EventHit         CacheEvent = "hit"          // served from memory, fresh
	EventStaleServed CacheEvent = "stale_served" // served from memory after its TTL (a revalidation started)
	EventMiss        CacheEvent = "miss"         // not held: fetched
	EventNotModified CacheEvent = "not_modified" // revalidated: 304
	EventUpdated     CacheEvent = "updated"      // revalidated: a new version
	EventError       CacheEvent = "error"        // the server could not be reached or answered 5xx; the last good version stays
	EventFallback    CacheEvent = "fallback"     // served a seeded fallback
	EventEvicted     CacheEvent = "evicted"      // the server said the prompt is gone (4xx): dropped
)

// CacheOption configures a PromptCache.
type CacheOption func(*PromptCache)

// WithTTL is how long a fetched prompt is served before a revalidation
// (60 s by default).
func WithTTL(d time.Duration) CacheOption { return func(pc *PromptCache) { pc.ttl = d } }

// WithStaleHandler hears of every failed revalidation or fetch whose
// answer was a stale or fallback prompt: key is "project/slug".
func WithStaleHandler(f func(key string, err error)) CacheOption {
	return func(pc *PromptCache) { pc.onStale = f }
}

// WithMetrics hears of every cache event (hits, misses, revalidations,
// errors), to count them in the application's metrics.
func WithMetrics(f func(key string, ev CacheEvent)) CacheOption {
	return func(pc *PromptCache) { pc.onEvent = f }
}

// WithFallback seeds key ("project/slug") with a text template, served
// when the prompt was never fetched and the server cannot be reached: a
// cold start with no server still renders. Its Version is 0.
func WithFallback(key, template string) CacheOption {
	return func(pc *PromptCache) {
		t := template
		pc.fallbacks[key] = &PromptVersion{Template: &t}
	}
}

// WithClock sets the clock TTLs are measured by (tests move it).
func WithClock(now func() time.Time) CacheOption { return func(pc *PromptCache) { pc.now = now } }

// GetOption picks the version a Get or Render reads: the live one unless
// Version or Label says otherwise.
type GetOption struct {
	version int
	label   string
}

// Version reads published version n.
func Version(n int) GetOption { return GetOption{version: n} }

// Label reads the version a label points at (docs/reviews.md); the
// cache asks the label list which version that is on every
// revalidation, so a moved label is seen within one refresh.
func Label(name string) GetOption { return GetOption{label: name} }

// cacheKey is one cached read: a prompt and a version selector.
type cacheKey struct {
	key     string
	version int
	label   string
}

// entry is one cached read. pv and compiled never change once stored;
// a revalidation that finds a new version stores a new entry.
type entry struct {
	pv        *PromptVersion
	promptID  string
	compiled  *compiled
	fetchedAt time.Time
	fallback  bool
}

// compiled is a prompt version's parsed templates.
type compiled struct {
	text *render.Template
	msgs []*render.Template // nil for a placeholder
	err  error
}

// PromptCache is an in-memory cache of prompts; see the package doc.
type PromptCache struct {
	c         *Client
	ttl       time.Duration
	onStale   func(string, error)
	onEvent   func(string, CacheEvent)
	fallbacks map[string]*PromptVersion
	now       func() time.Time

	mu         sync.RWMutex
	entries    map[cacheKey]*entry
	ids        map[string]string // "project/slug" -> prompt id
	refreshing map[cacheKey]bool
	again      map[cacheKey]bool // revalidate once more when the running one ends

	misses singleflight.Group

	// events: subscribe to each project's event stream (WithEvents);
	// subscribed holds the projects whose stream runs (promptevents.go).
	events     bool
	subscribed map[string]bool

	ctx    context.Context // ends background revalidations on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Prompts returns a prompt cache over c. Close it to stop its background
// revalidations.
func (c *Client) Prompts(opts ...CacheOption) *PromptCache {
	pc := &PromptCache{
		c: c, ttl: 60 * time.Second, fallbacks: map[string]*PromptVersion{}, now: time.Now,
		entries: map[cacheKey]*entry{}, ids: map[string]string{}, refreshing: map[cacheKey]bool{},
		subscribed: map[string]bool{}, again: map[cacheKey]bool{},
	}
	for _, o := range opts {
		o(pc)
	}
	pc.ctx, pc.cancel = context.WithCancel(context.Background())
	return pc
}

// Close stops background revalidations and waits for them.
func (pc *PromptCache) Close() {
	pc.cancel()
	pc.wg.Wait()
}

func (pc *PromptCache) event(key string, ev CacheEvent) {
	if pc.onEvent != nil {
		pc.onEvent(key, ev)
	}
}

func (pc *PromptCache) stale(key string, err error) {
	if pc.onStale != nil {
		pc.onStale(key, err)
	}
}

func selector(opts []GetOption) (version int, label string) {
	for _, o := range opts {
		if o.version != 0 || o.label != "" {
			version, label = o.version, o.label
		}
	}
	return version, label
}

// Get returns the prompt key ("project/slug", project by slug or id) at
// the version opts pick. The value is shared with the cache: read it,
// never change it. Served from memory it makes no request and allocates
// nothing.
func (pc *PromptCache) Get(ctx context.Context, key string, opts ...GetOption) (*PromptVersion, error) {
	e, err := pc.entry(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return e.pv, nil
}

// entry returns the cached entry of key, fetching it when absent and
// starting a revalidation when it is past its TTL.
func (pc *PromptCache) entry(ctx context.Context, key string, opts []GetOption) (*entry, error) {
	v, l := selector(opts)
	k := cacheKey{key: key, version: v, label: l}
	pc.mu.RLock()
	e := pc.entries[k]
	pc.mu.RUnlock()
	if e != nil && !e.fallback {
		if pc.now().Sub(e.fetchedAt) < pc.ttl {
			pc.event(key, EventHit)
			return e, nil
		}
		pc.event(key, EventStaleServed)
		pc.revalidate(k, e)
		return e, nil
	}
	pc.event(key, EventMiss)
	// Concurrent misses of one key make one request.
	res, err, _ := pc.misses.Do(k.key+"\x00"+strconv.Itoa(k.version)+"\x00"+k.label, func() (any, error) {
		return pc.fetch(ctx, k, nil)
	})
	fresh, _ := res.(*entry)
	switch {
	case err == nil:
		return fresh, nil
	case unreachable(err) && e != nil: // a fallback served before
		pc.stale(key, err)
		pc.event(key, EventFallback)
		return e, nil
	case unreachable(err):
		if fb := pc.fallbacks[key]; fb != nil && v == 0 && l == "" {
			fe := &entry{pv: fb, compiled: compile(fb), fallback: true}
			pc.mu.Lock()
			pc.entries[k] = fe
			pc.mu.Unlock()
			pc.stale(key, err)
			pc.event(key, EventFallback)
			return fe, nil
		}
	}
	return nil, err
}

// unreachable reports whether err means the server could not answer: no
// connection, a timeout, or a 5xx. Those leave cached prompts in use.
func unreachable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500
	}
	return err != nil && !errors.Is(err, context.Canceled)
}

// revalidate starts one background revalidation of k.
func (pc *PromptCache) revalidate(k cacheKey, old *entry) {
	pc.mu.Lock()
	if pc.refreshing[k] {
		// One at a time; an event arriving meanwhile asks for another
		// once this one is done, since it may have read too early.
		pc.again[k] = true
		pc.mu.Unlock()
		return
	}
	pc.refreshing[k] = true
	pc.mu.Unlock()
	pc.wg.Add(1)
	go func() {
		defer pc.wg.Done()
		ctx, cancel := context.WithTimeout(pc.ctx, 30*time.Second)
		defer cancel()
		_, err := pc.fetch(ctx, k, old)
		pc.mu.Lock()
		delete(pc.refreshing, k)
		again, cur := pc.again[k], pc.entries[k]
		delete(pc.again, k)
		pc.mu.Unlock()
		if again && cur != nil && err == nil {
			defer pc.revalidate(k, cur)
		}
		switch {
		case pc.ctx.Err() != nil:
			// Closed: leave the entry as it was.
		case err == nil:
		case unreachable(err):
			// Keep serving the last good version; try again after
			// another TTL rather than on every Get.
			pc.mu.Lock()
			if pc.entries[k] == old {
				pc.entries[k] = &entry{pv: old.pv, promptID: old.promptID, compiled: old.compiled, fetchedAt: pc.now()}
			}
			pc.mu.Unlock()
			pc.stale(k.key, err)
			pc.event(k.key, EventError)
		default:
			// The server answered: the prompt (or version, or access)
			// is gone. Drop it; the next Get reports the error.
			pc.mu.Lock()
			if pc.entries[k] == old {
				delete(pc.entries, k)
			}
			pc.mu.Unlock()
			pc.event(k.key, EventEvicted)
		}
	}()
}

// fetch reads k from the server (conditionally when old is set) and
// stores the result.
func (pc *PromptCache) fetch(ctx context.Context, k cacheKey, old *entry) (*entry, error) {
	id := ""
	if old != nil {
		id = old.promptID
	}
	if id == "" {
		var err error
		if id, err = pc.promptID(ctx, k.key); err != nil {
			return nil, err
		}
	}
	r := request{method: "GET", path: p("/v1/prompts/", id, "/live")}
	switch {
	case k.version > 0:
		r.path = p("/v1/prompts/", id, "/versions/") + strconv.Itoa(k.version)
	case k.label != "" && k.label != "live":
		// No read by label: the label list names the version, whose
		// content (immutable) revalidates like any version's.
		n, err := pc.c.labelVersion(ctx, KindPrompt, id, k.label)
		if err != nil {
			return nil, err
		}
		r.path = p("/v1/prompts/", id, "/versions/") + strconv.Itoa(n)
	}
	if old != nil {
		r.headers = map[string]string{"If-None-Match": `"` + old.pv.Commit + `"`}
	}
	pv, err := pc.c.promptVersionAnswer(ctx, r)
	if err != nil {
		if old == nil && IsNotFound(err) {
			pc.forgetID(k.key) // a renamed or deleted prompt: look it up again next time
		}
		return nil, err
	}
	e := &entry{promptID: id, fetchedAt: pc.now()}
	if pv == nil { // 304
		e.pv, e.compiled = old.pv, old.compiled
		pc.event(k.key, EventNotModified)
	} else {
		e.pv, e.compiled = pv, compile(pv)
		if old != nil {
			pc.event(k.key, EventUpdated)
		}
	}
	pc.mu.Lock()
	pc.entries[k] = e
	pc.mu.Unlock()
	if pc.events && old == nil {
		pc.subscribe(k.key)
	}
	return e, nil
}

// promptID finds the id of "project/slug", once: the API addresses
// prompts by id (a bare slug may name prompts of several projects).
func (pc *PromptCache) promptID(ctx context.Context, key string) (string, error) {
	pc.mu.RLock()
	id, ok := pc.ids[key]
	pc.mu.RUnlock()
	if ok {
		return id, nil
	}
	project, slug, found := strings.Cut(key, "/")
	if !found || project == "" || slug == "" || strings.Contains(slug, "/") {
		return "", fmt.Errorf("client: prompt key %q must be \"project/slug\"", key)
	}
	o := ListOptions{Limit: 500}
	for {
		pg, err := pc.c.ProjectPrompts(ctx, project, o)
		if err != nil {
			return "", err
		}
		for _, a := range pg.Items {
			if a.Slug == slug || a.ID == slug {
				pc.mu.Lock()
				pc.ids[key] = a.ID
				pc.mu.Unlock()
				return a.ID, nil
			}
		}
		if pg.NextCursor == "" {
			return "", &APIError{Status: http.StatusNotFound, Code: "not_found", Message: "prompt " + key + " not found"}
		}
		o.Cursor = pg.NextCursor
	}
}

func (pc *PromptCache) forgetID(key string) {
	pc.mu.Lock()
	delete(pc.ids, key)
	pc.mu.Unlock()
}

// compile parses a version's templates as the server does.
func compile(pv *PromptVersion) *compiled {
	c := &compiled{}
	if pv.Template != nil {
		c.text, c.err = render.ParseWithPartials(*pv.Template)
		return c
	}
	for i, m := range pv.Messages {
		if m.Placeholder() {
			c.msgs = append(c.msgs, nil)
			continue
		}
		t, err := render.ParseWithPartials(m.Content)
		if err != nil {
			c.err = fmt.Errorf("messages[%d]: %w", i, err)
			return c
		}
		c.msgs = append(c.msgs, t)
	}
	return c
}

// Render renders the prompt key at the version opts pick, locally, with
// vars: the same text the server's render gives for the same variables
// (the Mustache engine is the server's; partials {{> slug}} and
// {{> slug@N}} come from the same project through this cache). The
// variables_schema is not checked locally: the server's render does.
// Errors of the template and variables are *quire.Error values, as the
// server's are (missing variables: quire.EUNPROCESSABLE with the detail
// "missing").
func (pc *PromptCache) Render(ctx context.Context, key string, vars map[string]any, opts ...GetOption) (*Rendered, error) {
	e, err := pc.entry(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	if e.compiled.err != nil {
		return nil, e.compiled.err
	}
	vs, err := jsonVars(vars)
	if err != nil {
		return nil, err
	}
	project, slug, _ := strings.Cut(key, "/")
	in := &partials{pc: pc, ctx: ctx, project: project}
	ro := render.Options{Partials: in, Name: slug}
	pv := e.pv
	out := &Rendered{PromptID: e.promptID, Version: pv.Number, Commit: pv.Commit, Model: pv.Model, ModelParams: pv.ModelParams}
	var names []string
	switch {
	case e.compiled.text != nil:
		r, err := e.compiled.text.RenderWith(vs, ro)
		if err != nil {
			return nil, err
		}
		out.Text, names = &r.Text, r.Partials
	case len(e.compiled.msgs) > 0:
		var missing []string
		for i, t := range e.compiled.msgs {
			if t == nil {
				if name := pv.Messages[i].Name; vs[name] == nil && !slices.Contains(missing, name) {
					missing = append(missing, name)
				}
				continue
			}
			for _, m := range t.MissingWith(vs, ro) {
				if !slices.Contains(missing, m) {
					missing = append(missing, m)
				}
			}
		}
		if len(missing) > 0 {
			return nil, render.MissingError(missing)
		}
		for i, t := range e.compiled.msgs {
			if t == nil {
				spliced, err := render.PlaceholderMessages(pv.Messages[i].Name, vs[pv.Messages[i].Name])
				if err != nil {
					return nil, err
				}
				out.Messages = append(out.Messages, spliced...)
				continue
			}
			r, err := t.RenderWith(vs, ro)
			if err != nil {
				return nil, err
			}
			for _, n := range r.Partials {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
			out.Messages = append(out.Messages, Message{Role: pv.Messages[i].Role, Content: r.Text})
		}
	default:
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "version %d has no template", pv.Number)
	}
	out.Partials = []PartialUse{}
	for _, n := range names {
		if u, ok := in.used[n]; ok {
			out.Partials = append(out.Partials, u)
		}
	}
	return out, nil
}

// partials resolves {{> slug}} (live) and {{> slug@N}} (published N) to
// the text prompts of one project, through the cache.
type partials struct {
	pc      *PromptCache
	ctx     context.Context
	project string
	used    map[string]PartialUse
}

// Partial implements render.Partials.
func (in *partials) Partial(name string) (*render.Template, error) {
	slug, ver, pinned := strings.Cut(name, "@")
	n := 0
	if pinned {
		var err error
		if n, err = strconv.Atoi(ver); err != nil || n <= 0 || strconv.Itoa(n) != ver {
			return nil, render.ErrNoPartial
		}
	}
	if slug == "" || strings.Contains(slug, "/") {
		return nil, render.ErrNoPartial
	}
	var opts []GetOption
	if n > 0 {
		opts = []GetOption{Version(n)}
	}
	e, err := in.pc.entry(in.ctx, in.project+"/"+slug, opts)
	if IsNotFound(err) {
		return nil, render.ErrNoPartial
	}
	if err != nil {
		return nil, err
	}
	if e.compiled.text == nil {
		return nil, render.ErrNoPartial // only text prompts are partials
	}
	if in.used == nil {
		in.used = map[string]PartialUse{}
	}
	// As the server reports it: the name as written ("sig@1").
	in.used[name] = PartialUse{Slug: name, PromptID: e.promptID, Version: e.pv.Number, Commit: e.pv.Commit}
	return e.compiled.text, nil
}

// jsonVars gives vars the form the server's variables have after JSON
// decoding (numbers as the text JSON would carry), so a local render
// prints what the server's would. Strings, booleans and nil need no
// change: a map of only those is used as is, without a copy.
func jsonVars(vars map[string]any) (render.Vars, error) {
	plain := true
	for _, v := range vars {
		switch v.(type) {
		case string, bool, nil:
		default:
			plain = false
		}
	}
	if plain {
		if vars == nil {
			return render.Vars{}, nil
		}
		return render.Vars(vars), nil
	}
	m := make(map[string]any, len(vars))
	for k, v := range vars {
		c, err := jsonValue(v)
		if err != nil {
			return nil, quire.Errorf(quire.EINVALID, "variables.%s cannot be sent as JSON: %v", k, err)
		}
		m[k] = c
	}
	return render.VarsOf(m), nil
}

// jsonValue converts one value; anything beyond the JSON kinds goes
// through encoding/json (structs, typed slices and maps).
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case string, bool, nil, json.Number:
		return x, nil
	case int:
		return json.Number(strconv.Itoa(x)), nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a JSON number", x)
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return m, nil
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			l[i] = c
		}
		return l, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}
