// observer.go records every MCP method call, and for each gated call
// (tools/call, resources/read, prompts/get) its entry, backend, outcome,
// error code and duration. It observes the engine (mcp.Observer): the
// entry, its owner and the outcome are the engine's, resolved and
// classified once for the audit log, the traces and this alike, so that a
// dashboard and the audit trail agree, refusals included.

package metrics

import (
	"context"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Observer counts what the engine serves.
//
// A gated call's entry is the catalogue's name for the entry it reached: a
// resource template's pattern, not the URI read. That keeps the label's
// values to the catalogue's size. A call that reached none is "unknown",
// because the name it asked for is whatever the caller sent.
func (m *Metrics) Observer() mcp.Observer { return observer{m} }

type observer struct{ m *Metrics }

func (observer) Begin(ctx context.Context, _ *mcp.Request) context.Context { return ctx }

func (o observer) End(ctx context.Context, r *mcp.Request, e mcp.End) {
	m := o.m
	m.requests.WithLabelValues(methodLabel(r.Method, e.Code)).Inc()
	t := r.Target()
	if t == nil || !t.Call {
		return
	}
	entry, origin := unknown, ""
	if t.Found {
		entry = label(t.Entry.Name)
		if t.Entry.Origin != t.Entry.Name {
			origin = label(t.Entry.Origin)
		}
	}
	backend := label(t.Entry.Owner)
	m.calls.WithLabelValues(string(t.Kind), entry, backend, origin, string(e.Outcome)).Inc()
	m.duration.WithLabelValues(string(t.Kind), backend, entry).Observe(e.Duration.Seconds())
	reason := denial(r, e.Outcome)
	if reason != "" {
		m.denials.WithLabelValues(reason).Inc()
	}
	id, _ := mcp.IdentityFrom(ctx)
	m.history.call(e.Start.Add(e.Duration), backend, label(id.Subject), entry, e.Duration, e.Outcome != mcp.OutcomeOK, reason)
	if e.Code != 0 {
		m.callErrors.WithLabelValues(m.codes.label(e.Code)).Inc()
	}
	if e.Outcome == mcp.OutcomeRateLimited {
		// The role was checked against the configured roles by
		// authentication: a bounded set.
		m.rateLimited.WithLabelValues(label(id.Role)).Inc()
	}
}

// denial is why the gate refused a call ("" when it did not): a policy
// rule or an interceptor named itself (Request.DeniedBy); any other
// refusal for the role is the role's.
func denial(r *mcp.Request, o mcp.Outcome) string {
	switch o {
	case mcp.OutcomeRateLimited:
		return DeniedRate
	case mcp.OutcomeForbidden:
		switch by := r.DeniedBy(); {
		case by == "":
			return DeniedRole
		case strings.HasPrefix(by, mcp.DeniedByInterceptor):
			return DeniedInterceptor
		}
		return DeniedPolicy
	}
	return ""
}

// methodLabel is the method as recorded: a method the engine answered
// "method not found" is "unknown", since a caller can send any string.
func methodLabel(method string, code int64) string {
	if code == jsonrpc.CodeMethodNotFound {
		return unknown
	}
	return label(method)
}
