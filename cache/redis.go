// Package cache holds everything quire keeps in Redis: login sessions,
// cached prompt reads, the pub/sub channel that keeps the in-process
// tiers of several quire processes coherent, usage counts and rate limit
// buckets. It is the only package that imports go-redis (and redis_rate)
// or miniredis.
package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// Options configures the Redis connection. At most one of URL,
// SentinelMaster (with SentinelAddrs) and ClusterAddrs names a Redis; with
// none, Open runs an embedded one.
type Options struct {
	// URL is a redis:// or rediss:// URL of one server, or
	// redis+sentinel://[user:password@]host:port,host:port/MASTER[/DB]
	// naming Sentinels and the master they watch.
	URL string
	// SentinelMaster and SentinelAddrs are the Sentinel form without a URL:
	// the monitored master's name and the Sentinels' host:port addresses.
	SentinelMaster string
	SentinelAddrs  []string
	// ClusterAddrs are host:port seeds of a Redis Cluster.
	ClusterAddrs []string
	// Password authenticates to the Redis servers (not the Sentinels) in
	// the Sentinel and Cluster forms; a URL carries its own.
	Password string
	// Prefix is put before every key, so several tests or deployments can
	// share one Redis.
	Prefix string
	// SnapshotPath is where the embedded Redis saves sessions on Close
	// and restores them from on start. Ignored with a real Redis.
	SnapshotPath string
	// Metrics, when set, receives quire_redis_* metrics (metrics.go).
	Metrics prometheus.Registerer
	// TracerProvider, when set, traces every Redis command.
	TracerProvider trace.TracerProvider
}

// Mode is how quire reaches Redis.
type Mode string

// The modes Open can connect in.
const (
	ModeEmbedded Mode = "embedded"
	ModeSingle   Mode = "single"
	ModeSentinel Mode = "sentinel"
	ModeCluster  Mode = "cluster"
)

// Redis is quire's connection to Redis, real or embedded: one server,
// a Sentinel-watched primary or a Cluster, all through go-redis's
// UniversalClient, so nothing above Open knows which.
type Redis struct {
	opts     Options
	mode     Mode
	client   redis.UniversalClient
	embedded *miniredis.Miniredis
}

// Open connects to Redis (or starts the embedded one) and, when embedded,
// restores the sessions snapshot.
func Open(ctx context.Context, opts Options) (*Redis, error) {
	r := &Redis{opts: opts}
	uo, mode, err := universalOptions(opts)
	if err != nil {
		return nil, err
	}
	r.mode = mode
	if mode == ModeEmbedded {
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("start embedded redis: %w", err)
		}
		r.embedded = m
		r.client = redis.NewClient(&redis.Options{Addr: m.Addr()})
		if err := r.instrument(); err != nil {
			r.Close()
			return nil, err
		}
		if err := r.restore(ctx); err != nil {
			r.Close()
			return nil, err
		}
		return r, nil
	}
	uo.DialTimeout = 2 * time.Second
	uo.ReadTimeout = time.Second
	uo.WriteTimeout = time.Second
	uo.MaxRetries = 1
	// A Redis that refuses connections is down: say so at once (callers
	// fail open or answer 503) rather than redial for half a second on
	// every command, which would stall every request during an outage.
	uo.DialerRetries = 1
	r.client = redis.NewUniversalClient(uo)
	if err := r.instrument(); err != nil {
		r.client.Close()
		return nil, err
	}
	return r, nil
}

// universalOptions turns Options into go-redis's, and says which mode
// they name.
func universalOptions(o Options) (*redis.UniversalOptions, Mode, error) {
	set := 0
	for _, b := range []bool{o.URL != "", o.SentinelMaster != "" || len(o.SentinelAddrs) > 0, len(o.ClusterAddrs) > 0} {
		if b {
			set++
		}
	}
	if set > 1 {
		return nil, "", errors.New("redis: give one of a URL, a Sentinel master with its Sentinels, or Cluster addresses")
	}
	switch {
	case strings.HasPrefix(o.URL, "redis+sentinel://"):
		return parseSentinelURL(o.URL)
	case o.URL != "":
		so, err := redis.ParseURL(o.URL)
		if err != nil {
			return nil, "", fmt.Errorf("parse redis url: %w", err)
		}
		return &redis.UniversalOptions{
			Addrs: []string{so.Addr}, Username: so.Username, Password: so.Password,
			DB: so.DB, TLSConfig: so.TLSConfig,
		}, ModeSingle, nil
	case o.SentinelMaster != "" || len(o.SentinelAddrs) > 0:
		if o.SentinelMaster == "" || len(o.SentinelAddrs) == 0 {
			return nil, "", errors.New("redis: Sentinel needs both the master's name and the Sentinels' addresses")
		}
		addrs, err := checkAddrs(o.SentinelAddrs)
		if err != nil {
			return nil, "", err
		}
		return &redis.UniversalOptions{MasterName: o.SentinelMaster, Addrs: addrs, Password: o.Password}, ModeSentinel, nil
	case len(o.ClusterAddrs) > 0:
		addrs, err := checkAddrs(o.ClusterAddrs)
		if err != nil {
			return nil, "", err
		}
		return &redis.UniversalOptions{Addrs: addrs, IsClusterMode: true, Password: o.Password}, ModeCluster, nil
	}
	return nil, ModeEmbedded, nil
}

// parseSentinelURL reads redis+sentinel://[user:password@]h:p,h:p/MASTER[/DB].
// go-redis's ParseFailoverURL takes one address and the master as a query
// parameter; this is the form operators write (and Lettuce reads).
func parseSentinelURL(raw string) (*redis.UniversalOptions, Mode, error) {
	rest := strings.TrimPrefix(raw, "redis+sentinel://")
	bad := func(why string) (*redis.UniversalOptions, Mode, error) {
		return nil, "", fmt.Errorf("parse redis url: %s (want redis+sentinel://host:port,host:port/MASTER)", why)
	}
	o := &redis.UniversalOptions{}
	hosts, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(hosts, "@"); at >= 0 {
		info, err := url.PathUnescape(hosts[:at])
		if err != nil {
			return bad("bad user information")
		}
		user, pass, ok := strings.Cut(info, ":")
		if ok {
			o.Username, o.Password = user, pass
		} else {
			o.Password = user
		}
		hosts = hosts[at+1:]
	}
	if hosts == "" {
		return bad("no Sentinel address")
	}
	addrs, err := checkAddrs(strings.Split(hosts, ","))
	if err != nil {
		return nil, "", fmt.Errorf("parse redis url: %w", err)
	}
	o.Addrs = addrs
	if q := strings.IndexByte(path, '?'); q >= 0 {
		return bad("query parameters are not read")
	}
	name, db, _ := strings.Cut(path, "/")
	if name == "" {
		return bad("no master name")
	}
	o.MasterName = name
	if db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return bad("bad database number")
		}
		o.DB = n
	}
	return o, ModeSentinel, nil
}

// checkAddrs trims host:port addresses and refuses malformed ones, so a
// typo fails at start-up rather than as a dial error on every request.
func checkAddrs(in []string) ([]string, error) {
	var out []string
	for _, a := range in {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, fmt.Errorf("redis: %q is not host:port", a)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, errors.New("redis: no address given")
	}
	return out, nil
}

// Mode reports how this Redis is reached.
func (r *Redis) Mode() Mode { return r.mode }

// Embedded reports whether this is the in-process Redis.
func (r *Redis) Embedded() bool { return r.embedded != nil }

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return unavailable(err)
	}
	return nil
}

// Close snapshots sessions (embedded only) and closes the connection.
func (r *Redis) Close() error {
	var err error
	if r.embedded != nil {
		err = r.snapshot(context.Background())
	}
	if cerr := r.client.Close(); err == nil {
		err = cerr
	}
	if r.embedded != nil {
		r.embedded.Close()
	}
	return err
}

func (r *Redis) key(parts ...string) string {
	k := r.opts.Prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += p
	}
	return k
}

// unavailable wraps a Redis failure as a 503.
func unavailable(err error) error {
	return &quire.Error{Code: quire.EUNAVAILABLE, Message: "session store unavailable", Err: err}
}

// snapshot writes every session to SnapshotPath, atomically.
func (r *Redis) snapshot(ctx context.Context) error {
	if r.opts.SnapshotPath == "" {
		return nil
	}
	var all []*quire.Session
	for _, k := range r.embedded.Keys() {
		if !isSessionKey(r.opts.Prefix, k) {
			continue
		}
		v, err := r.embedded.Get(k)
		if err != nil {
			continue
		}
		s := &quire.Session{}
		if json.Unmarshal([]byte(v), s) == nil {
			all = append(all, s)
		}
	}
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	tmp := r.opts.SnapshotPath + ".tmp"
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.opts.SnapshotPath)
}

func isSessionKey(prefix, k string) bool {
	p := prefix + sessionsTag + ":sess:"
	return len(k) > len(p) && k[:len(p)] == p
}

// restore loads the sessions snapshot into the embedded Redis.
func (r *Redis) restore(ctx context.Context) error {
	if r.opts.SnapshotPath == "" {
		return nil
	}
	b, err := os.ReadFile(r.opts.SnapshotPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read sessions snapshot: %w", err)
	}
	var all []*quire.Session
	if err := json.Unmarshal(b, &all); err != nil {
		return fmt.Errorf("decode sessions snapshot: %w", err)
	}
	for _, s := range all {
		if time.Until(s.ExpiresAt) > 0 {
			if err := r.CreateSession(ctx, s); err != nil {
				return err
			}
		}
	}
	// The snapshot is consumed: were it kept, a crash (no new snapshot)
	// would bring back sessions revoked since this start.
	if err := os.Remove(r.opts.SnapshotPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove sessions snapshot: %w", err)
	}
	return nil
}

// DeleteAll removes every key under the configured prefix. Tests sharing
// one Redis use it to clean up after themselves (never FLUSHALL).
func (r *Redis) DeleteAll(ctx context.Context) error {
	if r.opts.Prefix == "" {
		return errors.New("cache: refusing to delete all keys without a prefix")
	}
	return r.deleteMatching(ctx, r.opts.Prefix+"*")
}

// deleteMatching deletes the keys matching a SCAN pattern. A Cluster
// spreads keys over its primaries, and SCAN walks one server: each
// primary is scanned in turn.
func (r *Redis) deleteMatching(ctx context.Context, pattern string) error {
	del := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			if err := c.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	}
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return del(ctx, c) })
	}
	return del(ctx, r.client)
}
