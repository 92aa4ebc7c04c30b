// limiter_test.go pins the rate limiter (spec §6): exactly burst calls at
// once, even under concurrency; honest retry hints; the precedence entry
// rule > role rule > default; which calls share a bucket; and a memory
// footprint that forgets idle callers.

package policy_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/mcp"
)

var (
	alice  = mcp.Identity{Subject: "alice", Role: "viewer", TokenID: "t1"}
	bob    = mcp.Identity{Subject: "bob", Role: "viewer", TokenID: "t2"}
	search = mcp.Entry{Kind: mcp.KindTool, Name: "search"}
	lookup = mcp.Entry{Kind: mcp.KindTool, Name: "lookup"}
)

// admitted counts how many of n calls at the current instant are admitted.
func admitted(l *policy.Limiter, id mcp.Identity, e mcp.Entry, n int) int {
	k := 0
	for range n {
		if ok, _ := l.Allow(id, e); ok {
			k++
		}
	}
	return k
}

func TestExactlyBurstIsAdmittedAtOneInstant(t *testing.T) {
	for _, burst := range []int{1, 2, 5, 17} {
		c := newClock()
		l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: burst}}, c.Now)
		if got := admitted(l, alice, search, 3*burst); got != burst {
			t.Errorf("burst %d: %d admitted", burst, got)
		}
	}
}

func TestExactlyBurstIsAdmittedUnderConcurrency(t *testing.T) {
	const callers, burst = 200, 17
	for run := range 5 {
		c := newClock()
		l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 0.5, Burst: burst}}, c.Now)
		var ok atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range callers {
			wg.Go(func() {
				<-start
				if yes, _ := l.Allow(alice, search); yes {
					ok.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != burst {
			t.Fatalf("run %d: %d of %d admitted, want %d", run, ok.Load(), callers, burst)
		}
		// The refusals spent nothing: one refill interval later, one more.
		c.Advance(2 * time.Second)
		if got := admitted(l, alice, search, 10); got != 1 {
			t.Fatalf("run %d: %d admitted after one refill interval, want 1", run, got)
		}
	}
}

func TestBucketRefillsAsTimeAdvances(t *testing.T) {
	c := newClock()
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 2, Burst: 3}}, c.Now)
	steps := []struct {
		advance time.Duration
		want    int
	}{
		{0, 3},
		{250 * time.Millisecond, 0}, // half a token
		{250 * time.Millisecond, 1},
		{time.Second, 2},
		{time.Hour, 3}, // never more than the burst
	}
	for i, s := range steps {
		c.Advance(s.advance)
		if got := admitted(l, alice, search, 10); got != s.want {
			t.Fatalf("step %d (+%v): %d admitted, want %d", i, s.advance, got, s.want)
		}
	}
}

func TestRetryAfterIsHonest(t *testing.T) {
	// 20/977 and 40/977 are rates where x/time/rate's own delay falls a
	// nanosecond short of its refill (floating point); the hint must not.
	rates := []float64{0.1, 0.25, 0.3, 1.0 / 3, 0.7, 1.0 / 7, 20.0 / 977, 40.0 / 977, 1280.0 / 977}
	for _, r := range rates {
		for _, burst := range []int{1, 3} {
			for _, part := range []float64{0, 0.37, 0.5} {
				c := newClock()
				l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: r, Burst: burst}}, c.Now)
				admitted(l, alice, search, burst)
				// Partway through a refill the hint shrinks, and stays honest.
				c.Advance(time.Duration(float64(time.Second) * part / r))
				t0 := c.Now()
				ok, wait := l.Allow(alice, search)
				if ok || wait <= 0 {
					t.Fatalf("rate %v: empty bucket answered %v, %v", r, ok, wait)
				}
				c.Set(t0.Add(wait - time.Second))
				if ok, _ := l.Allow(alice, search); ok {
					t.Fatalf("rate %v, %v refilled: admitted a second before the hint %v", r, part, wait)
				}
				c.Set(t0.Add(wait))
				if ok, again := l.Allow(alice, search); !ok {
					t.Fatalf("rate %v, %v refilled: refused at the hint %v (now %v)", r, part, wait, again)
				}
			}
		}
	}
}

func TestTheClockRunningBackwardsRefillsNothing(t *testing.T) {
	c := newClock()
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: 1}}, c.Now)
	t0 := c.Now()
	admitted(l, alice, search, 1)
	c.Set(t0.Add(-time.Second))
	if got := admitted(l, alice, search, 1); got != 0 {
		t.Fatal("admitted in the past")
	}
	c.Set(t0.Add(time.Second / 2))
	if got := admitted(l, alice, search, 1); got != 0 {
		t.Fatal("a step back in time counted as refill")
	}
	c.Set(t0.Add(time.Second))
	if got := admitted(l, alice, search, 1); got != 1 {
		t.Fatal("not admitted once the token is due")
	}
}

func TestRulePrecedence(t *testing.T) {
	editor := mcp.Identity{Subject: "ed", Role: "editor", TokenID: "t3"}
	rules := policy.LimitRules{
		Default: policy.Limit{Rate: 1, Burst: 1},
		Roles:   map[string]policy.Limit{"editor": {Rate: 1, Burst: 4}},
		Entries: []policy.EntryLimit{
			{Kind: mcp.KindTool, Name: "expensive_*", Limit: policy.Limit{Rate: 1, Burst: 2}},
			{Name: "expensive_report", Limit: policy.Limit{Rate: 1, Burst: 9}}, // shadowed by the first
			{Kind: mcp.KindPrompt, Name: "free", Limit: policy.Limit{Rate: 0}},
		},
	}
	tests := []struct {
		name string
		id   mcp.Identity
		e    mcp.Entry
		want int
	}{
		{"default applies without a role rule", alice, search, 1},
		{"the role rule beats the default", editor, search, 4},
		{"an entry rule (glob) beats the role rule", editor, mcp.Entry{Kind: mcp.KindTool, Name: "expensive_report"}, 2},
		{"an entry rule (glob) beats the default", alice, mcp.Entry{Kind: mcp.KindTool, Name: "expensive_x"}, 2},
		{"the first matching entry rule wins", alice, mcp.Entry{Kind: mcp.KindTool, Name: "expensive_report"}, 2},
		{"an entry rule's kind must match", alice, mcp.Entry{Kind: mcp.KindPrompt, Name: "expensive_x"}, 1},
		{"an entry rule with rate 0 exempts the entry", editor, mcp.Entry{Kind: mcp.KindPrompt, Name: "free"}, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := policy.NewLimiter(rules, newClock().Now)
			if got := admitted(l, tt.id, tt.e, 50); got != tt.want {
				t.Fatalf("%d admitted, want %d", got, tt.want)
			}
		})
	}
}

func TestBucketSharing(t *testing.T) {
	expensive := mcp.Entry{Kind: mcp.KindTool, Name: "expensive_a"}
	expensive2 := mcp.Entry{Kind: mcp.KindTool, Name: "expensive_b"}
	tests := []struct {
		name  string
		rules policy.LimitRules
		calls []struct {
			id mcp.Identity
			e  mcp.Entry
		}
		want []bool
	}{
		{
			name:  "identities have separate buckets",
			rules: policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: 1}},
			calls: calls(alice, search, bob, search, alice, search),
			want:  []bool{true, true, false},
		},
		{
			name:  "without PerEntry an identity's entries share one bucket",
			rules: policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: 1}},
			calls: calls(alice, search, alice, lookup),
			want:  []bool{true, false},
		},
		{
			name:  "PerEntry keys a bucket per entry",
			rules: policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: 1, PerEntry: true}},
			calls: calls(alice, search, alice, lookup, alice, search, alice, lookup),
			want:  []bool{true, true, false, false},
		},
		{
			name: "an entry rule does not spend the identity's general bucket",
			rules: policy.LimitRules{
				Default: policy.Limit{Rate: 1, Burst: 1},
				Entries: []policy.EntryLimit{{Name: "expensive_*", Limit: policy.Limit{Rate: 1, Burst: 1}}},
			},
			calls: calls(alice, expensive, alice, search, alice, expensive, alice, lookup),
			want:  []bool{true, true, false, false},
		},
		{
			name: "entries matched by one rule share its bucket without PerEntry",
			rules: policy.LimitRules{
				Entries: []policy.EntryLimit{{Name: "expensive_*", Limit: policy.Limit{Rate: 1, Burst: 1}}},
			},
			calls: calls(alice, expensive, alice, expensive2, bob, expensive2),
			want:  []bool{true, false, true},
		},
		{
			name: "an entry rule with PerEntry splits by entry",
			rules: policy.LimitRules{
				Entries: []policy.EntryLimit{{Name: "expensive_*", Limit: policy.Limit{Rate: 1, Burst: 1, PerEntry: true}}},
			},
			calls: calls(alice, expensive, alice, expensive2, alice, expensive),
			want:  []bool{true, true, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := policy.NewLimiter(tt.rules, newClock().Now)
			for i, c := range tt.calls {
				if ok, _ := l.Allow(c.id, c.e); ok != tt.want[i] {
					t.Fatalf("call %d (%s %s): admitted %v, want %v", i, c.id.Subject, c.e.Name, ok, tt.want[i])
				}
			}
		})
	}
}

func calls(pairs ...any) []struct {
	id mcp.Identity
	e  mcp.Entry
} {
	var out []struct {
		id mcp.Identity
		e  mcp.Entry
	}
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, struct {
			id mcp.Identity
			e  mcp.Entry
		}{pairs[i].(mcp.Identity), pairs[i+1].(mcp.Entry)})
	}
	return out
}

func TestRateZeroIsUnlimited(t *testing.T) {
	l := policy.NewLimiter(policy.LimitRules{}, newClock().Now)
	if got := admitted(l, alice, search, 10_000); got != 10_000 {
		t.Fatalf("%d admitted", got)
	}
	if l.Len() != 0 {
		t.Fatalf("an unlimited rule kept %d buckets", l.Len())
	}
}

func TestSweepEvictsFullIdleBucketsAndKeepsBusyOnes(t *testing.T) {
	c := newClock()
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: 2}}, c.Now)
	admitted(l, alice, search, 2)
	admitted(l, bob, search, 2)
	c.Advance(1500 * time.Millisecond) // bob's and alice's buckets hold 1.5 of 2
	if n := l.Sweep(c.Now()); n != 2 {
		t.Fatalf("swept buckets that are not full: %d left", n)
	}
	c.Advance(time.Second) // both full
	admitted(l, bob, search, 1)
	if n := l.Sweep(c.Now()); n != 1 || l.Len() != 1 {
		t.Fatalf("%d buckets left, want bob's only", n)
	}
	// An evicted caller starts again from a full bucket, as if never seen.
	if got := admitted(l, alice, search, 5); got != 2 {
		t.Fatalf("alice after eviction: %d admitted, want the burst 2", got)
	}
	// Bob's bucket kept its debt.
	if got := admitted(l, bob, search, 5); got != 1 {
		t.Fatalf("bob after the sweep: %d admitted, want 1", got)
	}
}

func TestSweepUnderLoadNeverHandsOutAFreshBucket(t *testing.T) {
	c := newClock()
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 0.001, Burst: 5}}, c.Now)
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if yes, _ := l.Allow(alice, search); yes {
					ok.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			l.Sweep(c.Now())
		}
	})
	wg.Wait()
	if ok.Load() != 5 {
		t.Fatalf("%d admitted with sweeps running, want the burst 5", ok.Load())
	}
}

func TestRunSweepsUntilCancelled(t *testing.T) {
	c := newClock()
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: 1}}, c.Now)
	admitted(l, alice, search, 1)
	c.Advance(time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx, time.Millisecond); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for l.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("Run never swept the idle bucket")
		}
		runtime.Gosched()
	}
	cancel()
	<-done
}

func TestLimitRulesValidate(t *testing.T) {
	tests := []struct {
		name   string
		rules  policy.LimitRules
		naming string // "" for valid
	}{
		{"empty rules are valid (unlimited)", policy.LimitRules{}, ""},
		{"a full configuration is valid", policy.LimitRules{
			Default: policy.Limit{Rate: 5, Burst: 10},
			Roles:   map[string]policy.Limit{"admin": {}},
			Entries: []policy.EntryLimit{{Kind: mcp.KindTool, Name: "x_*", Limit: policy.Limit{Rate: 0.1, Burst: 1}}},
		}, ""},
		{"negative default rate", policy.LimitRules{Default: policy.Limit{Rate: -1, Burst: 1}}, "default"},
		{"a role rate without burst", policy.LimitRules{Roles: map[string]policy.Limit{"editor": {Rate: 1}}}, "roles[editor]"},
		{"an entry rule without a name", policy.LimitRules{Entries: []policy.EntryLimit{{Limit: policy.Limit{Rate: 1, Burst: 1}}}}, "entries[0]"},
		{"an entry rule with a bad glob", policy.LimitRules{Entries: []policy.EntryLimit{{Name: "a", Limit: policy.Limit{}}, {Name: "x[", Limit: policy.Limit{}}}}, "entries[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rules.Validate()
			switch {
			case tt.naming == "" && err != nil:
				t.Fatalf("valid rules refused: %v", err)
			case tt.naming != "" && (err == nil || !strings.Contains(err.Error(), tt.naming)):
				t.Fatalf("error %v, want one naming %s", err, tt.naming)
			}
		})
	}
}

func TestNewLimiterPanicsOnRulesThatFailValidate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 1}}, nil)
}

func TestOpeningSessionsIsLimitedLikeCallsInABucketOfItsOwn(t *testing.T) {
	c := newClock()
	l := policy.NewLimiter(policy.LimitRules{Roles: map[string]policy.Limit{"viewer": {Rate: 1, Burst: 3}}}, c.Now)
	session := mcp.Entry{Kind: mcp.KindSession, Name: "initialize"}
	stream := mcp.Entry{Kind: mcp.KindSession, Name: "sse"}
	if got := admitted(l, alice, session, 2) + admitted(l, alice, stream, 10); got != 3 {
		t.Errorf("%d sessions and streams admitted at once, want the role's burst of 3", got)
	}
	if got := admitted(l, alice, search, 10); got != 3 {
		t.Errorf("%d calls admitted after the sessions, want all 3 of the call budget", got)
	}
	if got := admitted(l, bob, session, 10); got != 3 {
		t.Errorf("another identity: %d sessions admitted, want 3", got)
	}
}
