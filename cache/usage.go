package cache

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
)

// Usage counts prompt renders and API key use in Redis and flushes the
// counts to a durable quire.UsageLog (git) now and then. Redis holds only
// what is not flushed yet, so a Redis that loses its data loses at most
// one flush interval of counts, and the durable totals never go down:
//
//	{usage}:dirty          set of prompt ids with pending counts
//	{usage}:p:<prompt id>  hash: "r:<version>" renders, "t:<version>" last use (ms)
//	{usage}:keys           hash: <key id> → last use (ms)
//
// A flush takes every pending count out of Redis in one script, so several
// processes sharing a Redis never flush the same count twice; if the git
// write fails the counts are merged back. Reads add the pending counts to
// the durable totals.
//
// Renders and key uses are first counted in this process and pushed to
// Redis in one pipeline every UsageOptions.Batch (and before each flush):
// a round trip per render would cost more than the render. Another
// process sees the counts up to one batch interval late; this one sees
// them at once.
type Usage struct {
	r       *Redis
	durable quire.UsageLog
	opts    UsageOptions
	flushes *prometheus.CounterVec

	mu      sync.Mutex
	keySeen map[string]time.Time
	// local holds the counts not pushed to Redis yet.
	local *quire.UsageDelta
}

// UsageOptions configure Usage.
type UsageOptions struct {
	// KeyResolution is how often one process records the use of one API
	// key: uses closer together than this are not written to Redis again.
	// Zero records every use.
	KeyResolution time.Duration
	// Metrics, when set, receives quire_usage_flushes_total.
	Metrics prometheus.Registerer
	// Logger reports flushes that fail in Run.
	Logger *slog.Logger
	// Now returns the current time; tests may fix it.
	Now func() time.Time
	// Batch is how often Run pushes the counts held in this process to
	// Redis; zero means one second.
	Batch time.Duration
}

// NewUsage returns a Usage keeping pending counts in r and totals in durable.
func NewUsage(r *Redis, durable quire.UsageLog, opts UsageOptions) (*Usage, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Batch <= 0 {
		opts.Batch = time.Second
	}
	u := &Usage{r: r, durable: durable, opts: opts, keySeen: map[string]time.Time{}, local: newDelta()}
	u.flushes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "quire", Name: "usage_flushes_total",
		Help: "Flushes of usage counts from Redis to git, by result (ok, error).",
	}, []string{"result"})
	if opts.Metrics != nil {
		if err := opts.Metrics.Register(u.flushes); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// usageTag is the hash tag of every usage key: the flush script takes
// them all at once, and a Redis Cluster runs a script on one slot only.
const usageTag = "{usage}"

func (u *Usage) dirtyKey() string           { return u.r.key(usageTag, "dirty") }
func (u *Usage) promptKey(id string) string { return u.r.key(usageTag, "p", id) }
func (u *Usage) keysKey() string            { return u.r.key(usageTag, "keys") }
func millis(ms int64) time.Time             { return time.UnixMilli(ms).UTC() }
func usageUnavailable(err error) error {
	return &quire.Error{Code: quire.EUNAVAILABLE, Message: "usage store unavailable", Err: err}
}

var (
	// takeUsage empties the pending counts and returns them:
	// {{id1, {field, value, …}, id2, …}, {key id, ms, …}}.
	takeUsage = redis.NewScript(`
local prompts = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local k = ARGV[1] .. id
  table.insert(prompts, id)
  table.insert(prompts, redis.call('HGETALL', k))
  redis.call('DEL', k)
end
redis.call('DEL', KEYS[1])
local keys = redis.call('HGETALL', KEYS[2])
redis.call('DEL', KEYS[2])
return {prompts, keys}`)

	// mergeUsage adds fields back into a pending hash: "r:" fields are
	// counts to add, the others times to keep the latest of. ARGV[1], when
	// not empty, is the prompt id to mark dirty.
	mergeUsage = redis.NewScript(`
if ARGV[1] ~= '' then redis.call('SADD', KEYS[1], ARGV[1]) end
for i = 2, #ARGV, 2 do
  local f, v = ARGV[i], ARGV[i+1]
  if string.sub(f, 1, 2) == 'r:' then
    redis.call('HINCRBY', KEYS[2], f, v)
  else
    local cur = tonumber(redis.call('HGET', KEYS[2], f) or '0')
    if cur < tonumber(v) then redis.call('HSET', KEYS[2], f, v) end
  end
end
return 1`)
)

// RecordRender counts one render of version of promptID. The render
// handler calls it after a successful render; it only counts in memory,
// so it does not fail (a Redis outage shows when the batch is pushed).
func (u *Usage) RecordRender(_ context.Context, promptID string, version int) error {
	now := u.opts.Now()
	pv := quire.VersionKey{PromptID: promptID, Version: version}
	u.mu.Lock()
	u.local.Renders[pv]++
	if now.After(u.local.LastUsed[pv]) {
		u.local.LastUsed[pv] = now
	}
	u.mu.Unlock()
	return nil
}

// RecordKeyUse notes that an API key was used now.
func (u *Usage) RecordKeyUse(_ context.Context, keyID string) error {
	now := u.opts.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	if last, seen := u.keySeen[keyID]; seen && u.opts.KeyResolution > 0 && now.Sub(last) < u.opts.KeyResolution {
		return nil
	}
	u.keySeen[keyID] = now
	if now.After(u.local.KeysUsed[keyID]) {
		u.local.KeysUsed[keyID] = now
	}
	return nil
}

func newDelta() *quire.UsageDelta {
	return &quire.UsageDelta{
		Renders:  map[quire.VersionKey]int64{},
		LastUsed: map[quire.VersionKey]time.Time{},
		KeysUsed: map[string]time.Time{},
	}
}

// merge adds d's counts to into.
func merge(into, d *quire.UsageDelta) {
	for pv, n := range d.Renders {
		into.Renders[pv] += n
	}
	for pv, t := range d.LastUsed {
		if t.After(into.LastUsed[pv]) {
			into.LastUsed[pv] = t
		}
	}
	for id, t := range d.KeysUsed {
		if t.After(into.KeysUsed[id]) {
			into.KeysUsed[id] = t
		}
	}
}

// Push sends the counts held in this process to Redis. On failure they
// stay here for the next push.
func (u *Usage) Push(ctx context.Context) error {
	u.mu.Lock()
	d := u.local
	u.local = newDelta()
	u.mu.Unlock()
	if d.Empty() {
		return nil
	}
	if err := u.putBack(ctx, d); err != nil {
		u.mu.Lock()
		merge(u.local, d)
		u.mu.Unlock()
		return usageUnavailable(err)
	}
	return nil
}

// PromptUsage returns a prompt's durable totals plus its pending counts.
// With Redis down it answers the durable totals alone.
func (u *Usage) PromptUsage(ctx context.Context, promptID string) (*quire.PromptUsage, error) {
	out, err := u.durable.PromptUsage(ctx, promptID)
	if err != nil {
		return nil, err
	}
	pending, err := u.r.client.HGetAll(ctx, u.promptKey(promptID)).Result()
	if err != nil {
		pending = map[string]string{}
	}
	// Add what this process has not pushed yet.
	u.mu.Lock()
	for pv, n := range u.local.Renders {
		if pv.PromptID == promptID {
			f := "r:" + strconv.Itoa(pv.Version)
			x, _ := strconv.ParseInt(pending[f], 10, 64)
			pending[f] = strconv.FormatInt(x+n, 10)
		}
	}
	for pv, t := range u.local.LastUsed {
		if pv.PromptID == promptID {
			f := "t:" + strconv.Itoa(pv.Version)
			if x, _ := strconv.ParseInt(pending[f], 10, 64); t.UnixMilli() > x {
				pending[f] = strconv.FormatInt(t.UnixMilli(), 10)
			}
		}
	}
	u.mu.Unlock()
	byVersion := map[int]quire.VersionUsage{}
	for _, v := range out.Versions {
		byVersion[v.Version] = v
	}
	for f, val := range pending {
		kind, ver, _ := strings.Cut(f, ":")
		n, err1 := strconv.Atoi(ver)
		x, err2 := strconv.ParseInt(val, 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		v := byVersion[n]
		v.Version = n
		switch kind {
		case "r":
			v.Renders += x
		case "t":
			if t := millis(x); v.LastUsedAt == nil || t.After(*v.LastUsedAt) {
				v.LastUsedAt = &t
			}
		}
		byVersion[n] = v
	}
	out.Versions = make([]quire.VersionUsage, 0, len(byVersion))
	for _, v := range byVersion {
		out.Versions = append(out.Versions, v)
	}
	sort.Slice(out.Versions, func(i, j int) bool { return out.Versions[i].Version < out.Versions[j].Version })
	out.Renders, out.LastUsedAt = 0, nil
	for _, v := range out.Versions {
		out.Renders += v.Renders
		if v.LastUsedAt != nil && (out.LastUsedAt == nil || v.LastUsedAt.After(*out.LastUsedAt)) {
			t := *v.LastUsedAt
			out.LastUsedAt = &t
		}
	}
	return out, nil
}

// KeysLastUsed returns when each API key was last used: the durable times
// and the pending ones, whichever is later. With Redis down it answers the
// durable times alone.
func (u *Usage) KeysLastUsed(ctx context.Context) (map[string]time.Time, error) {
	out, err := u.durable.KeysLastUsed(ctx)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	for id, t := range u.local.KeysUsed {
		if t.After(out[id]) {
			out[id] = t
		}
	}
	u.mu.Unlock()
	pending, err := u.r.client.HGetAll(ctx, u.keysKey()).Result()
	if err != nil {
		return out, nil
	}
	for id, v := range pending {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		if t := millis(ms); t.After(out[id]) {
			out[id] = t
		}
	}
	return out, nil
}

// Flush pushes this process's counts, then moves every pending count
// into the durable log.
func (u *Usage) Flush(ctx context.Context) (err error) {
	defer func() {
		result := "ok"
		if err != nil {
			result = "error"
		}
		u.flushes.WithLabelValues(result).Inc()
	}()
	if err := u.Push(ctx); err != nil {
		return err
	}
	res, err := takeUsage.Run(ctx, u.r.client, []string{u.dirtyKey(), u.keysKey()}, u.promptKey("")).Slice()
	if err != nil {
		return usageUnavailable(err)
	}
	d, err := parseTaken(res)
	if err != nil {
		return err
	}
	if d.Empty() {
		return nil
	}
	if err := u.durable.AddUsage(ctx, d); err != nil {
		if perr := u.putBack(context.WithoutCancel(ctx), d); perr != nil {
			return fmt.Errorf("flush usage: %w; %d counts lost putting them back: %v", err, len(d.Renders), perr)
		}
		return fmt.Errorf("flush usage: %w", err)
	}
	return nil
}

// parseTaken turns takeUsage's answer into a delta.
func parseTaken(res []any) (*quire.UsageDelta, error) {
	d := &quire.UsageDelta{
		Renders:  map[quire.VersionKey]int64{},
		LastUsed: map[quire.VersionKey]time.Time{},
		KeysUsed: map[string]time.Time{},
	}
	if len(res) != 2 {
		return nil, fmt.Errorf("usage: unexpected flush answer")
	}
	prompts, _ := res[0].([]any)
	for i := 0; i+1 < len(prompts); i += 2 {
		id, _ := prompts[i].(string)
		fields, _ := prompts[i+1].([]any)
		for j := 0; j+1 < len(fields); j += 2 {
			f, _ := fields[j].(string)
			v, _ := fields[j+1].(string)
			kind, ver, _ := strings.Cut(f, ":")
			n, err1 := strconv.Atoi(ver)
			x, err2 := strconv.ParseInt(v, 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			pv := quire.VersionKey{PromptID: id, Version: n}
			switch kind {
			case "r":
				d.Renders[pv] += x
			case "t":
				if t := millis(x); t.After(d.LastUsed[pv]) {
					d.LastUsed[pv] = t
				}
			}
		}
	}
	keys, _ := res[1].([]any)
	for i := 0; i+1 < len(keys); i += 2 {
		id, _ := keys[i].(string)
		v, _ := keys[i+1].(string)
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			d.KeysUsed[id] = millis(ms)
		}
	}
	return d, nil
}

// putBack merges a delta that could not be flushed back into Redis.
func (u *Usage) putBack(ctx context.Context, d *quire.UsageDelta) error {
	args := map[string][]any{}
	for pv, n := range d.Renders {
		args[pv.PromptID] = append(args[pv.PromptID], "r:"+strconv.Itoa(pv.Version), n)
	}
	for pv, t := range d.LastUsed {
		args[pv.PromptID] = append(args[pv.PromptID], "t:"+strconv.Itoa(pv.Version), t.UnixMilli())
	}
	pipe := u.r.client.Pipeline()
	for id, a := range args {
		mergeUsage.Eval(ctx, pipe, []string{u.dirtyKey(), u.promptKey(id)}, append([]any{id}, a...)...)
	}
	if len(d.KeysUsed) > 0 {
		a := []any{""}
		for id, t := range d.KeysUsed {
			a = append(a, id, t.UnixMilli())
		}
		mergeUsage.Eval(ctx, pipe, []string{u.dirtyKey(), u.keysKey()}, a...)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// Run pushes this process's counts every Batch and flushes every
// interval until ctx ends. Call Flush once more after it returns (at
// shutdown) to keep what came in since.
func (u *Usage) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	push := time.NewTicker(u.opts.Batch)
	defer push.Stop()
	// While Redis is down every push fails: one warning per 10s is enough.
	var lastWarn time.Time
	skipped := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-push.C:
			if err := u.Push(ctx); err != nil && ctx.Err() == nil {
				if time.Since(lastWarn) < 10*time.Second {
					skipped++
					continue
				}
				u.opts.Logger.Warn("usage push to redis failed; counts kept in process, will retry", "error", err.Error(), "similar_lines_skipped", skipped)
				lastWarn, skipped = time.Now(), 0
			}
		case <-t.C:
			if err := u.Flush(ctx); err != nil && ctx.Err() == nil {
				u.opts.Logger.Warn("usage flush failed; will retry", "error", err.Error())
			}
		}
	}
}

var _ quire.Usage = (*Usage)(nil)
