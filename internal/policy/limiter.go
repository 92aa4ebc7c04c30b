// limiter.go is the rate limiter: token buckets (golang.org/x/time/rate)
// keyed by identity, by identity × entry rule, and optionally by entry.
//
// Bucket keys, and why:
//   - The default and role rules draw from the identity's general bucket:
//     one budget per principal, whatever it calls.
//   - An entry rule draws from a bucket of its own per identity (identity ×
//     rule). Throttling "expensive_*" to 1/min so neither spends nor is
//     spent by the identity's general budget. An agent that used its
//     expensive call still has its cheap ones, and the reverse.
//   - PerEntry splits any of these further by entry (identity × rule ×
//     entry).
//   - Opening a session or a stream (mcp.KindSession) is counted under the
//     same rule as a call, in a bucket of its own. A flood of initialize is
//     throttled at the caller's call rate, and a session opened spends none
//     of the calls.
//
// Memory: a bucket that has refilled to its burst is indistinguishable from
// a fresh one, so Sweep drops it. After Sweep(now) the limiter holds only
// the buckets that spent a token within their refill time (Burst/Rate) of
// now; between sweeps it grows by at most the new keys seen. So memory is
// bounded by the callers active in the longest refill window plus one
// sweep interval, not by every identity ever seen.

package policy

import (
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpgate/mcpgate/internal/tick"
	"github.com/mcpgate/mcpgate/mcp"
)

// Limiter admits or refuses calls by token bucket. It is safe for
// concurrent use.
//
// The buckets live in this process unless the limiter is given shared
// ones (WithShared): replicas behind one load balancer must spend from the
// same buckets, or a burst of N admits N per replica.
type Limiter struct {
	rules    LimitRules
	entryIDs []string
	now      func() time.Time
	shared   SharedBuckets // nil: the buckets below
	// sharedErr hears of a failure to reach the shared buckets.
	sharedErr func(error)

	// mu guards the map. Every spend holds it for reading, and Sweep for
	// writing, so that a bucket is never dropped between being looked up
	// and being spent (which would hand its caller a fresh, full bucket).
	mu      sync.RWMutex
	buckets map[bucketKey]*bucket
}

type bucketKey struct {
	identity string // mcp.Identity.Budget(): one principal, one budget
	rule     string // rule.id
	entry    string // kind and name when PerEntry, else ""
}

// SharedBuckets are token buckets kept outside the process (in Redis:
// package cluster), spent atomically by every replica. Take spends one
// token of the bucket named by key, of shape l, or spends nothing and says
// how long until a token is there. Keys are opaque: identity, rule and
// entry, each length-prefixed (so no two bucket keys collide), which the
// implementation may hash. An error means the buckets could not be
// reached; the Limiter then admits (a rate limit that fails closed would
// make the shared store's outage everyone's).
type SharedBuckets interface {
	Take(ctx context.Context, key string, l Limit) (ok bool, retryAfter time.Duration, err error)
}

// String is the key as SharedBuckets see it.
func (k bucketKey) String() string {
	var b []byte
	for _, part := range [...]string{k.identity, k.rule, k.entry} {
		b = strconv.AppendInt(b, int64(len(part)), 10)
		b = append(b, ':')
		b = append(b, part...)
	}
	return string(b)
}

// bucket serializes its spends: reserve-then-cancel is only exact when no
// other reservation lands between the two (rate restores only the tokens
// nobody reserved after), and x/time/rate lets time run backwards into a
// bucket's past, which would count a refill twice.
type bucket struct {
	mu   sync.Mutex
	lim  *rate.Limiter
	last time.Time // latest instant spent at
}

// NewLimiter returns a limiter for rules, reading time from now (time.Now
// when nil; tests pass a fake clock). Rules must pass Validate — the
// configuration checks them first, so that the error names the bad key —
// and NewLimiter panics on rules that do not. The rules are copied.
func NewLimiter(rules LimitRules, now func() time.Time) *Limiter {
	if err := rules.Validate(); err != nil {
		panic(err)
	}
	if now == nil {
		now = time.Now
	}
	rules.Roles = maps.Clone(rules.Roles)
	rules.Entries = slices.Clone(rules.Entries)
	ids := make([]string, len(rules.Entries))
	for i := range ids {
		ids[i] = "entry:" + strconv.Itoa(i)
	}
	return &Limiter{rules: rules, entryIDs: ids, now: now, buckets: map[bucketKey]*bucket{}}
}

// Allow spends one token of the bucket id draws from for e. When the bucket
// is empty nothing is spent, and retryAfter is how long until a token will
// be there: a caller who waits that long is admitted, unless someone else
// spends the token first. The role rule is found by id.Role; to fall back
// from a custom role to its base role's rule, go through the Gate, which
// knows the mapping.
func (l *Limiter) Allow(id mcp.Identity, e mcp.Entry) (ok bool, retryAfter time.Duration) {
	return l.allow(context.Background(), id, "", e)
}

// WithShared returns a limiter of the same rules spending from b instead
// of buckets of its own; failures to reach b are passed to onErr (which
// may be nil) and admit the call.
func (l *Limiter) WithShared(b SharedBuckets, onErr func(error)) *Limiter {
	out := NewLimiter(l.rules, l.now)
	out.shared, out.sharedErr = b, onErr
	return out
}

func (l *Limiter) allow(ctx context.Context, id mcp.Identity, base string, e mcp.Entry) (bool, time.Duration) {
	r := l.rules.ruleFor(id.Role, base, e, l.entryIDs)
	if r.unlimited() {
		return true, 0
	}
	key := bucketKey{identity: id.Budget(), rule: r.id}
	switch {
	case r.PerEntry:
		key.entry = string(e.Kind) + "\x00" + e.Name
	case e.Kind == mcp.KindSession:
		key.entry = string(mcp.KindSession)
	}
	if l.shared != nil {
		ok, wait, err := l.shared.Take(ctx, key.String(), r.Limit)
		if err != nil {
			if l.sharedErr != nil {
				l.sharedErr(err)
			}
			return true, 0
		}
		return ok, wait
	}

	l.mu.RLock()
	b := l.buckets[key]
	if b != nil {
		defer l.mu.RUnlock()
		return b.spend(l.now)
	}
	l.mu.RUnlock()

	l.mu.Lock()
	defer l.mu.Unlock()
	if b = l.buckets[key]; b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(r.Rate), r.Burst)}
		l.buckets[key] = b
	}
	return b.spend(l.now)
}

func (b *bucket) spend(clock func() time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := clock()
	if now.Before(b.last) {
		now = b.last
	}
	b.last = now
	res := b.lim.ReserveN(now, 1)
	d := res.DelayFrom(now)
	if d <= 0 {
		return true, 0
	}
	res.CancelAt(now)
	return false, b.honest(now, d)
}

// honest stretches the delay x/time/rate reports until the bucket itself
// agrees a token is there. The delay and the refill are computed in
// floating point by different formulas. A retry hint that is a nanosecond
// short sends the caller into a second refusal.
func (b *bucket) honest(now time.Time, d time.Duration) time.Duration {
	perSec := float64(b.lim.Limit())
	for range 4 {
		short := 1 - b.lim.TokensAt(now.Add(d))
		if short <= 0 {
			break
		}
		d += time.Duration(math.Ceil(short/perSec*float64(time.Second))) + 1
	}
	return d
}

// full reports whether the bucket has refilled to its burst at now, so
// that dropping it changes nothing.
func (b *bucket) full(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.last) {
		return false
	}
	return b.lim.TokensAt(now) >= float64(b.lim.Burst())
}

// Sweep drops the buckets that are full again at now and returns how many
// remain.
func (l *Limiter) Sweep(now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, b := range l.buckets {
		if b.full(now) {
			delete(l.buckets, k)
		}
	}
	return len(l.buckets)
}

// Len returns the number of live buckets (a gauge worth exporting).
func (l *Limiter) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.buckets)
}

// Run sweeps every interval until ctx is cancelled.
func (l *Limiter) Run(ctx context.Context, every time.Duration) {
	tick.Every(ctx, every, func(time.Time) bool { l.Sweep(l.now()); return true })
}
