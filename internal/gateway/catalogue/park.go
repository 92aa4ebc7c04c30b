// park.go relays a 2025-era backend's requests to a 2026-07-28 caller. The
// backend asks during a call (sampling/createMessage, elicitation/create,
// roots/list) and waits on the same connection for the answer; the caller
// cannot be asked that way, as its request has no stream for requests from
// the server. So the call is parked. The caller is answered with an
// InputRequiredResult naming the backend's request, and the backend call
// goes on waiting. The caller's retry carries the answer in inputResponses
// and the park's id in requestState. It gives the backend its answer and
// waits for what comes next: the call's result, or the backend's next
// request, parked again. A request for what the caller did not declare it
// can give ends the call with -32021. What the backend sends about the call
// after a retry answered it (progress, log messages) goes on that retry's
// stream; while the call is parked it has none, and is dropped.
//
// The requestState is an unguessable id of a park kept here, bound to the
// caller, the method and the entry; a retry that does not match, or comes
// after the park expired (the backend call is then cancelled), is -32602.

package catalogue

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// parkTTL is how long a parked call waits for the caller's retry.
const parkTTL = 10 * time.Minute

// parkPrefix marks a requestState the relay minted.
const parkPrefix = "mcpgate-park:"

// ask is a backend request waiting for the caller's answer.
type ask struct {
	m      *jsonrpc.Message
	answer chan askAnswer
}

type askAnswer struct {
	result json.RawMessage
	err    error
}

// modernCall is one backend call made for a 2026-07-28 caller.
type modernCall struct {
	asks   chan *ask          // the backend's requests, from Inflight.OnRequest
	done   chan modernResult  // the call's end
	cancel context.CancelFunc // ends the backend call
	// watchdog bounds the backend's quiet time (call_timeout), paused
	// while the call is parked: then the caller is the one to wait for.
	watchdog *watchdog
	// inflight is the call's entry in the backend's registry: a retry
	// takes over its notifications (inflightCall.rebind).
	inflight *inflightCall
}

type modernResult struct {
	res json.RawMessage
	err error
}

// park is a call waiting for the caller's retry.
type park struct {
	call              *modernCall
	ask               *ask
	key               string
	principal, method string
	entry             string
	timer             *time.Timer
}

// parks are a Backend's parked calls, by id.
type parks struct {
	mu  sync.Mutex
	m   map[string]*park
	seq uint64
}

func (p *parks) put(id string, k *park) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*park{}
	}
	p.m[id] = k
}

func (p *parks) take(id string) *park {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.m[id]
	delete(p.m, id)
	return k
}

// takeFor takes the park id when it was made for this caller, method and
// entry; a retry that does not match leaves it for the one that does.
func (p *parks) takeFor(id, principal, method, entry string) *park {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.m[id]
	if k == nil || k.principal != principal || k.method != method || k.entry != entry {
		return nil
	}
	delete(p.m, id)
	return k
}

func (p *parks) nextKey() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	return "backend-" + strconv.FormatUint(p.seq, 10)
}

func newParkID() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func principal(ctx context.Context) string {
	id, _ := mcp.IdentityFrom(ctx)
	return id.Key()
}

// ErrParkUnknown answers a retry whose park no replica holds (any more).
var ErrParkUnknown = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: requestState is unknown or has expired", nil)

// forwardModern makes, or resumes, a call for a 2026-07-28 caller.
func (b *Mirror) forwardModern(ctx context.Context, r *mcp.Request, method string, params json.RawMessage) (json.RawMessage, error) {
	entry, _ := r.EntryName()
	if state, ok := jsonrpc.LookupString(r.Params, "requestState"); ok {
		id, ours := strings.CutPrefix(state, parkPrefix)
		if !ours {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: requestState is not one this gateway issued", nil)
		}
		if replica, _, elsewhere := strings.Cut(id, "."); elsewhere && b.claims.parkHandOff != nil && replica != b.claims.parkHandOff.Replica() {
			// Parked on another replica (handoff.go).
			return b.claims.parkHandOff.Resume(ctx, replica, ParkedRetry{Backend: b.name, Park: id, Principal: principal(ctx),
				Method: method, Entry: entry, Params: r.Params, Capabilities: r.ClientCapabilities()})
		}
		return b.resume(ctx, r, ParkedRetry{Backend: b.name, Park: id, Principal: principal(ctx), Method: method, Entry: entry,
			Params: r.Params, Capabilities: r.ClientCapabilities()})
	}
	client, inflight, release, err := b.upstream(ctx, r)
	if err != nil {
		return nil, err
	}
	// The backend call outlives the caller's request that started it.
	bctx, cancelCause := context.WithCancelCause(context.WithoutCancel(ctx))
	cancel := func() { cancelCause(context.Canceled) }
	call := &modernCall{asks: make(chan *ask), done: make(chan modernResult, 1), cancel: cancel}
	params, ic := inflight.beginWith(bctx, r, withoutReservedMeta(params), b.timeout, cancelCause, call.asks)
	wd := &ic.watchdog
	call.watchdog, call.inflight = wd, ic
	go func() {
		defer release()
		defer cancel()
		res, err := b.call(bctx, client, &mcp.Outbound{Method: method, Params: params})
		inflight.end(ic)
		if err != nil && timedOut(bctx) {
			b.log.Warn("relay: backend did not answer in time", "method", method, "timeout", b.timeout)
			err = b.timeoutError(b.timeout)
		}
		call.done <- modernResult{res, err}
	}()
	return b.await(ctx, principal(ctx), r.ClientCapabilities(), call, method, entry)
}

// resume gives a parked call the caller's answer from its retry, and
// waits for what comes next. r is the retry, or nil when it came through
// another replica: what the backend sends about the call meanwhile then
// has no stream here, and is dropped.
func (b *Mirror) resume(ctx context.Context, r *mcp.Request, retry ParkedRetry) (json.RawMessage, error) {
	k := b.parked.takeFor(retry.Park, retry.Principal, retry.Method, retry.Entry)
	if k == nil {
		return nil, ErrParkUnknown
	}
	k.timer.Stop()
	var answer json.RawMessage
	if responses, _ := jsonrpc.Lookup(retry.Params, "inputResponses"); len(responses) > 0 && responses[0] == '{' {
		answer, _ = jsonrpc.Lookup(responses, k.key)
	}
	if len(answer) == 0 || answer[0] != '{' {
		return b.park(retry.Principal, k.call, k.ask, k.key, retry.Method, retry.Entry) // asked again, under the same key
	}
	if r != nil {
		k.call.inflight.rebind(r) // what the backend sends now goes on the retry's stream
	}
	k.call.watchdog.resume() // the backend's turn again
	k.ask.answer <- askAnswer{result: answer}
	return b.await(ctx, retry.Principal, retry.Capabilities, k.call, retry.Method, retry.Entry)
}

// await waits for the call's end or the backend's next request, which
// the caller of capabilities is asked.
func (b *Mirror) await(ctx context.Context, principal string, capabilities json.RawMessage, call *modernCall, method, entry string) (json.RawMessage, error) {
	for {
		select {
		case res := <-call.done:
			if res.err == nil {
				return res.res, nil
			}
			return nil, b.failure(ctx, method, res.err)
		case a := <-call.asks:
			capability := mcp.InputCapability(a.m.Method)
			if c, _ := jsonrpc.Lookup(capabilities, capability); capability == "" || len(c) == 0 || string(c) == "null" {
				// The backend hears what such a client would say, and
				// the caller why its call cannot go on (the revision's
				// -32021): the call is over.
				a.answer <- askAnswer{err: jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
					"the client did not declare the "+capability+" capability", nil)}
				call.cancel()
				return nil, b.missingCapability(capability, a.m.Method)
			}
			return b.park(principal, call, a, "", method, entry)
		case <-ctx.Done():
			call.cancel()
			return nil, ctx.Err()
		}
	}
}

// park keeps call for principal's retry and answers the caller with the
// backend's request, under key ("": a new one). Its id names this replica
// when another could hand the retry over (handoff.go).
func (b *Mirror) park(principal string, call *modernCall, a *ask, key, method, entry string) (json.RawMessage, error) {
	id := newParkID()
	if h := b.claims.parkHandOff; h != nil {
		if replica := h.Replica(); replica != "" {
			id = replica + "." + id
		}
	}
	if key == "" {
		key = b.parked.nextKey()
	}
	call.watchdog.pause() // the caller's turn: the park's own TTL bounds it
	k := &park{call: call, ask: a, key: key, principal: principal, method: method, entry: entry}
	k.timer = time.AfterFunc(parkTTL, func() {
		if b.parked.take(id) != nil {
			a.answer <- askAnswer{err: jsonrpc.NewError(jsonrpc.CodeInternalError, "the client did not answer in time", nil)}
			call.cancel()
		}
	})
	b.parked.put(id, k)
	out := []byte(`{"resultType":"input_required","inputRequests":{`)
	out = jsonrpc.AppendString(out, k.key)
	out = append(out, `:{"method":`...)
	out = jsonrpc.AppendString(out, a.m.Method)
	out = append(out, `,"params":`...)
	if len(a.m.Params) == 0 {
		out = append(out, `{}`...)
	} else {
		out = append(out, a.m.Params...)
	}
	out = append(out, `}},"requestState":`...)
	out = jsonrpc.AppendString(out, parkPrefix+id)
	return append(out, '}'), nil
}
