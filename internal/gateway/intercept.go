// intercept.go wires the interceptors (package intercept) inside the
// engine's gate: they see only what the gate admitted. The chain in force
// is swapped whole at a reload; a call reads one chain.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway/admin"
	"github.com/mcpgate/mcpgate/internal/intercept"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// newIntercepts builds cfg's interceptors, counted in the metrics and
// for the console.
func (g *Gateway) newIntercepts(cfg *config.Config) (*intercept.Chain, error) {
	g.hookOnce.Do(func() {
		// Calls in flight each hold a connection to a hook: kept for the
		// next ones, not two per host as net/http's default keeps. The
		// gateway's Close closes them.
		g.hookHTTP = http.DefaultTransport.(*http.Transport).Clone()
		g.hookHTTP.MaxIdleConnsPerHost = 256
	})
	return intercept.New(cfg.InterceptorSpecs(), intercept.Options{Client: &http.Client{Transport: g.hookHTTP}, Logger: g.log, CallTool: g.hookTools.call,
		Count: func(name, outcome string) {
			g.metrics.Intercepted(name, outcome)
			g.hookCounts.add(name, outcome)
		}, Redacted: g.metrics.Redacted})
}

// hookClients are the gateway's clients of the MCP servers whose tools are
// interceptors: one session each, opened at the first call and again
// after it ends.
type hookClients struct {
	mu      sync.Mutex
	clients map[string]*mcp.Client
}

// call calls tool on the MCP server at url (Streamable HTTP, 2025-11-25).
func (h *hookClients) call(ctx context.Context, url, tool string, args json.RawMessage) (json.RawMessage, error) {
	c, err := h.client(ctx, url)
	if err != nil {
		return nil, err
	}
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args})
	res, err := c.Call(ctx, "tools/call", params)
	if err != nil && errors.Is(err, mcp.ErrClosed) {
		h.forget(url, c)
	}
	return res, err
}

func (h *hookClients) client(ctx context.Context, url string) (*mcp.Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.clients[url]; c != nil {
		select {
		case <-c.Done():
			delete(h.clients, url)
		default:
			return c, nil
		}
	}
	conn, err := mcphttp.DialStreamable(context.WithoutCancel(ctx), url, mcphttp.ClientOptions{})
	if err != nil {
		return nil, err
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "mcpgate-interceptor", Version: "1"}})
	if _, err := c.Initialize(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	if h.clients == nil {
		h.clients = map[string]*mcp.Client{}
	}
	h.clients[url] = c
	return c, nil
}

func (h *hookClients) forget(url string, c *mcp.Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.clients[url] == c {
		delete(h.clients, url)
	}
	_ = c.Close()
}

// close ends every session (the gateway's Close).
func (h *hookClients) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for url, c := range h.clients {
		_ = c.Close()
		delete(h.clients, url)
	}
}

// outcomeCounts counts each interceptor's outcomes, for the console.
type outcomeCounts struct {
	mu sync.Mutex
	m  map[string]map[string]int64
}

func (o *outcomeCounts) add(name, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]map[string]int64{}
	}
	if o.m[name] == nil {
		o.m[name] = map[string]int64{}
	}
	o.m[name][outcome]++
}

// of is name's counts, by outcome in order.
func (o *outcomeCounts) of(name string) []admin.OutcomeCount {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []admin.OutcomeCount
	for _, k := range slices.Sorted(maps.Keys(o.m[name])) {
		out = append(out, admin.OutcomeCount{Outcome: k, N: o.m[name][k]})
	}
	return out
}

// Policy is the rules and interceptors in force, with their counts and
// the audit's latest refusals of each.
func (s *adminSource) Policy(ctx context.Context) admin.PolicyView {
	g := s.g
	recent := func(rule string) []store.AuditRecord {
		if s.store == nil {
			return nil
		}
		page, err := s.store.QueryAudit(ctx, store.AuditQuery{Rule: rule, Limit: 5})
		if err != nil {
			g.log.Warn("admin: the policy's refusals could not be read", "err", err)
			return nil
		}
		return page.Records
	}
	var v admin.PolicyView
	for _, r := range g.gate.currentRules().Stats() {
		v.Rules = append(v.Rules, admin.PolicyRuleRow{Name: r.Name, Match: r.Match, DenyUnless: r.DenyUnless, Message: r.Message,
			Passed: r.Passed, Denied: r.Denied, Recent: recent(r.Name)})
	}
	for _, h := range g.intercepts.Load().Specs() {
		row := admin.InterceptorRow{Name: h.Name, Calls: h.URL, Match: h.Match, Mode: "validate", Fail: "closed",
			Outcomes: g.hookCounts.of(h.Name), Recent: recent(mcp.DeniedByInterceptor + h.Name)}
		if h.Builtin != "" {
			row.Calls = "builtin: " + h.Builtin
		}
		switch {
		case h.Request && h.Response:
			row.On = "request and response"
		case h.Request:
			row.On = "request"
		default:
			row.On = "response"
		}
		if h.Mutate {
			row.Mode = "mutate"
		}
		if h.FailOpen {
			row.Fail = "open"
		}
		v.Interceptors = append(v.Interceptors, row)
	}
	return v
}

// intercepted is the engine middleware that runs the chain in force. The
// chain's handler over next is made once for each chain put in force, not
// at every call.
func (g *Gateway) intercepted(next mcp.Handler) mcp.Handler {
	type built struct {
		chain *intercept.Chain
		h     mcp.Handler
	}
	var cur atomic.Pointer[built]
	return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
		c := g.intercepts.Load()
		if c.Len() == 0 {
			return next.ServeMCP(ctx, r)
		}
		b := cur.Load()
		if b == nil || b.chain != c {
			b = &built{chain: c, h: c.Middleware(next)}
			cur.Store(b)
		}
		return b.h.ServeMCP(ctx, r)
	})
}
