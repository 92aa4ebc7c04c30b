// client_answers.go is the bookkeeping that lets a client Conn promise
// one answer per request: which requests an outgoing message carries, and
// which of them an incoming message answers.

package mcphttp

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// outgoing is what Write needs to know about a message it sends.
type outgoing struct {
	requests    []jsonrpc.ID // ids that expect an answer
	initialize  bool         // carries initialize: the answer names the session
	initialized bool         // carries notifications/initialized: the session is ready
}

// inspectOutgoing parses a message (or batch) about to be sent. What is
// not valid JSON-RPC is refused here rather than sent.
func inspectOutgoing(msg []byte) (outgoing, error) {
	var msgs []*jsonrpc.Message
	if jsonrpc.IsBatch(msg) {
		all, errs, err := jsonrpc.ParseBatch(msg)
		if err == nil {
			err = errors.Join(errs...)
		}
		if err != nil {
			return outgoing{}, fmt.Errorf("mcphttp: invalid outgoing batch: %w", err)
		}
		msgs = all
	} else {
		m, err := jsonrpc.Parse(msg)
		if err != nil {
			return outgoing{}, fmt.Errorf("mcphttp: invalid outgoing message: %w", err)
		}
		msgs = []*jsonrpc.Message{m}
	}
	var out outgoing
	for _, m := range msgs {
		if m.IsRequest() {
			out.requests = append(out.requests, m.ID)
		}
		out.initialize = out.initialize || m.Method == "initialize"
		out.initialized = out.initialized || m.Method == "notifications/initialized"
	}
	return out, nil
}

// answeredIDs returns the ids of the responses in data (a message or a
// batch), or nil if data is not JSON-RPC at all.
func answeredIDs(data []byte) map[string]bool {
	var msgs []*jsonrpc.Message
	if jsonrpc.IsBatch(data) {
		all, _, err := jsonrpc.ParseBatch(data)
		if err != nil {
			return nil
		}
		msgs = all
	} else {
		m, err := jsonrpc.Parse(data)
		if err != nil {
			return nil
		}
		msgs = []*jsonrpc.Message{m}
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		if m != nil && (m.Kind() == jsonrpc.KindResult || m.Kind() == jsonrpc.KindError) && m.ID != nil {
			ids[m.ID.Key()] = true
		}
	}
	return ids
}

// unansweredBy returns the ids that data (a message or a batch) does not
// answer; ok is false when data is not JSON-RPC. The common case, one
// answer to one request, builds no set.
func unansweredBy(data []byte, ids []jsonrpc.ID) (rest []jsonrpc.ID, ok bool) {
	if len(ids) == 1 && !jsonrpc.IsBatch(data) {
		m, err := jsonrpc.Parse(data)
		if err != nil {
			return nil, false
		}
		if (m.Kind() == jsonrpc.KindResult || m.Kind() == jsonrpc.KindError) && m.ID != nil && bytes.Equal(m.ID, ids[0]) {
			return nil, true
		}
		return ids, true
	}
	answered := answeredIDs(data)
	if answered == nil {
		return nil, false
	}
	return unanswered(ids, answered), true
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
