// sessionless.go relays to a backend that speaks 2026-07-28 (the client
// learned it at Connect), for callers of either era.
//
// What goes up is the caller's params, with the revision's reserved _meta
// keys taken out: they describe the caller's connection to the gateway, not
// the gateway's to the backend. The gateway's are put in: the revision (by
// the client), the caller's capabilities, and a log level. The backend so
// asks only for what the caller can give. A tools/call carries the
// Mcp-Param headers its listed schema asks for.
//
// What comes back may be an InputRequiredResult. A 2026-07-28 caller gets
// it as it came, its requestState sealed for that caller, request and entry
// (the retry's is opened again before it goes up). A 2025 caller cannot
// retry. The gateway asks it on its session (elicitation, sampling, roots,
// as server-to-client requests), and retries for it, up to
// upstream.MaxInputRounds. What the caller did not declare it can give is
// -32021, with the reason.

package catalogue

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// reservedMeta are the _meta keys a sessionless request uses to say what
// it is; a caller's are not passed upstream.
var reservedMeta = map[string]bool{
	mcp.MetaProtocolVersion: true, mcp.MetaClientCapabilities: true, mcp.MetaClientInfo: true, mcp.MetaLogLevel: true,
}

// withoutReservedMeta returns params without the reserved _meta keys a
// caller sent: params itself, byte for byte, when its _meta has none.
// Only _meta is searched. Searching the whole of params cost 55 µs a call
// whose argument was 64 KiB of prose, and rewrote params whose arguments
// merely named the keys' prefix.
func withoutReservedMeta(params json.RawMessage) json.RawMessage {
	meta, _ := jsonrpc.Lookup(params, "_meta") // nil for params that are no object
	if !holdsReservedKey(meta) {
		return params
	}
	return mcp.WithMeta(params, nil, unreserved)
}

// holdsReservedKey reports whether meta is an object with a reserved key,
// its name decoded as the backend will decode it: an escape must not
// carry one past the relay. A _meta that cannot name the keys' prefix is
// passed over unwalked.
func holdsReservedKey(meta json.RawMessage) bool {
	if len(meta) == 0 || meta[0] != '{' || !jsonrpc.MayHold(meta, "io.modelcontextprotocol/") {
		return false
	}
	found := false
	_ = jsonrpc.MemberKeys(meta, func(k []byte, _ json.RawMessage) bool {
		found = reservedMeta[string(k)]
		return !found
	})
	return found
}

// unreserved is WithMeta's keep for the _meta a caller sent: every member
// but the reserved ones.
func unreserved(k []byte) bool { return !reservedMeta[string(k)] }

// sessionlessParams is what goes up to a sessionless backend for r.
// The _meta is built whole, once: the client's own head (the revision and
// the gateway's identity), then the caller's capabilities (the gateway's
// own when the caller has none to tell), then a log level.
func (b *Mirror) sessionlessParams(client *mcp.Client, r *mcp.Request, params json.RawMessage) json.RawMessage {
	head := client.SessionlessMeta()
	var buf [512]byte // the members rarely need more; WithMeta copies them
	meta := append(buf[:0], head...)
	meta = append(meta, `,"`+mcp.MetaClientCapabilities+`":`...)
	var caps json.RawMessage
	if r != nil {
		caps = r.ClientCapabilities()
	}
	if len(caps) > 0 {
		meta = append(meta, caps...)
	} else {
		meta = append(meta, upstream.ClientCapabilities()...)
	}
	meta = b.appendLogLevel(meta, r)
	return mcp.WithMeta(params, meta, unreserved)
}

// appendLogLevel appends to meta the level a sessionless backend is asked
// to log at for r. That is the caller's own when its request names one,
// copied as the JSON string it came as (no string is made of it). Else it
// is the most verbose any client asked of the gateway; with none, no
// member is added and the backend sends no log messages.
func (b *Mirror) appendLogLevel(meta []byte, r *mcp.Request) []byte {
	if r != nil {
		if raw, err := jsonrpc.Lookup(r.Meta(), mcp.MetaLogLevel); err == nil && len(raw) > 0 && raw[0] == '"' {
			meta = append(meta, `,"`+mcp.MetaLogLevel+`":`...)
			return append(meta, raw...)
		}
	}
	if level := b.claims.Level(); level != "" {
		meta = append(meta, `,"`+mcp.MetaLogLevel+`":`...)
		meta = jsonrpc.AppendString(meta, string(level))
	}
	return meta
}

// forwardSessionless makes r's call on a sessionless backend's client.
func (b *Mirror) forwardSessionless(ctx context.Context, r *mcp.Request, client *mcp.Client, inflight *Inflight,
	method string, params json.RawMessage, ps []mcp.HeaderParam) (json.RawMessage, error) {
	params = b.sessionlessParams(client, r, params)
	if r != nil && r.MultiRoundTrip() {
		switch upstream, ok, err := r.OpenUpstreamState(ctx); {
		case err != nil:
			return nil, err
		case ok:
			if params, err = jsonrpc.SetMember(params, "requestState", jsonrpc.AppendString(nil, upstream)); err != nil {
				return nil, err
			}
		}
	}
	var headers [][2]string
	if len(ps) > 0 {
		args, _ := jsonrpc.Lookup(params, "arguments")
		headers = mcp.ParamHeaders(ps, args)
	}
	call := func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		res, err := b.callSessionless(ctx, r, client, inflight, &mcp.Outbound{Method: method, Params: params, Headers: headers})
		if err == nil && r != nil && isTaskResult(res) {
			if err := b.claims.noteTask(ctx, b, res); err != nil { // tasks.go: the caller's tasks/* go here
				return nil, err
			}
		}
		return res, err
	}
	if r != nil && r.MultiRoundTrip() {
		// A 2026 caller answers the input itself, and retries.
		res, err := call(ctx, params)
		if err != nil || !mcp.IsInputRequired(res) {
			return res, err
		}
		return b.sealForCaller(ctx, r, res)
	}
	res, err := upstream.WithInput(ctx, params, call, func(ctx context.Context, inputs []mcp.Input) ([]json.RawMessage, error) {
		return b.askSessionCaller(ctx, r, inputs)
	})
	if errors.Is(err, upstream.ErrKeepsAsking) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"backend "+b.name+" asked for input more than the gateway retries for", map[string]string{"backend": b.name})
	}
	return res, err
}

func (b *Mirror) callSessionless(ctx context.Context, r *mcp.Request, client *mcp.Client, inflight *Inflight, out *mcp.Outbound) (json.RawMessage, error) {
	var ic *inflightCall
	out.Params, ic = inflight.begin(ctx, r, out.Params, b.timeout)
	defer inflight.end(ic)
	res, err := b.call(ctx, client, out)
	if err != nil {
		return nil, b.failure(ctx, out.Method, err)
	}
	return res, nil
}

func isTaskResult(res json.RawMessage) bool {
	return jsonrpc.LookupIs(res, "resultType", "task")
}

// sealForCaller gives a 2026-07-28 caller the backend's
// InputRequiredResult with its requestState sealed for that caller.
func (b *Mirror) sealForCaller(ctx context.Context, r *mcp.Request, res json.RawMessage) (json.RawMessage, error) {
	upstream, ok := jsonrpc.LookupString(res, "requestState")
	if !ok {
		return res, nil
	}
	sealed, err := r.SealUpstreamState(ctx, upstream)
	if err != nil {
		return nil, err
	}
	return jsonrpc.WithStringMember(res, "requestState", sealed)
}

// askSessionCaller asks a 2025 caller, on its session, what the backend's
// InputRequiredResult asks.
func (b *Mirror) askSessionCaller(ctx context.Context, r *mcp.Request, inputs []mcp.Input) ([]json.RawMessage, error) {
	if r == nil {
		return nil, jsonrpc.NewError(mcp.CodeMissingRequiredCapability, "backend "+b.name+" asks for input, and there is no caller to ask", nil)
	}
	for _, in := range inputs {
		capability := mcp.InputCapability(in.Method)
		if c, _ := jsonrpc.Lookup(r.ClientCapabilities(), capability); capability == "" || len(c) == 0 || string(c) == "null" {
			return nil, b.missingCapability(capability, in.Method)
		}
	}
	return r.Ask(ctx, inputs...)
}

// missingCapability is -32021 for a backend's request of method, which
// needs capability and the caller did not declare it.
func (b *Mirror) missingCapability(capability, method string) *jsonrpc.Error {
	what := "the " + capability + " capability"
	if capability == "" {
		what = "a capability for it (the method is unknown)"
	}
	return mcp.MissingCapability(capability, "backend "+b.name+" asks the client for "+method+", and the client did not declare "+what,
		map[string]string{"backend": b.name, "method": method})
}
