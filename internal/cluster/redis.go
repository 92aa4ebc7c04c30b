// Package cluster keeps, in Redis, what the replicas of one gateway must
// agree on at once, where each replica's memory would let them disagree:
//
//   - rate-limit buckets (Buckets): one Lua script per admission, on the
//     Redis server's clock, so that a burst of N across every replica
//     admits exactly N, whatever the replicas' clocks say;
//   - token events (Publish, Watch): a token created or revoked through one
//     replica is announced on a channel, and every other replica applies it
//     at once. Streams held open with a revoked token end. A replica that
//     missed messages, its subscription broken, catches up from the store,
//     which stays the source of truth;
//   - sessions (Sessions): which sealed sessions are open and when each was
//     last used, and so how many an identity holds, across replicas.
//
// Keys are hashes of what they name (an identity, a rule, a session), never
// the names: a hostile identity cannot reach another key, and nothing in
// Redis reveals who called. Everything lives under one prefix.
//
// Without Redis, each replica keeps its own buckets and counts, and hears
// of other replicas' token changes at its next store refresh (the README
// says what that means).
package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key and channel.
const DefaultPrefix = "mcpgate:"

// Options configure Open.
type Options struct {
	// URL is redis://[user@]host:port/db or rediss:// for TLS. A password
	// in it is refused: it goes in Password.
	URL string
	// Password, if any (from a file or the environment, never the YAML).
	Password string
	// Prefix of keys and channels (default DefaultPrefix): replicas of
	// one gateway share it, and two gateways on one Redis do not.
	Prefix string
	Logger *slog.Logger
}

// Redis is a connection pool to one Redis server. It is safe for
// concurrent use.
type Redis struct {
	rdb    *redis.Client
	prefix string
	log    *slog.Logger
	leases *leases // the rate-limit tokens this replica holds (buckets.go)

	stopSweep context.CancelFunc // ends sweepLeases
	swept     chan struct{}      // closed when sweepLeases has returned
}

// ErrPasswordInURL refuses a URL carrying a password.
var ErrPasswordInURL = errors.New("redis: the URL must not carry a password (use redis.password_file or MCPGATE_REDIS_PASSWORD)")

// ParseURL checks a Redis URL without connecting; its errors never quote
// the URL (it might hold a secret after all).
func ParseURL(raw string) (*redis.Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("redis: the URL does not parse")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("redis: the URL's scheme is %q, not redis or rediss", u.Scheme)
	}
	if _, has := u.User.Password(); has {
		return nil, ErrPasswordInURL
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, errors.New("redis: " + strings.ReplaceAll(err.Error(), raw, "URL"))
	}
	return opts, nil
}

// Open connects and checks that the server answers.
func Open(ctx context.Context, o Options) (*Redis, error) {
	opts, err := ParseURL(o.URL)
	if err != nil {
		return nil, err
	}
	opts.Password = o.Password
	opts.PoolSize = max(opts.PoolSize, 32)
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Redis{rdb: redis.NewClient(opts), prefix: o.Prefix, log: o.Logger, leases: &leases{byKey: map[string]*lease{}}}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.rdb.Ping(pctx).Err(); err != nil {
		_ = r.rdb.Close()
		return nil, fmt.Errorf("redis: %s does not answer: %w", opts.Addr, err)
	}
	sweepCtx, stop := context.WithCancel(context.Background())
	r.stopSweep, r.swept = stop, make(chan struct{})
	go func() {
		defer close(r.swept)
		buckets{r}.sweepLeases(sweepCtx)
	}()
	return r, nil
}

// Close gives back the rate-limit tokens leased and not spent, and ends
// the pool.
func (r *Redis) Close() error {
	r.stopSweep()
	<-r.swept
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	buckets{r}.returnAll(ctx)
	return r.rdb.Close()
}

// Ping reports whether the server answers (readiness).
func (r *Redis) Ping(ctx context.Context) error { return r.rdb.Ping(ctx).Err() }

// key is prefix + kind + ":" + the hash of the parts.
func (r *Redis) key(kind string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return r.prefix + kind + ":" + hex.EncodeToString(h.Sum(nil)[:16])
}
