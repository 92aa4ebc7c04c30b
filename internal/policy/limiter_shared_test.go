// limiter_shared_test.go pins how the Limiter uses shared buckets (the
// buckets replicas keep in Redis, tested for real in package cluster):
// each bucket the in-process limiter would keep is one key, distinct for
// distinct buckets whatever the names hold, and a shared store that cannot
// be reached admits and says so.

package policy_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/mcp"
)

// recordingBuckets admits the first burst takes of each key and records
// the keys and shapes it was asked for.
type recordingBuckets struct {
	mu    sync.Mutex
	taken map[string]int
	shape map[string]policy.Limit
	err   error
}

func (b *recordingBuckets) Take(_ context.Context, key string, l policy.Limit) (bool, time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return false, 0, b.err
	}
	if b.taken == nil {
		b.taken, b.shape = map[string]int{}, map[string]policy.Limit{}
	}
	b.shape[key] = l
	if b.taken[key] >= l.Burst {
		return false, time.Second, nil
	}
	b.taken[key]++
	return true, 0, nil
}

func TestSharedBucketsGetOneKeyPerBucket(t *testing.T) {
	rules := policy.LimitRules{
		Default: policy.Limit{Rate: 1, Burst: 2},
		Entries: []policy.EntryLimit{{Name: "expensive_*", Limit: policy.Limit{Rate: 0.1, Burst: 1, PerEntry: true}}},
	}
	shared := &recordingBuckets{}
	l := policy.NewLimiter(rules, nil).WithShared(shared, nil)
	// Names chosen so that plain concatenation would collide.
	tricky := mcp.Identity{Subject: "a", Role: "viewer", TokenID: "t1\x00b"}
	calls := []struct {
		id mcp.Identity
		e  mcp.Entry
	}{
		{alice, search}, {alice, lookup}, {bob, search}, {tricky, search},
		{alice, mcp.Entry{Kind: mcp.KindTool, Name: "expensive_a"}},
		{alice, mcp.Entry{Kind: mcp.KindTool, Name: "expensive_b"}},
		{alice, mcp.Entry{Kind: mcp.KindSession}},
	}
	for _, c := range calls {
		l.Allow(c.id, c.e)
	}
	// alice's search and lookup share her general bucket; each other call
	// has its own.
	if got, want := len(shared.taken), len(calls)-1; got != want {
		t.Fatalf("%d shared keys for %d buckets: %v", got, want, shared.taken)
	}
	perEntry := 0
	for _, shape := range shared.shape {
		if shape.PerEntry && shape.Burst == 1 {
			perEntry++
		}
	}
	if perEntry != 2 {
		t.Errorf("the per-entry rule's shape reached the shared buckets %d times, want 2: %v", perEntry, shared.shape)
	}
	// The shared buckets decide: alice's third general call is refused.
	if ok, wait := l.Allow(alice, search); ok || wait <= 0 {
		t.Errorf("third call on a burst of 2: ok=%v wait=%v", ok, wait)
	}
}

func TestSharedBucketsUnreachableAdmitAndReport(t *testing.T) {
	down := errors.New("connection refused")
	var reported []error
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: 1}}, nil).
		WithShared(&recordingBuckets{err: down}, func(err error) { reported = append(reported, err) })
	for range 3 {
		if ok, _ := l.Allow(alice, search); !ok {
			t.Fatal("refused while the shared buckets are unreachable")
		}
	}
	if len(reported) != 3 || !errors.Is(reported[0], down) {
		t.Errorf("reported %v", reported)
	}
}
