// batch.go serves a JSON-RPC batch: only under the one revision that
// allows batches (2025-03-26), each element answered on its own, the
// requests served concurrently, and the answers gathered into one array.

package mcp

import (
	"context"
	"errors"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// HandleBatch serves the elements of a parsed batch (msgs and their parse
// errors, from jsonrpc.ParseBatch). It returns the array of answers, or nil
// when the batch held only notifications and responses.
func (s *Session) HandleBatch(ctx context.Context, msgs []*jsonrpc.Message, errs []error, related Sink) []byte {
	return serveBatch(msgs, errs, func(m *jsonrpc.Message) []byte { return s.Handle(ctx, m, related) })
}

// serveBatch serves a batch's elements with serve: a notification or a
// response at once, in order, the requests at the same time; a member that
// did not parse is answered with its parse error. The answers due come
// back in order, as one batch.
func serveBatch(msgs []*jsonrpc.Message, errs []error, serve func(*jsonrpc.Message) []byte) []byte {
	answers := make([][]byte, len(msgs))
	var wg sync.WaitGroup
	for i, m := range msgs {
		if errs[i] != nil {
			var pe *jsonrpc.ParseError
			if errors.As(errs[i], &pe) {
				answers[i] = pe.Response()
			}
			continue
		}
		if !m.IsRequest() {
			serve(m)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = serve(m)
		}()
	}
	wg.Wait()
	return joinBatch(answers)
}

// joinBatch is the batch of the answers due (nil when none is).
func joinBatch(answers [][]byte) []byte {
	var out []byte
	for _, a := range answers {
		if a == nil {
			continue
		}
		if out == nil {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, a...)
	}
	if out == nil {
		return nil
	}
	return append(out, ']')
}

// BatchRefused is the answer to a batch under a revision without batches.
func BatchRefused() []byte {
	return jsonrpc.AppendError(nil, nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
		"invalid request: batches are not supported by the negotiated protocol version"))
}
