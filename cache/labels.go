package cache

import (
	"context"
	"encoding/json"

	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
)

// The label tier: reads by label (a render of {"label": "staging"}) are
// cached in the two tiers as live reads are, one entry per prompt and
// label, and checked the same way. Each entry is stamped with the commit
// of the prompt's label log (refs/meta/labels) it was read at, and each
// read first asks the store for that commit (one ref read on the shared
// data root): an entry is used only when the stamps agree. Every label
// move and delete commits to the label log, so a move on any node is
// seen by the next read on every node, whether or not its pub/sub
// message arrives; a lost message costs a miss, never a stale answer.
//
// The stamp is the label log's, not the label's own ref, because the log
// is the record (refs/labels/<name> follows it, and a crash can leave it
// behind) and reading one ref is all a check may cost. Moving one label
// therefore also retires the entries of the prompt's other labels: a
// miss each, on a rare write.
//
// Invalidation (the store's change hook, as for live) drops the prompt's
// label entries with its live entry, in process and in Redis, where they
// are fields of one hash per prompt so one DEL takes them all.

// labelSource is a store that reads by label at a label-log commit
// (gitstore.Store).
type labelSource interface {
	LabelsCommit(ctx context.Context, a *quire.Asset) (string, error)
	LabelPromptAt(ctx context.Context, a *quire.Asset, name, at string) (*quire.PromptVersion, error)
}

// labelEntry is a read by label and the label-log commit it was read at.
type labelEntry struct {
	at string
	pv *quire.PromptVersion
}

func (p *Prompts) labelsKey(id string) string { return p.key("prompt", id, "labels") }

// LabelPrompt returns the version label name of a names, with its
// content, from the first tier whose entry was read at the label log's
// current commit. A store that cannot read by label is ENOTFOUND.
func (p *Prompts) LabelPrompt(ctx context.Context, a *quire.Asset, name string) (*quire.PromptVersion, error) {
	src, ok := p.next.(labelSource)
	if !ok {
		return nil, quire.Errorf(quire.EUNAVAILABLE, "labels are not kept by this server")
	}
	at, err := src.LabelsCommit(ctx, a)
	if err != nil {
		return nil, err
	}
	if at == "" {
		return nil, quire.Errorf(quire.ENOTFOUND, "label %s not found", name)
	}
	p.mu.RLock()
	e := p.labels[a.ID][name]
	p.mu.RUnlock()
	if e != nil && e.at == at {
		p.stats.labelHits.Add(1)
		return e.pv, nil
	}
	p.stats.labelMisses.Add(1)
	v, err, _ := p.flight.Do(a.ID+"#"+name+"@"+at, func() (any, error) {
		if pv := p.labelFromRedis(ctx, a, name, at); pv != nil {
			p.storeLabel(a.ID, name, &labelEntry{at: at, pv: pv})
			return pv, nil
		}
		p.stats.labelLoads.Add(1)
		pv, err := src.LabelPromptAt(ctx, a, name, at)
		if err != nil {
			return nil, err
		}
		p.storeLabel(a.ID, name, &labelEntry{at: at, pv: pv})
		p.labelToRedis(ctx, a, name, at, pv)
		return pv, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*quire.PromptVersion), nil
}

// cachedLabel is a read by label as stored in Redis: the version and
// content, and the label log's commit it was read at.
type cachedLabel struct {
	At string `json:"at"`
	cachedPrompt
}

func (p *Prompts) labelFromRedis(ctx context.Context, a *quire.Asset, name, at string) *quire.PromptVersion {
	var cl cachedLabel
	get := func(ctx context.Context) *redis.StringCmd { return p.rdb.HGet(ctx, p.labelsKey(a.ID), name) }
	return p.readEntry(ctx, a, "hget", get, &cl, &cl.cachedPrompt, func() bool { return cl.At == at })
}

func (p *Prompts) labelToRedis(ctx context.Context, a *quire.Asset, name, at string, pv *quire.PromptVersion) {
	if !p.redisUp() {
		return
	}
	b, err := json.Marshal(cachedLabel{At: at, cachedPrompt: cachedPrompt{Version: pv.Version, Content: pv.Content}})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.opts.Timeout)
	defer cancel()
	key := p.labelsKey(a.ID)
	_, err = p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.HSet(ctx, key, name, b)
		pipe.Expire(ctx, key, p.opts.TTL)
		return nil
	})
	if err != nil {
		p.redisFailed("hset", err)
	}
}

func (p *Prompts) storeLabel(id, name string, e *labelEntry) {
	p.mu.Lock()
	if len(p.labels) >= p.opts.MaxLocal {
		clear(p.labels)
	}
	m := p.labels[id]
	if m == nil {
		m = map[string]*labelEntry{}
		p.labels[id] = m
	}
	m[name] = e
	p.mu.Unlock()
}
