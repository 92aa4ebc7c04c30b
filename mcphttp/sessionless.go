// sessionless.go serves the 2026-07-28 revision on the same endpoint as the
// 2025 era: a POST whose body's _meta names a sessionless revision is one
// request served on its own (mcp.Server.ServeSessionless), with no session
// id. The transport's part is the HTTP face of the revision. The
// MCP-Protocol-Version header must name the body's revision. The Mcp-Method
// and Mcp-Name headers, when sent, must name the body's method and entry
// (400 and -32020 when they do not). A revision not served is 400 and
// -32022, an unknown method 404. GET and DELETE are 405.

package mcphttp

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Headers of 2026-07-28 (SEP-2243).
const (
	HeaderMethod = "Mcp-Method"
	HeaderName   = "Mcp-Name"
)

// sessionlessHeader reports whether r's MCP-Protocol-Version header names
// a sessionless revision.
func sessionlessHeader(r *http.Request) bool {
	return mcp.IsSessionlessVersion(r.Header.Get(HeaderProtocolVersion))
}

// serveSessionless serves one sessionless POST: sr is its _meta, read
// (ok false when it names no revision, though the header names a
// sessionless one).
func (h *Handler) serveSessionless(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, sr *mcp.Sessionless, ok bool) {
	header := r.Header.Get(HeaderProtocolVersion)
	bodyVersion := ""
	if ok {
		bodyVersion = sr.Version()
	}
	switch {
	case !ok:
		writeJSON(w, http.StatusBadRequest, jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"invalid params: _meta."+mcp.MetaProtocolVersion+" is required (MCP-Protocol-Version is "+header+")", nil)))
		return
	case header != bodyVersion && (header != "" || mcp.IsSessionlessVersion(bodyVersion)):
		writeJSON(w, http.StatusBadRequest, jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(mcp.CodeHeaderMismatch,
			"header mismatch: MCP-Protocol-Version is "+quoted(header)+" but params._meta names "+quoted(bodyVersion),
			map[string]string{"header": HeaderProtocolVersion})))
		return
	}
	if refusal := h.server.CheckSessionless(sr); refusal != nil {
		writeJSON(w, refusal.Status, jsonrpc.AppendError(nil, m.ID, refusal.Err))
		return
	}
	if msg := headerMismatch(r, m); msg != "" && m.IsRequest() {
		writeJSON(w, http.StatusBadRequest, jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(mcp.CodeHeaderMismatch, msg, nil)))
		return
	}
	if !m.IsRequest() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	sr.WithParamHeaders(paramHeaders(r.Header))
	h.answerWith(w, r, nil, sessionlessStatus, func(ctx context.Context, sink mcp.Sink) jsonrpc.Parts {
		return h.server.AnswerSessionless(ctx, sr, sink)
	})
}

// sessionlessStatus is the HTTP status of a sessionless answer sent as
// plain JSON. It is 400 for a request that needed a capability the client
// did not declare (-32021), or whose Mcp-Param headers did not match its
// arguments (-32020, found by the engine once the tool is known). It is 200
// otherwise, the error being in the body.
func sessionlessStatus(answer jsonrpc.Parts) int {
	if answer.Rest != nil {
		return http.StatusOK // a result
	}
	if e, _ := jsonrpc.Lookup(answer.Head, "error"); e != nil {
		code, _ := jsonrpc.Lookup(e, "code")
		if n, err := strconv.Atoi(string(code)); err == nil && (n == mcp.CodeMissingRequiredCapability || n == mcp.CodeHeaderMismatch) {
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}

// noParamHeaders is the headers of a request that sent none (most calls):
// empty, never written, shared. Not nil, which says that no headers were
// read (stdio, a session).
var noParamHeaders = map[string][]string{}

// paramHeaders collects a request's Mcp-Param-{Name} headers, keyed by
// the lower-cased name.
func paramHeaders(h http.Header) map[string][]string {
	out := noParamHeaders
	for k, vs := range h {
		if len(k) > len(mcp.HeaderParamPrefix) && strings.EqualFold(k[:len(mcp.HeaderParamPrefix)], mcp.HeaderParamPrefix) {
			if len(out) == 0 {
				out = map[string][]string{}
			}
			out[strings.ToLower(k[len(mcp.HeaderParamPrefix):])] = vs
		}
	}
	return out
}

// headerMismatch says how Mcp-Method, and Mcp-Name for a request naming
// an entry, are missing or differ from the body ("" when they match). A
// name that is not plain ASCII comes as =?base64?…?= and is compared
// decoded; values are case-sensitive.
func headerMismatch(r *http.Request, m *jsonrpc.Message) string {
	switch v, sent := r.Header[HeaderMethod]; {
	case !sent:
		return "header mismatch: the Mcp-Method header is required"
	case len(v) != 1 || v[0] != m.Method:
		return "header mismatch: Mcp-Method is " + quoted(r.Header.Get(HeaderMethod)) + " but the body's method is " + quoted(m.Method)
	}
	member := nameMember(m.Method)
	if member == "" {
		return ""
	}
	want, ok := jsonrpc.LookupText(m.Params, member)
	if !ok {
		return "" // the engine answers params without it
	}
	v, sent := r.Header[HeaderName]
	if !sent {
		return "header mismatch: the Mcp-Name header is required for " + m.Method
	}
	if len(v) != 1 || decodeHeaderValue(v[0]) != string(want) {
		return "header mismatch: Mcp-Name does not match params." + member
	}
	return ""
}

// nameMember is the params member a method's Mcp-Name header mirrors
// ("" for a method without one): the entry's name or URI, or the task's
// id (the tasks extension's routing header, SEP-2663).
func nameMember(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

func quoted(s string) string { return `"` + s + `"` }

// decodeHeaderValue reads a header value in 2026-07-28's encoding: a value
// between =?base64? and ?= is the Base64 of its UTF-8 bytes; any other is
// itself. A sentinel that does not decode is compared as it is (and so
// does not match).
func decodeHeaderValue(v string) string {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return v
	}
	return string(b)
}
