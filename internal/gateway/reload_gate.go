// reload_gate.go is the call gate as the engine holds it: a pointer to the
// current policy.Gate and its rate limiter, swapped whole when a reload
// brings new rate limits or new policy rules. The engine's gate is fixed when the server is
// built, so the swap happens behind it; a call reads one consistent pair,
// never the old roles with the new limiter.

package gateway

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/observe/telemetry"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/tick"
	"github.com/mcpgate/mcpgate/mcp"
)

// limitGate is an mcp.Gate delegating to the current policy.Gate.
type limitGate struct {
	now func() time.Time
	// shared, when set, holds the buckets instead of this process (Redis:
	// every replica spends from the same ones); onErr hears of failures
	// to reach them.
	shared policy.SharedBuckets
	onErr  func(error)
	cur    atomic.Pointer[gatePair]
	// rules are the policy's rules in force (CEL), kept across a change
	// of rate limits; set and setRules run one at a time (a reload's).
	rules *policy.Rules
	// tracer, when tracing is on, spans each decision (set before the
	// gateway serves).
	tracer *telemetry.Tracer
}

type gatePair struct {
	gate    *policy.Gate
	limiter *policy.Limiter
	rules   *policy.Rules
}

var _ mcp.RequestGate = (*limitGate)(nil)

// newLimitGate gates by roles and by rules (which must be valid), reading
// time from now (time.Now when nil).
func newLimitGate(roles *policy.Roles, rules policy.LimitRules, now func() time.Time, shared policy.SharedBuckets, onErr func(error)) *limitGate {
	if now == nil {
		now = time.Now
	}
	g := &limitGate{now: now, shared: shared, onErr: onErr}
	g.set(roles, rules)
	return g
}

// set puts new rules in force. Their buckets start full: a rule's budget
// is not carried over from rules that may have counted differently.
func (g *limitGate) set(roles *policy.Roles, rules policy.LimitRules) {
	l := policy.NewLimiter(rules, g.now)
	if g.shared != nil {
		l = l.WithShared(g.shared, g.onErr)
	}
	g.cur.Store(&gatePair{gate: policy.NewGate(roles, l).WithRules(g.rules), limiter: l, rules: g.rules})
}

// setRules puts new policy rules in force, the whole set at once; the
// rate buckets go on as they were.
func (g *limitGate) setRules(rs *policy.Rules) {
	g.rules = rs
	cur := g.cur.Load()
	g.cur.Store(&gatePair{gate: cur.gate.WithRules(rs), limiter: cur.limiter, rules: rs})
}

// currentRules are the policy rules in force.
func (g *limitGate) currentRules() *policy.Rules { return g.cur.Load().rules }

func (g *limitGate) AdmitRequest(ctx context.Context, e mcp.Entry, r *mcp.Request) error {
	if g.tracer == nil {
		return g.cur.Load().gate.AdmitRequest(ctx, e, r)
	}
	ctx, end := g.tracer.Gate(ctx, e)
	err := g.cur.Load().gate.AdmitRequest(ctx, e, r)
	end(r, err)
	return err
}

func (g *limitGate) Visible(ctx context.Context, e mcp.Entry) bool {
	return g.cur.Load().gate.Visible(ctx, e)
}

func (g *limitGate) Admit(ctx context.Context, e mcp.Entry) error {
	return g.cur.Load().gate.Admit(ctx, e)
}

// buckets is the number of rate buckets held now (a gauge).
func (g *limitGate) buckets() int { return g.cur.Load().limiter.Len() }

// sweep drops refilled buckets of the current limiter every interval until
// ctx ends.
func (g *limitGate) sweep(ctx context.Context, every time.Duration) {
	tick.Every(ctx, every, func(time.Time) bool { g.cur.Load().limiter.Sweep(g.now()); return true })
}
