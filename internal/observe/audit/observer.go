// observer.go turns each gated call into one audit record. It observes the
// engine (mcp.Observer) rather than wrapping its chain. The engine has
// resolved the entry the call named, with its owner, before anything ran,
// and classified the answer once after. Refusals are so recorded as well as
// calls that ran, and a panic as the -32603 it is answered with. Every
// other method passes unrecorded.

package audit

import (
	"context"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/textcut"
	"github.com/mcpgate/mcpgate/mcp"
)

// maxNameBytes bounds the name recorded: it comes from the caller, and an
// unknown tool's name can be anything the caller sent.
const maxNameBytes = 512

// Observer records every tools/call, resources/read and prompts/get the
// engine serves to l: the caller's identity, the entry's name as asked
// (never its arguments), the backend owning it, the outcome and the time
// taken.
func Observer(l *Log) mcp.Observer { return observer{l} }

type observer struct{ l *Log }

func (observer) Begin(ctx context.Context, _ *mcp.Request) context.Context { return ctx }

func (o observer) End(ctx context.Context, r *mcp.Request, e mcp.End) {
	t := r.Target()
	if t == nil || !t.Call {
		return
	}
	id, _ := mcp.IdentityFrom(ctx)
	_ = o.l.Record(store.AuditRecord{ // a refusal after Close is logged by the Log
		Time: e.Start.UTC(), Subject: id.Subject, TokenID: id.TokenID, Role: id.Role,
		Kind: string(t.Kind), Name: textcut.Bytes(t.Name, maxNameBytes), Backend: t.Entry.Owner,
		Outcome: string(e.Outcome), Code: e.Code, Duration: e.Duration, Origin: origin(t),
		Upstream: r.ActingAs(), Rule: r.DeniedBy(), Redacted: r.Redacted(), Hooks: r.Hooks(),
	})
}

// origin is the backend's own name for the entry, where the gateway
// serves it under another.
func origin(t *mcp.Target) string {
	if t.Entry.Origin == t.Entry.Name {
		return ""
	}
	return t.Entry.Origin
}
