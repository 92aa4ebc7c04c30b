// sessionless.go is the proxy's side of an upstream that speaks
// 2026-07-28 (the session's client learned it at Connect; docs/wire.md §4).
// The wire carries the session era's exchanges, so the proxy makes up
// what a sessionless server needs and the exchange does not say:
//
//   - A log level in each request's _meta, as the revision's servers log
//     for a request only when it names one. It is the one logging/setLevel
//     last set, answered by the proxy itself, or debug. A session-era
//     server never told a level sends what it likes, and the gateway
//     filters for each caller anyway. A level the request names itself is
//     kept.
//   - The answers to an InputRequiredResult: each input goes to the
//     gateway as the server request it would have been in a session (tag
//     12, ask.go), and the request is retried with the answers, up to
//     upstream.MaxInputRounds. What the gateway cannot answer is -32021.
//   - The Mcp-Param headers of a tools/call over HTTP, from the tool's
//     x-mcp-header annotations: learnt from every tools/list answer that
//     passes, or from a listing of the proxy's own when a call names a
//     tool no answer has shown yet.
//   - The notifications of a session: a subscriptions/listen is kept open
//     while the session lives, for the list changes and the resources
//     subscribed to. When it had to be opened again, the three list changes
//     are told, since what changed meanwhile was not.
//   - resources/subscribe and unsubscribe, answered by the proxy: the
//     listen is opened again with the new set of URIs, kept for the
//     sessions to come. The answer waits for its acknowledgement, so that
//     an update after the answer is not missed.

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// defaultLogLevel is asked of a sessionless upstream before any
// logging/setLevel.
const defaultLogLevel = mcp.LevelDebug

// ackWait bounds how long a subscribe waits for the listen that carries
// it to be acknowledged.
const ackWait = 5 * time.Second

// listChanges are told when a listen had to be opened again.
var listChanges = []string{mcp.ToolsListChanged, mcp.PromptsListChanged, mcp.ResourcesListChanged}

// exchangeSessionless is Exchange on a sessionless upstream session.
func (u *Upstream) exchangeSessionless(ctx context.Context, s *session, method string, params json.RawMessage) (json.RawMessage, error) {
	if method == "logging/setLevel" {
		var p struct {
			Level mcp.LogLevel `json:"level"`
		}
		if json.Unmarshal(params, &p) != nil || !p.Level.Known() {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: level must be a log level", nil)
		}
		u.level.Store(&p.Level)
		return json.RawMessage(`{}`), nil
	}
	if method == "resources/subscribe" || method == "resources/unsubscribe" {
		uri, ok := jsonrpc.LookupString(params, "uri")
		if !ok {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: uri must be a string", nil)
		}
		u.subscribe(ctx, uri, method == "resources/subscribe")
		return json.RawMessage(`{}`), nil
	}
	params = u.withLogLevel(params)
	var headers [][2]string
	if method == "tools/call" && u.cfg.Kind != upstream.KindStdio {
		headers = u.paramHeaders(ctx, s, params)
	}
	res, err := upstream.WithInput(ctx, params, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		res, err := s.client.Send(ctx, &mcp.Outbound{Method: method, Params: params, Headers: headers})
		if err == nil && method == "tools/list" {
			s.noteTools(res)
		}
		return res, err
	}, func(ctx context.Context, inputs []mcp.Input) ([]json.RawMessage, error) {
		answers := make([]json.RawMessage, len(inputs))
		for i, in := range inputs {
			var err error
			if answers[i], err = u.answerInput(ctx, in); err != nil {
				return nil, err
			}
		}
		return answers, nil
	})
	if errors.Is(err, upstream.ErrKeepsAsking) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
			method+": the server asked for input more than the proxy retries for", nil)
	}
	return res, err
}

// answerInput asks the gateway for one input, as the server request it
// stands for.
func (u *Upstream) answerInput(ctx context.Context, in mcp.Input) (json.RawMessage, error) {
	capability := mcp.InputCapability(in.Method)
	ask := u.ask.Load()
	if capability == "" || ask == nil {
		return nil, mcp.MissingCapability(capability, "the server asks its client for "+in.Method+
			", and the proxy has no gateway that could answer it", map[string]string{"method": in.Method})
	}
	params, _ := in.Params.(json.RawMessage)
	id := jsonrpc.ID(strconv.AppendUint(nil, u.inputs.Add(1), 10))
	res, err := (*ask)(ctx, &jsonrpc.Message{ID: id, Method: in.Method, Params: params})
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound {
		return nil, mcp.MissingCapability(capability, "the server asks its client for "+in.Method+
			", and the gateway's client does not serve it: "+je.Message, map[string]string{"method": in.Method})
	}
	return res, err
}

// withLogLevel gives params the log level a sessionless server logs at
// for the request, unless they name one.
func (u *Upstream) withLogLevel(params json.RawMessage) json.RawMessage {
	if meta, _ := jsonrpc.Lookup(params, "_meta"); len(meta) > 0 {
		if v, _ := jsonrpc.Lookup(meta, mcp.MetaLogLevel); len(v) > 0 {
			return params
		}
	}
	level := defaultLogLevel
	if l := u.level.Load(); l != nil {
		level = *l
	}
	member := jsonrpc.AppendString([]byte(`"`+mcp.MetaLogLevel+`":`), string(level))
	return mcp.WithMeta(params, member, func([]byte) bool { return true })
}

// listen keeps a subscriptions/listen open on s until ctx ends (stop
// ends it, and so does the session's end) or the server refuses it; a
// change of the resources subscribed to opens it again with the new set.
func (u *Upstream) listen(ctx context.Context, s *session, stop context.CancelFunc) {
	for {
		params, changed := u.listenParams()
		lctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-changed:
				cancel()
			case <-lctx.Done():
			}
		}()
		err := s.client.Listen(lctx, params, upstream.Relisten, func(err error) {
			if !s.alive() {
				stop()
				return
			}
			u.log.Debug("upstream subscriptions/listen ended; opening it again", "err", err)
			for _, m := range listChanges {
				u.hub.publish(&jsonrpc.Message{Method: m})
			}
		})
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case lctx.Err() != nil:
			continue // the subscriptions changed
		}
		u.log.Info("upstream refuses subscriptions/listen; its list changes are not followed", "err", err)
		return
	}
}

// listenParams are the listen's filter — the list changes a session would
// have told, and the resources subscribed to — and a channel closed at the
// next change of those.
func (u *Upstream) listenParams() (json.RawMessage, <-chan struct{}) {
	u.subMu.Lock()
	defer u.subMu.Unlock()
	if u.subsChanged == nil {
		u.subsChanged = make(chan struct{})
	}
	return upstream.ListenParams(slices.Collect(maps.Keys(u.subs))), u.subsChanged
}

// subscribe adds uri to the resources subscribed to, or takes it out. It
// waits (up to ackWait) for a listen acknowledged with that change. The
// acknowledgement names the resources it carries, so that one of a listen
// opened before the change, read late, does not count.
func (u *Upstream) subscribe(ctx context.Context, uri string, on bool) {
	u.subMu.Lock()
	if _, had := u.subs[uri]; had == on {
		u.subMu.Unlock()
		return
	}
	if on {
		if u.subs == nil {
			u.subs = map[string]struct{}{}
		}
		u.subs[uri] = struct{}{}
	} else {
		delete(u.subs, uri)
	}
	w := subWait{uri: uri, on: on, acked: make(chan struct{})}
	u.awaiting = append(u.awaiting, w)
	if u.subsChanged != nil {
		close(u.subsChanged)
	}
	u.subsChanged = make(chan struct{})
	u.subMu.Unlock()
	t := time.NewTimer(ackWait)
	defer t.Stop()
	select {
	case <-w.acked:
		return
	case <-t.C:
		u.log.Info("upstream subscriptions/listen not acknowledged after a subscribe; answering anyway", "uri", uri)
	case <-ctx.Done():
	}
	u.subMu.Lock()
	u.awaiting = slices.DeleteFunc(u.awaiting, func(x subWait) bool { return x.acked == w.acked })
	u.subMu.Unlock()
}

// subWait is a subscribe waiting for a listen acknowledged with uri
// subscribed to (on) or not.
type subWait struct {
	uri   string
	on    bool
	acked chan struct{}
}

// publishNote hands a notification from the upstream to the hub; the
// acknowledgement of the proxy's own listen is not the gateway's, and
// ends the waits of the subscribes it carries.
func (u *Upstream) publishNote(m *jsonrpc.Message) {
	if m.Method == "notifications/subscriptions/acknowledged" {
		var ack struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		}
		_ = json.Unmarshal(m.Params, &ack)
		u.subMu.Lock()
		u.awaiting = slices.DeleteFunc(u.awaiting, func(w subWait) bool {
			if slices.Contains(ack.ResourceSubscriptions, w.uri) == w.on {
				close(w.acked)
				return true
			}
			return false
		})
		u.subMu.Unlock()
		return
	}
	u.hub.publish(m)
}

// maxListPages bounds the proxy's own listing of the tools.
const maxListPages = 100

// paramHeaders are the Mcp-Param headers of the tools/call with params.
func (u *Upstream) paramHeaders(ctx context.Context, s *session, params json.RawMessage) [][2]string {
	name, _ := jsonrpc.LookupString(params, "name")
	hp, ok := s.headerParamsOf(name)
	if !ok {
		u.listTools(ctx, s)
		hp, _ = s.headerParamsOf(name)
	}
	if len(hp) == 0 {
		return nil
	}
	args, _ := jsonrpc.Lookup(params, "arguments")
	return mcp.ParamHeaders(hp, args)
}

// listTools lists the server's tools, every page, for their annotations.
func (u *Upstream) listTools(ctx context.Context, s *session) {
	params := u.withLogLevel(nil)
	for range maxListPages {
		res, err := s.client.Call(ctx, "tools/list", params)
		if err != nil {
			u.log.Debug("upstream tools/list for the Mcp-Param headers failed", "err", err)
			return
		}
		s.noteTools(res)
		cursor, ok := jsonrpc.LookupString(res, "nextCursor")
		if !ok || cursor == "" {
			return
		}
		params, _ = jsonrpc.SetMember(params, "cursor", jsonrpc.AppendString(nil, cursor))
	}
}

// noteTools keeps the x-mcp-header annotations of the tools a tools/list
// result lists. A tool whose annotations break the rules gets none: the
// gateway leaves it out, as a client must.
func (s *session) noteTools(res json.RawMessage) {
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(res, &list) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.headerParams == nil {
		s.headerParams = map[string][]mcp.HeaderParam{}
	}
	for _, tool := range list.Tools {
		hp, _ := mcp.HeaderParams(tool.InputSchema)
		s.headerParams[tool.Name] = hp
	}
}

func (s *session) headerParamsOf(name string) ([]mcp.HeaderParam, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hp, ok := s.headerParams[name]
	return hp, ok
}
