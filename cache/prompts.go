package cache

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"
)

// Prompts is a read-through cache in front of a quire.PromptStore, with
// two tiers for live reads: an in-process map on top of Redis (shared by
// every quire process on the same Redis, entries with a TTL).
//
// Correctness does not rest on invalidation arriving in time. Content at
// a commit never changes, so every cached live read is stamped with its
// commit, and each read first asks the store for the live commit (one ref
// read on the shared data root, no object access) and uses a cached entry
// only when the stamps agree. A reader that fills a tier with old content
// right after a publish, a pub/sub message still in flight, or messages
// lost while Redis was down can therefore cost a miss but never serve a
// version older than the one live when the request began.
//
// Invalidation keeps the tiers small and fresh: every change the store
// reports (Invalidate, wired to gitstore's OnChange) deletes the Redis
// entry and publishes the prompt id, and every process drops its
// in-process entry on the message.
//
// Reads by label have a tier of their own, checked against the label
// log's commit the same way (labels.go).
//
// When Redis fails, reads go to the in-process tier and git, and Redis is
// left alone for RetryAfter before it is tried again.
type Prompts struct {
	next   quire.PromptStore
	r      *Redis
	rdb    redis.UniversalClient
	key    func(parts ...string) string
	opts   PromptOptions
	flight singleflight.Group

	mu       sync.RWMutex
	live     map[string]*quire.PromptVersion   // asset id -> live read
	labels   map[string]map[string]*labelEntry // asset id -> label -> read by label (labels.go)
	contents map[string]*quire.PromptContent   // commit -> content

	downUntil atomic.Int64 // unix nanos before which Redis is not tried
	stats     promptCounters
	// refGen is next when it can tell that no ref has moved (gitstore);
	// epoch counts the invalidations this process has heard of.
	refGen refGenerations
	epoch  atomic.Uint64

	sub  *redis.PubSub
	done chan struct{}
}

// PromptOptions configures a Prompts cache.
type PromptOptions struct {
	// TTL is the life of a Redis entry.
	TTL time.Duration
	// MaxLocal bounds the in-process entries of each kind.
	MaxLocal int
	// RetryAfter is how long Redis is left alone after a failure.
	RetryAfter time.Duration
	// Timeout bounds one Redis call on the read path.
	Timeout time.Duration
	Logger  *slog.Logger
}

func (o *PromptOptions) defaults() {
	if o.TTL <= 0 {
		o.TTL = 10 * time.Minute
	}
	if o.MaxLocal <= 0 {
		o.MaxLocal = 10000
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 250 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// PromptStats counts cache lookups by tier.
type PromptStats struct {
	LocalHits     uint64 // live reads answered in process
	LocalMisses   uint64
	RedisHits     uint64 // live reads answered by Redis
	RedisMisses   uint64
	RedisErrors   uint64 // failed Redis calls (reads fell back to git)
	Loads         uint64 // live reads loaded from git
	ContentHits   uint64 // content-by-commit reads answered in process
	ContentMisses uint64
	LabelHits     uint64 // reads by label answered in process
	LabelMisses   uint64
	LabelLoads    uint64 // reads by label loaded from git
	Invalidations uint64 // invalidations received (local and pub/sub)
}

type promptCounters struct {
	localHits, localMisses, redisHits, redisMisses, redisErrors, loads atomic.Uint64
	contentHits, contentMisses, invalidations                          atomic.Uint64
	labelHits, labelMisses, labelLoads                                 atomic.Uint64
}

// allPrompts is the pub/sub message that drops every entry.
const allPrompts = "*"

// NewPrompts wraps next with the cache on r and starts listening for
// invalidations. Close stops it.
func NewPrompts(r *Redis, next quire.PromptStore, opts PromptOptions) *Prompts {
	opts.defaults()
	p := &Prompts{
		next: next, r: r, rdb: r.client, key: r.key, opts: opts,
		live:     map[string]*quire.PromptVersion{},
		labels:   map[string]map[string]*labelEntry{},
		contents: map[string]*quire.PromptContent{},
		done:     make(chan struct{}),
	}
	p.refGen, _ = next.(refGenerations)
	p.sub = p.rdb.Subscribe(context.Background(), p.channel())
	// Wait (briefly) for Redis to confirm the subscription, as go-redis
	// advises: a message published before it would be lost to us. A Redis
	// that does not answer is not waited for: go-redis subscribes when it
	// comes back.
	ctx, cancel := context.WithTimeout(context.Background(), subscribeWait)
	p.sub.Receive(ctx)
	cancel()
	go p.listen()
	return p
}

// subscribeWait bounds how long a new subscriber waits for Redis to
// confirm its subscription.
const subscribeWait = time.Second

func (p *Prompts) channel() string          { return p.key("prompt", "invalidate") }
func (p *Prompts) liveKey(id string) string { return p.key("prompt", id, "live") }

// listen drops in-process entries named by pub/sub messages. go-redis
// resubscribes by itself after Redis comes back.
func (p *Prompts) listen() {
	defer close(p.done)
	for msg := range p.sub.Channel() {
		p.stats.invalidations.Add(1)
		p.dropLocal(msg.Payload)
	}
}

// Close stops listening for invalidations.
func (p *Prompts) Close() error {
	err := p.sub.Close()
	<-p.done
	return err
}

// Stats returns the counters.
func (p *Prompts) Stats() PromptStats {
	c := &p.stats
	return PromptStats{
		LocalHits: c.localHits.Load(), LocalMisses: c.localMisses.Load(),
		RedisHits: c.redisHits.Load(), RedisMisses: c.redisMisses.Load(),
		RedisErrors: c.redisErrors.Load(), Loads: c.loads.Load(),
		ContentHits: c.contentHits.Load(), ContentMisses: c.contentMisses.Load(),
		LabelHits: c.labelHits.Load(), LabelMisses: c.labelMisses.Load(), LabelLoads: c.labelLoads.Load(),
		Invalidations: c.invalidations.Load(),
	}
}

// CacheStats reports hits and misses by tier for /metrics: "memory" (the
// in-process tier, live reads, reads by label and content by commit) and
// "redis".
func (p *Prompts) CacheStats() []quire.CacheTierStats {
	st := p.Stats()
	return []quire.CacheTierStats{
		{Tier: "memory", Hits: st.LocalHits + st.LabelHits + st.ContentHits, Misses: st.LocalMisses + st.LabelMisses + st.ContentMisses},
		{Tier: "redis", Hits: st.RedisHits, Misses: st.RedisMisses + st.RedisErrors},
	}
}

// refGenerations is a store that can tell that no ref has moved
// (gitstore.Store.RefGeneration).
type refGenerations interface {
	RefGeneration() (gen uint64, ok bool)
}

// Generation is a number that changes whenever a cached read may have
// changed: a ref moved on the data root (in any process), an
// invalidation reached this process (local or over pub/sub), or, as the
// store says, enough time passed. What a caller derives from prompt
// reads taken after it may be reused while it holds (the app's
// composition memo). ok is false when the store below cannot tell.
func (p *Prompts) Generation() (gen uint64, ok bool) {
	if p.refGen == nil {
		return 0, false
	}
	n, ok := p.refGen.RefGeneration()
	if !ok {
		return 0, false
	}
	return n + p.epoch.Load(), true
}

// LiveCommit asks the store: it is what every cached entry is checked by.
func (p *Prompts) LiveCommit(ctx context.Context, a *quire.Asset) (string, error) {
	return p.next.LiveCommit(ctx, a)
}

// LivePrompt returns the live version of a, from the first tier whose
// entry carries the live commit.
func (p *Prompts) LivePrompt(ctx context.Context, a *quire.Asset) (*quire.PromptVersion, error) {
	commit, err := p.next.LiveCommit(ctx, a)
	if err != nil {
		return nil, err
	}
	return p.LivePromptAt(ctx, a, commit)
}

// LivePromptAt is LivePrompt for a caller that has just read the live
// commit (LiveCommit), so the ref is not read twice.
func (p *Prompts) LivePromptAt(ctx context.Context, a *quire.Asset, commit string) (*quire.PromptVersion, error) {
	if commit == "" {
		return nil, quire.Errorf(quire.ENOTFOUND, "no live version: publish one first")
	}
	p.mu.RLock()
	pv := p.live[a.ID]
	p.mu.RUnlock()
	if pv != nil && pv.Version.Commit == commit {
		p.stats.localHits.Add(1)
		return pv, nil
	}
	p.stats.localMisses.Add(1)
	v, err, _ := p.flight.Do(a.ID+"@"+commit, func() (any, error) {
		if pv := p.fromRedis(ctx, a, commit); pv != nil {
			p.storeLocal(a.ID, pv)
			return pv, nil
		}
		p.stats.loads.Add(1)
		pv, err := p.next.LivePrompt(ctx, a)
		if err != nil {
			return nil, err
		}
		p.storeLocal(a.ID, pv)
		p.toRedis(ctx, a, pv)
		return pv, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*quire.PromptVersion), nil
}

// PromptContent caches content by commit in process: it never changes.
func (p *Prompts) PromptContent(ctx context.Context, a *quire.Asset, commit string) (*quire.PromptContent, error) {
	p.mu.RLock()
	c := p.contents[commit]
	p.mu.RUnlock()
	if c != nil {
		p.stats.contentHits.Add(1)
		return c, nil
	}
	p.stats.contentMisses.Add(1)
	c, err := p.next.PromptContent(ctx, a, commit)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if len(p.contents) >= p.opts.MaxLocal {
		clear(p.contents)
	}
	p.contents[commit] = c
	p.mu.Unlock()
	return c, nil
}

// WritePrompt writes through; the store reports the change, which
// invalidates.
func (p *Prompts) WritePrompt(ctx context.Context, by quire.Actor, a *quire.Asset, n int, c *quire.PromptContent, ifMatch string) (*quire.Version, error) {
	return p.next.WritePrompt(ctx, by, a, n, c, ifMatch)
}

// EditPrompt writes through, as WritePrompt.
func (p *Prompts) EditPrompt(ctx context.Context, by quire.Actor, a *quire.Asset, n int, edit func(*quire.PromptContent) *quire.PromptContent, ifMatch string) (*quire.Version, error) {
	return p.next.EditPrompt(ctx, by, a, n, edit, ifMatch)
}

// cachedPrompt is a live read as stored in Redis.
type cachedPrompt struct {
	Version *quire.Version       `json:"version"`
	Content *quire.PromptContent `json:"content"`
}

func (p *Prompts) fromRedis(ctx context.Context, a *quire.Asset, commit string) *quire.PromptVersion {
	var cp cachedPrompt
	get := func(ctx context.Context) *redis.StringCmd { return p.rdb.Get(ctx, p.liveKey(a.ID)) }
	return p.readEntry(ctx, a, "get", get, &cp, &cp, func() bool { return cp.Version.Commit == commit })
}

// readEntry reads a cached read from Redis with get (op names the command
// when it fails) into e, whose version and content are entry, and returns
// them when usable says the entry is current; anything else (stale, from
// another writer, unreadable) is a miss, which the refill overwrites.
func (p *Prompts) readEntry(ctx context.Context, a *quire.Asset, op string, get func(context.Context) *redis.StringCmd, e any, entry *cachedPrompt, usable func() bool) *quire.PromptVersion {
	if !p.redisUp() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	b, err := get(ctx).Bytes()
	if errors.Is(err, redis.Nil) {
		p.stats.redisMisses.Add(1)
		return nil
	}
	if err != nil {
		p.redisFailed(op, err)
		return nil
	}
	if json.Unmarshal(b, e) != nil || entry.Version == nil || entry.Content == nil || !usable() {
		p.stats.redisMisses.Add(1)
		return nil
	}
	p.stats.redisHits.Add(1)
	entry.Version.AssetID, entry.Version.Kind = a.ID, a.Kind
	return &quire.PromptVersion{Version: entry.Version, Content: entry.Content}
}

func (p *Prompts) toRedis(ctx context.Context, a *quire.Asset, pv *quire.PromptVersion) {
	if !p.redisUp() {
		return
	}
	b, err := json.Marshal(cachedPrompt{Version: pv.Version, Content: pv.Content})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.opts.Timeout)
	defer cancel()
	if err := p.rdb.Set(ctx, p.liveKey(a.ID), b, p.opts.TTL).Err(); err != nil {
		p.redisFailed("set", err)
	}
}

func (p *Prompts) storeLocal(id string, pv *quire.PromptVersion) {
	p.mu.Lock()
	if len(p.live) >= p.opts.MaxLocal {
		clear(p.live)
	}
	p.live[id] = pv
	p.mu.Unlock()
}

func (p *Prompts) dropLocal(id string) {
	p.epoch.Add(1)
	p.mu.Lock()
	if id == allPrompts {
		clear(p.live)
		clear(p.labels)
	} else {
		delete(p.live, id)
		delete(p.labels, id)
	}
	p.mu.Unlock()
}

func (p *Prompts) redisUp() bool { return time.Now().UnixNano() >= p.downUntil.Load() }

// RedisUp reports whether Redis is asked again: false for
// PromptOptions.RetryAfter after a failure.
func (p *Prompts) RedisUp() bool { return p.redisUp() }

func (p *Prompts) redisFailed(op string, err error) {
	p.stats.redisErrors.Add(1)
	if p.redisUp() {
		p.opts.Logger.Warn("prompt cache: redis failed; reading git", "op", op, "error", err.Error(), "retry_after", p.opts.RetryAfter.String())
	}
	p.downUntil.Store(time.Now().Add(p.opts.RetryAfter).UnixNano())
}

// Invalidate drops the cached reads of an asset everywhere. Its signature
// fits gitstore's OnChange hook; skills are ignored.
func (p *Prompts) Invalidate(kind quire.Kind, assetID string) {
	if kind != quire.KindPrompt {
		return
	}
	p.invalidate(context.Background(), assetID)
}

// invalidate drops id locally, deletes its Redis entry and tells the
// other processes. It returns the Redis error, if any.
func (p *Prompts) invalidate(ctx context.Context, id string) error {
	p.stats.invalidations.Add(1)
	p.dropLocal(id)
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	_, err := p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		if id != allPrompts {
			pipe.Del(ctx, p.liveKey(id), p.labelsKey(id))
		}
		pipe.Publish(ctx, p.channel(), id)
		return nil
	})
	if err != nil {
		p.redisFailed("invalidate", err)
		return &quire.Error{Code: quire.EUNAVAILABLE, Message: "cache unavailable: dropped in this process only", Err: err}
	}
	return nil
}

// Purge drops every cached read of a on every process.
func (p *Prompts) Purge(ctx context.Context, a *quire.Asset) error {
	return p.invalidate(ctx, a.ID)
}

// PurgeAll drops every cached prompt read on every process.
func (p *Prompts) PurgeAll(ctx context.Context) error {
	p.mu.Lock()
	clear(p.contents)
	p.mu.Unlock()
	if err := p.r.deleteMatching(ctx, p.key("prompt", "*")); err != nil {
		p.dropLocal(allPrompts)
		return &quire.Error{Code: quire.EUNAVAILABLE, Message: "cache unavailable", Err: err}
	}
	return p.invalidate(ctx, allPrompts)
}

var (
	_ quire.PromptStore = (*Prompts)(nil)
	_ quire.PromptCache = (*Prompts)(nil)
)
