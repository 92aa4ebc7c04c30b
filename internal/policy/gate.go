// gate.go is the mcp.Gate that enforces roles and rate limits. The engine
// calls Visible for every list entry, and Admit before every tools/call,
// resources/read and prompts/get. Both read the caller from the context. No
// transport and no method can so reach an entry by a path the role check
// does not see; seed 003's bug was that two methods did.

package policy

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Gate decides by role, then by the rules, then by rate.
type Gate struct {
	roles   *Roles
	limiter *Limiter
	rules   *Rules
}

var _ mcp.RequestGate = (*Gate)(nil)

// WithRules is g deciding by rs too, after the role and before the rate.
func (g *Gate) WithRules(rs *Rules) *Gate {
	c := *g
	c.rules = rs
	return &c
}

// NewGate returns a gate over roles (the base roles only when nil) and
// limiter (no rate limits when nil).
func NewGate(roles *Roles, limiter *Limiter) *Gate {
	if roles == nil {
		roles, _ = NewRoles(nil)
	}
	return &Gate{roles: roles, limiter: limiter}
}

// Visible reports whether the caller's role reaches e. A caller without an
// identity sees nothing. Visible and Admit's role check agree by
// construction: both are Roles.Allows.
func (g *Gate) Visible(ctx context.Context, e mcp.Entry) bool {
	id, ok := mcp.IdentityFrom(ctx)
	return ok && g.roles.Allows(id.Role, e.MinRole) && g.rules.Visible(id, e)
}

// Admit refuses a call the caller's role does not reach with -32001, and
// then one its rate budget does not cover with -32000. The role check
// comes first and spends nothing.
//
// Opening a session (mcp.KindSession) is only rate limited: what a caller
// may see and use is decided entry by entry, and a caller whose role
// reaches nothing still gets a session that lists nothing, as before.
func (g *Gate) Admit(ctx context.Context, e mcp.Entry) error { return g.AdmitRequest(ctx, e, nil) }

// AdmitRequest is Admit with the request r (nil: none) for the rules to
// read: a rule's denial is -32001 too, and spends no rate budget.
func (g *Gate) AdmitRequest(ctx context.Context, e mcp.Entry, r *mcp.Request) error {
	id, ok := mcp.IdentityFrom(ctx)
	if e.Kind != mcp.KindSession && (!ok || !g.roles.Allows(id.Role, e.MinRole)) {
		return g.forbidden(id, e)
	}
	if e.Kind != mcp.KindSession {
		if err := g.rules.Check(ctx, id, e, r); err != nil {
			return err
		}
	}
	if g.limiter == nil {
		return nil
	}
	base, _ := g.roles.Base(id.Role)
	if ok, wait := g.limiter.allow(ctx, id, base, e); !ok {
		return rateLimited(wait)
	}
	return nil
}

// Forbidden is the data of a -32001 refusal.
type Forbidden struct {
	Kind     mcp.ErrorKind `json:"kind"`     // always mcp.KindForbidden
	Required string        `json:"required"` // the entry's minimum role
	Role     string        `json:"role"`     // the caller's role ("" when there is none)
}

// RateLimited is the data of a -32000 refusal.
type RateLimited struct {
	Kind              mcp.ErrorKind `json:"kind"` // always mcp.KindRateLimited
	RetryAfterSeconds int64         `json:"retryAfterSeconds"`
}

// forbidden names the role required, so that an agent asks for a better
// credential instead of retrying; and says when the fault is the
// configuration's rather than the caller's.
func (g *Gate) forbidden(id mcp.Identity, e mcp.Entry) *jsonrpc.Error {
	required := e.MinRole
	if required == "" {
		required = Viewer
	}
	what := fmt.Sprintf("%s %q", e.Kind, e.Name)
	var msg string
	switch {
	case !g.roles.Known(required):
		msg = fmt.Sprintf("forbidden: %s requires role %q, which is not configured on this server", what, required)
	case id.Role == "":
		msg = fmt.Sprintf("forbidden: %s requires role %q (you have no role)", what, required)
	case !g.roles.Known(id.Role):
		msg = fmt.Sprintf("forbidden: %s requires role %q (your role %q is not configured on this server)", what, required, id.Role)
	default:
		msg = fmt.Sprintf("forbidden: %s requires role %q (you have %q)", what, required, id.Role)
	}
	return jsonrpc.NewError(jsonrpc.CodeForbidden, msg, Forbidden{Kind: mcp.KindForbidden, Required: required, Role: id.Role})
}

// rateLimited rounds the wait up to whole seconds (at least one), so that
// waiting the advertised time is always enough.
func rateLimited(wait time.Duration) *jsonrpc.Error {
	secs := int64((wait + time.Second - 1) / time.Second)
	secs = max(secs, 1)
	return jsonrpc.NewError(jsonrpc.CodeRateLimited, fmt.Sprintf("rate limited: retry in %d s", secs),
		RateLimited{Kind: mcp.KindRateLimited, RetryAfterSeconds: secs})
}
