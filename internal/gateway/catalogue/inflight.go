// inflight.go relays in the other direction: what a backend sends while a
// relayed call is in flight — progress, log messages, and its own requests
// (sampling, elicitation, roots) — goes to the front request that caused
// it.
//
// Routing rules:
//   - notifications/progress carries the gateway's own token ("gw-<n>",
//     unique per backend call), spliced into the forwarded params._meta in
//     place of the caller's. It so reaches exactly the call it belongs to,
//     with the caller's token restored. Progress with an unknown token is
//     dropped.
//   - notifications/message and server-to-client requests carry nothing
//     that names the call, and the client transports do not expose the
//     related stream. They so go to the most recent call in flight to that
//     backend. With none in flight a log message is dropped, and a request
//     answered -32603. With one call in flight, the usual case and the
//     conformance suite's, this is exact. With several it is a best guess
//     that never fans a message out to several clients.

package catalogue

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Inflight is the registry of the front requests in flight to one backend.
// Create it before the backend's mcp.Client and hook OnNotification and
// OnRequest into its ClientOptions; give the same one to catalogue.New.
type Inflight struct {
	mu    sync.Mutex
	seq   uint64
	calls map[uint64]*inflightCall // by seq
	byTok map[string]*inflightCall // by the gateway's raw token
	log   *slog.Logger             // the Backend's; set by catalogue.New
	// The watchdogs' sweep (timeout.go): its timer, whether it is due,
	// and its tick.
	sweeper  *time.Timer
	sweeping bool
	tick     time.Duration
}

type inflightCall struct {
	seq uint64
	ctx context.Context
	// r and token are the front request the call's notifications go to
	// and its progress token; a parked call's retry takes them over
	// (rebind), so they are read through caller.
	mu    sync.Mutex
	r     *mcp.Request
	token json.RawMessage // the caller's raw progress token, or nil
	gwTok string          // the gateway's raw token ("\"gw-1\""), or ""
	out   outbox          // notifications on their way to the caller
	// watchdog bounds the call's quiet time; each progress notification
	// for it kicks it (timeout.go).
	watchdog watchdog
	// asks, for a 2026-07-28 caller's call, is where the backend's
	// requests go instead of to the caller (park.go).
	asks chan *ask
}

// NewInflight returns an empty registry.
func NewInflight() *Inflight {
	return &Inflight{calls: map[uint64]*inflightCall{}, byTok: map[string]*inflightCall{}}
}

// begin registers r for the duration of one backend call. It returns the
// params to forward (with the gateway's progress token if r has one) and
// the call (nil without r), whose registration end ends. Its watchdog
// (dog) is armed for timeout (0: none) to abort r, before any progress
// for the call can kick it.
func (in *Inflight) begin(ctx context.Context, r *mcp.Request, params json.RawMessage, timeout time.Duration) (json.RawMessage, *inflightCall) {
	return in.beginWith(ctx, r, params, timeout, nil, nil)
}

// beginWith is begin for a call whose watchdog ends it with abort (nil:
// r.Abort) and whose backend requests go to asks (nil: to the caller, as
// server-to-client requests).
func (in *Inflight) beginWith(ctx context.Context, r *mcp.Request, params json.RawMessage, timeout time.Duration,
	abort func(error), asks chan *ask) (json.RawMessage, *inflightCall) {
	if r == nil {
		return params, nil
	}
	in.mu.Lock()
	in.seq++
	c := &inflightCall{seq: in.seq, ctx: ctx, r: r, asks: asks}
	c.watchdog.start(in, abort, r, timeout)
	if tok := r.ProgressToken(); tok != nil {
		gw := string(jsonrpc.AppendString(nil, "gw-"+strconv.FormatUint(c.seq, 10)))
		if out, err := withProgressToken(params, json.RawMessage(gw)); err == nil {
			params, c.token, c.gwTok = out, tok, gw
			in.byTok[gw] = c
		}
	}
	in.calls[c.seq] = c
	in.mu.Unlock()
	return params, c
}

// end ends c's registration and stops its watchdog (nothing for nil, a
// call without a front request).
func (in *Inflight) end(c *inflightCall) {
	if c == nil {
		return
	}
	in.mu.Lock()
	c.watchdog.stop()
	delete(in.calls, c.seq)
	if c.gwTok != "" {
		delete(in.byTok, c.gwTok)
	}
	log := in.log
	in.mu.Unlock()
	c.finish(log) // the caller's notifications go before the result
}

// caller is the front request c's notifications go to, and its progress
// token.
func (c *inflightCall) caller() (*mcp.Request, json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.r, c.token
}

// rebind makes r, a parked call's retry, the request its notifications
// go to from now on: the first request's stream is gone. Progress goes
// under r's token, or nowhere when r asked for none.
func (c *inflightCall) rebind(r *mcp.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.r = r
	if c.gwTok != "" {
		c.token = r.ProgressToken()
	}
}

// latest is the most recent call in flight, or nil.
func (in *Inflight) latest() *inflightCall {
	in.mu.Lock()
	defer in.mu.Unlock()
	var last *inflightCall
	for _, c := range in.calls {
		if last == nil || c.seq > last.seq {
			last = c
		}
	}
	return last
}

// OnNotification relays a backend notification that belongs to a call in
// flight and reports whether it was one it handles (progress and log
// messages). It only queues (outbox.go): it runs on the backend
// connection's read loop, which no caller may hold up. The caller still
// sees the notifications in the backend's order and before the call's
// result.
func (in *Inflight) OnNotification(m *jsonrpc.Message) bool {
	switch m.Method {
	case "notifications/progress":
		tok, _ := jsonrpc.Lookup(m.Params, "progressToken")
		in.mu.Lock()
		c := in.byTok[string(tok)]
		in.mu.Unlock()
		if c == nil {
			return true
		}
		c.watchdog.kick()
		_, token := c.caller()
		if token == nil {
			return true // a retry that asked for no progress
		}
		params, err := jsonrpc.WithMember(m.Params, "progressToken", token)
		if err == nil {
			c.notifyCaller(m.Method, params)
		}
		return true
	case "notifications/message":
		c := in.latest()
		if c == nil {
			return true
		}
		var p struct {
			Level  mcp.LogLevel    `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.Data == nil {
			return true
		}
		// Log, not Notify: the front session's logging/setLevel applies.
		c.logToCaller(p.Level, p.Logger, p.Data)
		return true
	}
	return false
}

// OnRequest relays a backend's request (sampling/createMessage,
// elicitation/create, roots/list, ...) to the client of the most recent
// call in flight. It returns the client's raw answer or raw error. An
// accepted elicitation form gets the schema's defaults for the fields it
// omits (mcp.ElicitationDefaults).
func (in *Inflight) OnRequest(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
	c := in.latest()
	if c == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "no client request in flight to relay "+m.Method+" to", nil)
	}
	if c.asks != nil {
		return c.askParked(ctx, m)
	}
	r, _ := c.caller()
	if capability := mcp.InputCapability(m.Method); capability != "" && !clientOffers(r, capability) {
		// Answered as the client itself should answer what it never
		// declared: it is not asked.
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
			"the client did not declare the "+capability+" capability", nil)
	}
	// Ends with the front call or the backend connection, whichever first.
	cctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	res, err := r.Call(cctx, m.Method, m.Params)
	if err == nil && m.Method == "elicitation/create" {
		res = mcp.ElicitationDefaults(m.Params, res) // what the user left out is the default
	}
	return res, err
}

// clientOffers reports whether the front client of r declared capability
// at initialize. A stateless session never saw the client's initialize:
// the client is asked, and answers for itself.
func clientOffers(r *mcp.Request, capability string) bool {
	if r.Stateless() {
		return true
	}
	if r.Session == nil {
		return false
	}
	v, err := jsonrpc.Lookup(r.Session.ClientCapabilities(), capability)
	return err == nil && len(v) > 0 && string(v) != "null"
}

// askParked hands a backend request to a 2026-07-28 caller's call, which
// parks it in the caller's result (park.go), and waits for the answer the
// caller's retry brings.
func (c *inflightCall) askParked(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
	a := &ask{m: m, answer: make(chan askAnswer, 1)}
	gone := jsonrpc.NewError(jsonrpc.CodeInternalError, "the call that caused "+m.Method+" has ended", nil)
	select {
	case c.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, gone
	}
	select {
	case ans := <-a.answer:
		return ans.result, ans.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, gone
	}
}
