// buckets.go is the rate limiter's shared buckets: a token bucket per key
// in a Redis hash, holding the tokens and when they were counted. One
// script spends them, reading the Redis server's clock. Every replica so
// spends from the same bucket at the same instant, and no two admissions
// race.
//
// A round trip per call is what a replica paid for that: 45 µs of CPU per
// relayed call in the harness, more than the rest of the shared engines'
// work. So a replica leases tokens from a large bucket in batches and
// spends them in memory. A batch starts at leaseSize and grows while the
// replica spends its leases before they expire (nextLeaseSize). A replica
// returns what it did not use once the lease is leaseTTL old, whether or
// not calls still come to it (sweepLeases). A lease is granted only while
// the bucket, after it, still holds half its burst. Below that, and in
// every bucket of fewer than minLeaseBurst tokens, each token is one
// round trip, as before. So a burst of N never admits more than N across
// replicas, and admits all N: each replica then holds at most one lease,
// which its next calls spend or which is back within leaseTTL.

package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/tick"
)

// bucketScript is the one script of a bucket: KEYS[1], refilling ARGV[1]
// tokens a second up to ARGV[2]. It first takes back ARGV[5] unspent
// tokens (never above the burst). Then, when ARGV[3] asks for tokens, it
// spends one, or ARGV[3] when the bucket holds at least ARGV[4] more than
// that (a lease). It answers {tokens spent, 0}, or {0, microseconds until
// a token is there}. The bucket expires once it would be full again: a
// full bucket and no bucket are the same.
var bucketScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local keep = tonumber(ARGV[4])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
  at = now
end
tokens = math.min(burst, tokens + tonumber(ARGV[5]))
local spent = 0
local wait = 0
if want > 1 and tokens - want >= keep then
  spent = want
elseif want >= 1 and tokens >= 1 then
  spent = 1
elseif want >= 1 then
  wait = math.ceil((1 - tokens) * 1000000 / rate)
end
tokens = tokens - spent
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return {spent, wait}
`)

const (
	// leaseSize is how many tokens a bucket's first lease takes.
	leaseSize = 16
	// maxLeaseSize bounds a lease, as does a sixteenth of the burst.
	maxLeaseSize = 256
	// minLeaseBurst: a bucket of a smaller burst is never leased.
	minLeaseBurst = 256
	// leaseTTL is how long a replica keeps a lease's unspent tokens.
	leaseTTL = 250 * time.Millisecond
)

// lease is the tokens a replica holds of one bucket.
type lease struct {
	mu      sync.Mutex
	left    int
	limit   policy.Limit
	expires time.Time
	size    int // of the next lease (nextLeaseSize); 0 before the first
}

// nextLeaseSize is the size of a bucket's next lease after one of size
// was spent before it expired (spent) or not. A lease spent in time
// doubles the next, so a busy replica asks Redis less the busier it is;
// one that expired with tokens left halves it. It stays between
// leaseSize and the smaller of maxLeaseSize and burst/16: a replica never
// holds much of a bucket, whose last half is never leased anyway.
func nextLeaseSize(size int, spent bool, burst int) int {
	if size == 0 {
		return leaseSize
	}
	if spent {
		size *= 2
	} else {
		size /= 2
	}
	return max(leaseSize, min(size, maxLeaseSize, burst/16))
}

// leases are a replica's, by bucket key.
type leases struct {
	mu    sync.Mutex
	byKey map[string]*lease
}

// locked is key's lease, locked, and in the map: a sweep forgets only a
// lease it holds locked, so one found still there after locking stays.
func (ls *leases) locked(key string) *lease {
	for {
		ls.mu.Lock()
		le := ls.byKey[key]
		if le == nil {
			le = &lease{}
			ls.byKey[key] = le
		}
		ls.mu.Unlock()
		le.mu.Lock()
		ls.mu.Lock()
		kept := ls.byKey[key] == le
		ls.mu.Unlock()
		if kept {
			return le
		}
		le.mu.Unlock()
	}
}

// Buckets are the shared rate-limit buckets.
func (r *Redis) Buckets() policy.SharedBuckets { return buckets{r} }

type buckets struct{ r *Redis }

func (b buckets) Take(ctx context.Context, key string, l policy.Limit) (bool, time.Duration, error) {
	now := time.Now()
	ls := b.r.leases
	var le *lease
	if l.Burst >= minLeaseBurst {
		le = ls.locked(key)
		defer le.mu.Unlock()
		if le.left > 0 && now.Before(le.expires) && le.limit == l {
			le.left--
			return true, 0, nil
		}
		spent := le.left == 0 && now.Before(le.expires)
		if le.left > 0 {
			b.giveBack(ctx, key, le)
		}
		le.size = nextLeaseSize(le.size, spent, l.Burst)
	}
	want := 1
	if le != nil {
		want = le.size
	}
	res, err := bucketScript.Run(ctx, b.r.rdb, []string{b.r.key("rl", key)}, l.Rate, l.Burst, want, l.Burst/2, 0).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(res) != 2 {
		return false, 0, errShortReply
	}
	if res[0] >= 1 {
		if le != nil {
			le.left, le.limit, le.expires = int(res[0])-1, l, now.Add(leaseTTL)
		}
		return true, 0, nil
	}
	return false, time.Duration(res[1]) * time.Microsecond, nil
}

// giveBack returns le's unspent tokens to the bucket key; le is locked.
func (b buckets) giveBack(ctx context.Context, key string, le *lease) {
	n := le.left
	le.left = 0
	if err := bucketScript.Run(ctx, b.r.rdb, []string{b.r.key("rl", key)}, le.limit.Rate, le.limit.Burst, 0, 0, n).Err(); err != nil {
		b.r.log.Warn("rate limit: unspent leased tokens not returned", "tokens", n, "err", err)
	}
}

// returnExpired returns every lease's unspent tokens once it is older
// than leaseTTL, and forgets the leases that hold none.
func (b buckets) returnExpired(ctx context.Context, now time.Time) {
	ls := b.r.leases
	ls.mu.Lock()
	keys := make([]string, 0, len(ls.byKey))
	held := make([]*lease, 0, len(ls.byKey))
	for k, le := range ls.byKey {
		keys, held = append(keys, k), append(held, le)
	}
	ls.mu.Unlock()
	for i, le := range held {
		if !le.mu.TryLock() {
			continue // in use: its owner deals with it
		}
		if !now.Before(le.expires) {
			if le.left > 0 {
				b.giveBack(ctx, keys[i], le)
			}
			ls.mu.Lock()
			if ls.byKey[keys[i]] == le && le.left == 0 {
				delete(ls.byKey, keys[i])
			}
			ls.mu.Unlock()
		}
		le.mu.Unlock()
	}
}

// sweepLeases returns the expired leases' unspent tokens every leaseTTL
// until ctx ends. A replica that no call reaches any more would otherwise
// keep them until it closed, and the other replicas refuse calls the
// bucket has tokens for.
func (b buckets) sweepLeases(ctx context.Context) {
	// A return under way finishes when ctx ends (Close): its tokens
	// would be lost, not kept for Close to return.
	calls := context.WithoutCancel(ctx)
	tick.Every(ctx, leaseTTL, func(now time.Time) bool {
		b.returnExpired(calls, now)
		return true
	})
}

// returnAll gives back every lease's unspent tokens (Close).
func (b buckets) returnAll(ctx context.Context) {
	b.returnExpired(ctx, time.Now().Add(leaseTTL+time.Hour))
}
