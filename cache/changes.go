package cache

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Changes tells quire processes on other hosts that a ref moved, over a
// Redis pub/sub channel (gitstore's ChangeFeed). Processes on one host
// learn it from the data root's mapped counter; a page mapped on two NFS
// clients is not shared, so between hosts the message goes through Redis.
//
// Generation counts the messages received, plus one for every
// (re)subscription: go-redis resubscribes by itself after a lost
// connection, and whatever was published meanwhile is lost, so every
// remembered ref is read again then. Redis drops a subscriber's messages
// only with its connection (a failover, the pub/sub output buffer limit);
// until the client notices, and for any message lost some other way, a
// reader stays behind for at most gitstore's refSeenFor, one second.
type Changes struct {
	rdb     redis.UniversalClient
	channel string
	timeout time.Duration
	log     *slog.Logger

	gen        atomic.Uint64
	subscribed atomic.Bool
	downUntil  atomic.Int64 // unix ns before which Publish does not try
	sub        *redis.PubSub
	done       chan struct{}
}

// NewChanges subscribes to the change channel of r's prefix. Close stops
// it.
func NewChanges(r *Redis, log *slog.Logger) *Changes {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Changes{rdb: r.client, channel: r.key("refs", "moved"), timeout: 250 * time.Millisecond, log: log, done: make(chan struct{})}
	c.sub = c.rdb.Subscribe(context.Background(), c.channel)
	// Until the subscription is confirmed Generation vouches for nothing;
	// wait for it briefly, so a node serves from memory from the start.
	ctx, cancel := context.WithTimeout(context.Background(), subscribeWait)
	if _, err := c.sub.Receive(ctx); err == nil {
		c.subscribed.Store(true)
	}
	cancel()
	go c.listen()
	return c
}

func (c *Changes) listen() {
	defer close(c.done)
	for m := range c.sub.ChannelWithSubscriptions() {
		c.gen.Add(1)
		if _, ok := m.(*redis.Subscription); ok {
			c.subscribed.Store(true)
		}
	}
}

// Publish tells the other processes a ref moved. It waits for Redis (at
// most a quarter second), so that by the time the write it follows is
// acknowledged the message is on its way to every subscriber. A failure
// is logged: the others then see the move within a second.
//
// After a failure Redis is left alone for a second: a write moves several
// refs, and each would otherwise wait for a Redis that is not there.
func (c *Changes) Publish() {
	if time.Now().UnixNano() < c.downUntil.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if err := c.rdb.Publish(ctx, c.channel, "1").Err(); err != nil {
		c.downUntil.Store(time.Now().Add(time.Second).UnixNano())
		c.log.Warn("ref change not published; other hosts see it within a second", "error", err.Error())
	}
}

// Generation is the number of messages and subscriptions received; ok is
// false until the first subscription is confirmed.
func (c *Changes) Generation() (uint64, bool) {
	return c.gen.Load(), c.subscribed.Load()
}

// Subscribed reports whether the channel has been subscribed to.
func (c *Changes) Subscribed() bool { return c.subscribed.Load() }

// Close unsubscribes.
func (c *Changes) Close() error {
	err := c.sub.Close()
	<-c.done
	return err
}
