package cache

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
)

// AssetChanges carries the store's change hooks (a write to a skill or a
// prompt) to every process sharing the Redis, over pub/sub, for doors
// that hold open sessions (MCP's list_changed and resource updates). A
// process hears its own changes back through the same channel, so every
// subscriber sees a change once, wherever it was made.
type AssetChanges struct {
	rdb     redis.UniversalClient
	channel string
	log     *slog.Logger

	mu   sync.Mutex
	subs []func(kind quire.Kind, assetID string)

	sub  *redis.PubSub
	done chan struct{}
}

// NewAssetChanges starts listening for changes on r. Close stops it.
func NewAssetChanges(r *Redis, log *slog.Logger) *AssetChanges {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &AssetChanges{rdb: r.client, channel: r.key("changes"), log: log, done: make(chan struct{})}
	c.sub = c.rdb.Subscribe(context.Background(), c.channel)
	// As the other subscribers: wait briefly for Redis to confirm, so a
	// change published right after start is not lost to this process.
	ctx, cancel := context.WithTimeout(context.Background(), subscribeWait)
	c.sub.Receive(ctx)
	cancel()
	go c.listen()
	return c
}

// Subscribe calls fn after every change, from any process. fn runs on the
// listener's goroutine: it must not block for long.
func (c *AssetChanges) Subscribe(fn func(kind quire.Kind, assetID string)) {
	c.mu.Lock()
	c.subs = append(c.subs, fn)
	c.mu.Unlock()
}

// Publish tells every process that asset assetID of kind changed. Its
// signature fits gitstore's OnChange hook. When Redis cannot take the
// message, this process's subscribers still hear it.
func (c *AssetChanges) Publish(kind quire.Kind, assetID string) {
	// As long as the prompt cache gives Redis on the write path: the
	// hooks run after every write, and a stalled Redis must not hold it.
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	if err := c.rdb.Publish(ctx, c.channel, string(kind)+":"+assetID).Err(); err != nil {
		c.log.Warn("change feed: redis failed; told this process only", "error", err.Error())
		c.deliver(kind, assetID)
	}
}

func (c *AssetChanges) listen() {
	defer close(c.done)
	for msg := range c.sub.Channel() {
		kind, id, ok := strings.Cut(msg.Payload, ":")
		if !ok || !quire.Kind(kind).Valid() {
			continue
		}
		c.deliver(quire.Kind(kind), id)
	}
}

func (c *AssetChanges) deliver(kind quire.Kind, id string) {
	c.mu.Lock()
	subs := c.subs
	c.mu.Unlock()
	for _, fn := range subs {
		fn(kind, id)
	}
}

// Close stops listening.
func (c *AssetChanges) Close() error {
	err := c.sub.Close()
	<-c.done
	return err
}
