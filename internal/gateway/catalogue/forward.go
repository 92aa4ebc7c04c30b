// forward.go is the way in to the backend: each relayed call goes out with
// the caller's params (the name put back to the backend's own) and comes
// back as the backend's raw result or raw JSON-RPC error. Only a failure to
// reach the backend is answered by the relay itself.

package catalogue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func (b *Mirror) callTool(orig string, shape *Shape, own []mcp.HeaderParam) mcp.ToolHandler {
	return func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		params, err := b.unprefix(r, orig)
		headers := r.HeaderParams()
		if err == nil && shape != nil {
			// The upstream call's Mcp-Param headers follow the backend's
			// own schema and the arguments it gets, a fixed one included.
			params, err = shape.arguments(params)
			headers = own
		}
		if err != nil {
			return nil, err
		}
		res, err := b.forward(ctx, r, "tools/call", params, headers)
		return res, frontNamed(r, err, orig)
	}
}

func (b *Mirror) getPrompt(orig string, shape *Shape) mcp.PromptHandler {
	return func(ctx context.Context, r *mcp.Request, _ map[string]string) (json.RawMessage, error) {
		params, err := b.unprefix(r, orig)
		if err == nil {
			params, err = shape.arguments(params)
		}
		if err != nil {
			return nil, err
		}
		res, err := b.forward(ctx, r, "prompts/get", params, nil)
		return res, frontNamed(r, err, orig)
	}
}

// frontNamed is the backend's -32602 about an entry the front renamed,
// told in the name the client called (demo__greet, not greet): the
// client never saw the backend's own name and would look for it in vain.
// The name is replaced where it stands whole in the message and where it
// is the whole value of a member of data (such as data.tool); the code
// and every other byte of data are kept. Any other error, and one about
// an entry the front did not rename, passes as it came.
func frontNamed(r *mcp.Request, err error, orig string) error {
	je, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || je.Code != jsonrpc.CodeInvalidParams {
		return err
	}
	front, _ := r.EntryName()
	if front == "" || front == orig {
		return err
	}
	msg := replaceWholeName(je.Message, orig, front)
	data := je.Data
	if len(data) > 0 && data[0] == '{' {
		var keys []string
		_ = jsonrpc.Members(data, func(key string, v json.RawMessage) bool {
			var s string
			if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && s == orig {
				keys = append(keys, key)
			}
			return true
		})
		for _, k := range keys {
			if renamed, err := jsonrpc.WithStringMember(data, k, front); err == nil {
				data = renamed
			}
		}
	}
	if msg == je.Message && bytes.Equal(data, je.Data) {
		return err
	}
	return jsonrpc.NewError(je.Code, msg, json.RawMessage(data))
}

// replaceWholeName replaces name in s where it stands whole: not inside a
// longer name (a character of a tool name on either side).
func replaceWholeName(s, name, with string) string {
	var out strings.Builder
	last := 0 // s[:last] is written
	for i := 0; name != ""; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			break
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isNameByte(s[j-1])) && (end == len(s) || !isNameByte(s[end])) {
			out.WriteString(s[last:j])
			out.WriteString(with)
			last = end
		}
		i = end
	}
	if last == 0 {
		return s
	}
	out.WriteString(s[last:])
	return out.String()
}

// isNameByte reports whether c may be part of a tool or prompt name
// (letters, digits, _ - . and /).
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/'
}

// unprefix puts the backend's own name back into params; arguments and
// _meta are not touched.
func (b *Mirror) unprefix(r *mcp.Request, orig string) (json.RawMessage, error) {
	// The front name is the backend's own unless a prefix or a collision
	// (reconcile) renamed the entry.
	if name, _ := r.EntryName(); name == orig {
		return r.Params, nil
	}
	out, err := jsonrpc.WithStringMember(r.Params, "name", orig)
	if err != nil {
		// The engine found the entry by this name, so this cannot happen
		// short of a bug; answer as the engine answers a bad name.
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: name is required and must be a string", nil)
	}
	return out, nil
}

// forward makes the call. The backend's own error is returned as it is (the
// engine writes a *jsonrpc.Error verbatim); any other failure means the
// backend could not be reached. While the call is in flight, r is in the
// backend's Inflight registry, so that what the backend sends about the
// call reaches r (inflight.go). headers are the x-mcp-header arguments
// of a tools/call, for a 2026-07-28 backend's Mcp-Param headers.
func (b *Mirror) forward(ctx context.Context, r *mcp.Request, method string, params json.RawMessage, headers []mcp.HeaderParam) (json.RawMessage, error) {
	if b.sessionless {
		client, inflight, release, err := b.upstream(ctx, r)
		if err != nil {
			return nil, err
		}
		defer release()
		return b.forwardSessionless(ctx, r, client, inflight, method, params, headers) // sessionless.go
	}
	if r != nil && r.MultiRoundTrip() {
		return b.forwardModern(ctx, r, method, params) // park.go
	}
	client, inflight, release, err := b.upstream(ctx, r)
	if err != nil {
		return nil, err
	}
	defer release()
	params = withoutReservedMeta(params)
	params, ic := inflight.begin(ctx, r, params, b.timeout)
	defer inflight.end(ic)
	res, err := b.call(ctx, client, &mcp.Outbound{Method: method, Params: params})
	if err == nil {
		return res, nil
	}
	return nil, b.failure(ctx, method, err)
}

// failure is the answer to a call that did not get a result: the
// backend's own error as it is, or why the relay could not get one. A
// failure the client transport made (*mcp.TransportError: the stream
// broke, the POST was refused) means the backend could not be reached,
// and is answered with data.backend like any other such failure.
func (b *Mirror) failure(ctx context.Context, method string, err error) error {
	if timedOut(ctx) {
		b.log.Warn("relay: backend did not answer in time", "method", method, "timeout", b.timeout)
		return b.timeoutError(b.timeout)
	}
	var te *mcp.TransportError
	if errors.As(err, &te) && te.Kind == mcp.KindTooLarge {
		limit := strconv.Itoa(te.Limit)
		b.log.Warn("relay: the backend's answer was over the size limit", "method", method, "limit", limit)
		return jsonrpc.NewError(jsonrpc.CodeInternalError,
			fmt.Sprintf("backend %s answered with more than the limit of %s bytes", b.name, limit),
			map[string]string{"backend": b.name, "kind": string(mcp.KindTooLarge), "limit": limit})
	}
	var je *jsonrpc.Error
	if te == nil && errors.As(err, &je) {
		return je
	}
	b.log.Warn("relay: backend unreachable", "method", method, "err", err)
	return b.unavailable()
}

// unavailable is the answer to a call the backend could not take: -32603
// with data.backend, so that a client can tell which backend is down (a
// plain error would become an isError tool result or a generic -32603).
// Why it could not is logged, never answered: the reason names internal
// addresses and paths ("dial tcp 127.0.0.1:3901: connect: connection
// refused") that are nobody's business but the operator's.
func (b *Mirror) unavailable() *jsonrpc.Error { return Unavailable(b.name) }
