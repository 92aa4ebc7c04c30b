// client_answers.go is the bookkeeping that lets a client Conn promise
// one answer per request: which requests an outgoing message carries, and
// which of them an incoming message answers.

package mcphttp

import "github.com/mcpgate/mcpgate/jsonrpc"

// outgoing is what Write needs to know about a message it sends.
type outgoing struct {
	requests    []jsonrpc.ID // ids that expect an answer
	initialize  bool         // carries initialize: the answer names the session
	initialized bool         // carries notifications/initialized: the session is ready
}

// outgoingOf is what Write needs to know about m.
func outgoingOf(m *jsonrpc.Message) outgoing {
	out := outgoing{initialize: m.Method == "initialize", initialized: m.Method == "notifications/initialized"}
	if m.IsRequest() {
		out.requests = []jsonrpc.ID{m.ID}
	}
	return out
}

// eachMessage parses data, one message or a batch, once, and calls fn
// with each message in order; ok is false when data is not JSON-RPC at
// all. A batch's members that do not parse are left out.
func eachMessage(data []byte, fn func(*jsonrpc.Message)) (ok bool) {
	if jsonrpc.IsBatch(data) {
		all, errs, err := jsonrpc.ParseBatch(data)
		if err != nil {
			return false
		}
		for i, m := range all {
			if errs[i] == nil {
				fn(m)
			}
		}
		return true
	}
	m, err := jsonrpc.Parse(data)
	if err != nil {
		return false
	}
	fn(m)
	return true
}

// isAnswer reports whether m answers a request.
func isAnswer(m *jsonrpc.Message) bool {
	return (m.Kind() == jsonrpc.KindResult || m.Kind() == jsonrpc.KindError) && m.ID != nil
}

func unanswered(ids []jsonrpc.ID, answered map[string]bool) []jsonrpc.ID {
	var out []jsonrpc.ID
	for _, id := range ids {
		if !answered[id.Key()] {
			out = append(out, id)
		}
	}
	return out
}

func containsID(ids []jsonrpc.ID, id jsonrpc.ID) bool {
	for _, x := range ids {
		if x.Key() == id.Key() {
			return true
		}
	}
	return false
}

func idSet(ids []jsonrpc.ID) map[string]jsonrpc.ID {
	set := make(map[string]jsonrpc.ID, len(ids))
	for _, id := range ids {
		set[id.Key()] = id
	}
	return set
}

func values(set map[string]jsonrpc.ID) []jsonrpc.ID {
	out := make([]jsonrpc.ID, 0, len(set))
	for _, id := range set {
		out = append(out, id)
	}
	return out
}
