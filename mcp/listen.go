// listen.go is subscriptions/listen (2026-07-28): a sessionless client's
// long-lived request. Its stream carries the change notifications the
// client opted in to: list changes of tools, prompts and resources, and
// updates of the resources it names. Each is tagged with the subscription's
// id, the request's JSON-RPC id. An acknowledgement first says which of
// them the server honours. It replaces resources/subscribe and the GET
// stream; closing the stream ends it.

package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The notifications that a list changed.
const (
	ToolsListChanged     = "notifications/tools/list_changed"
	ResourcesListChanged = "notifications/resources/list_changed"
	PromptsListChanged   = "notifications/prompts/list_changed"
)

// listener is one open subscriptions/listen.
type listener struct {
	id     jsonrpc.ID
	sink   Sink
	filter listenFilter
	mu     sync.Mutex    // one notification at a time, the acknowledgement first
	done   chan struct{} // closed by EndListeners
}

type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// wants reports whether the listener opted in to method (about uri, for
// resources/updated).
func (f *listenFilter) wants(method, uri string) bool {
	switch method {
	case ToolsListChanged:
		return f.ToolsListChanged
	case PromptsListChanged:
		return f.PromptsListChanged
	case ResourcesListChanged:
		return f.ResourcesListChanged
	case "notifications/resources/updated":
		return slices.Contains(f.ResourceSubscriptions, uri)
	}
	return false
}

// listen serves one subscriptions/listen until ctx ends: the caller
// closed the stream, or the server is shutting down. Resources the caller
// may not read are not honoured.
func (s *Server) listen(ctx context.Context, m *jsonrpc.Message, sink Sink) json.RawMessage {
	var p struct {
		Notifications listenFilter `json:"notifications"`
	}
	_ = json.Unmarshal(m.Params, &p)
	f := p.Notifications
	kept := f.ResourceSubscriptions[:0:0]
	for _, uri := range f.ResourceSubscriptions {
		if _, _, e, ok := s.findResource(uri); ok && s.gate.Visible(ctx, e) && !slices.Contains(kept, uri) {
			kept = append(kept, uri)
		}
	}
	f.ResourceSubscriptions = kept
	l := &listener{id: m.ID, sink: sink, filter: f, done: make(chan struct{})}
	ack, _ := json.Marshal(f)
	l.mu.Lock()
	s.mu.Lock()
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	_ = sink.Send(ctx, jsonrpc.AppendRequest(nil, nil, "notifications/subscriptions/acknowledged", l.tag(ack)))
	l.mu.Unlock()
	select {
	case <-ctx.Done(): // the caller closed the stream
	case <-l.done: // the server ends it: answered, a graceful end
	}
	s.mu.Lock()
	delete(s.listeners, l)
	s.mu.Unlock()
	return l.tag(emptyResult)
}

// EndListeners ends every open subscriptions/listen gracefully, with its
// result (a server shutting down).
func (s *Server) EndListeners() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		select {
		case <-l.done:
		default:
			close(l.done)
		}
	}
}

// tag adds the subscription's id to a params or result object's _meta.
func (l *listener) tag(obj json.RawMessage) json.RawMessage {
	meta := append([]byte(`{"_meta":{"io.modelcontextprotocol/subscriptionId":`), l.id...)
	meta = append(meta, '}')
	if len(obj) < 2 || obj[0] != '{' || noMembers(obj) {
		return append(meta, '}')
	}
	return append(append(meta, ','), obj[1:]...)
}

// notifyListeners sends a change notification to every listener that
// opted in to it.
func (s *Server) notifyListeners(method string, params json.RawMessage) {
	uri := ""
	if method == "notifications/resources/updated" {
		uri, _ = jsonrpc.LookupString(params, "uri")
	}
	s.mu.Lock()
	var to []*listener
	for l := range s.listeners {
		if l.filter.wants(method, uri) {
			to = append(to, l)
		}
	}
	s.mu.Unlock()
	for _, l := range to {
		l.mu.Lock()
		if err := l.sink.Send(context.Background(), jsonrpc.AppendRequest(nil, nil, method, l.tag(params))); err != nil {
			s.log.Debug("mcp: notification not delivered to a listener", "method", method, "err", err)
		}
		l.mu.Unlock()
	}
}
