// sessionless.go serves the 2026-07-28 revision (SEP-2575): no session, no
// initialize. Every request carries its revision and the client's
// capabilities in params._meta, and is answered on its own. The era is
// decided per request — a request whose _meta names the revision is served
// here; an initialize opens a session of the 2025 era as before — so one
// endpoint serves both.
//
// A sessionless request goes through the engine exactly as a session's does
// (resolution, observers, middleware, the gate, the method), with no
// Session behind it. What a handler asks of the session comes from the
// request's own _meta instead: the revision, the client's capabilities, the
// log level.

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Version20260728 is the first sessionless revision.
const Version20260728 = "2026-07-28"

// sessionlessVersions are the sessionless revisions served, oldest first.
var sessionlessVersions = []string{Version20260728}

// SessionlessVersions are the sessionless revisions served, oldest first
// (a copy).
func SessionlessVersions() []string { return slices.Clone(sessionlessVersions) }

// LatestSessionlessVersion is the newest sessionless revision served.
func LatestSessionlessVersion() string { return sessionlessVersions[len(sessionlessVersions)-1] }

// IsSessionlessVersion reports whether v is a sessionless revision served.
func IsSessionlessVersion(v string) bool { return slices.Contains(sessionlessVersions, v) }

// The reserved _meta keys of a sessionless request and result.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// The error codes 2026-07-28 adds (the range -32020 to -32099 is the
// specification's).
const (
	CodeHeaderMismatch             = -32020
	CodeMissingRequiredCapability  = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// CodeURLElicitationRequired (2025-11-25) answers a request that cannot
// go on until the user has opened a page: its data.elicitations are URL
// mode elicitations, each with an elicitationId, a url and a message.
const CodeURLElicitationRequired = -32042

// Sessionless is a request of the sessionless era, its _meta read once:
// the transport decides the era by it, the server checks and serves it.
type Sessionless struct {
	m            *jsonrpc.Message
	metaRaw      json.RawMessage // params._meta, read once
	version      string
	capabilities json.RawMessage
	logRank      int32
	paramHeaders map[string][]string
}

// WithParamHeaders gives the request the Mcp-Param-{Name} headers its
// transport received, keyed by the lower-cased name (an empty map when it
// received none). A transport without headers (stdio) does not call it,
// and then no tool call is checked against them (headerparams.go).
func (sr *Sessionless) WithParamHeaders(h map[string][]string) {
	if h == nil {
		h = map[string][]string{}
	}
	sr.paramHeaders = h
}

// ReadSessionless reads m's params._meta once; ok is false when it names
// no revision, and m is of the 2025 era. The value is the caller's to
// keep where it likes (a transport keeps it on its stack); the methods
// take its address.
func ReadSessionless(m *jsonrpc.Message) (sr Sessionless, ok bool) {
	meta := paramsMeta(m.Params)
	if meta == nil {
		return Sessionless{}, false
	}
	sr = Sessionless{m: m, metaRaw: meta}
	_ = jsonrpc.MemberKeys(meta, func(key []byte, v json.RawMessage) bool {
		switch string(key) {
		case MetaProtocolVersion:
			ok = true
			sr.version = knownString(v, sessionlessVersions)
		case MetaClientCapabilities:
			sr.capabilities = v
		case MetaLogLevel:
			var plain []byte // the level, when it needs no decoding
			if len(v) >= 2 && v[0] == '"' {
				plain = v[1 : len(v)-1]
			}
			if r, known := levelRank[LogLevel(plain)]; known { // the lookup makes no string of the bytes
				sr.logRank = r
			} else {
				var lvl LogLevel
				_ = json.Unmarshal(v, &lvl)
				sr.logRank = levelRank[lvl]
			}
		}
		return true
	})
	if !ok {
		return Sessionless{}, false
	}
	return sr, true
}

// Version is the revision the request's _meta names.
func (sr *Sessionless) Version() string { return sr.version }

// knownString is the JSON string v decoded: the one of known it spells
// when it spells one (no copy made), else a new string.
func knownString(v json.RawMessage, known []string) string {
	if len(v) >= 2 && v[0] == '"' {
		for _, k := range known {
			if string(v[1:len(v)-1]) == k {
				return k
			}
		}
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

func paramsMeta(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || params[0] != '{' {
		return nil
	}
	meta, _ := jsonrpc.Lookup(params, "_meta")
	if len(meta) == 0 || meta[0] != '{' {
		return nil
	}
	return meta
}

// requestMeta is what a sessionless request says of itself.
type requestMeta struct {
	server       *Server
	version      string
	capabilities json.RawMessage
	logRank      int32 // 0: no log level, so no log messages
	paramHeaders map[string][]string
	// task is the task the request runs as, if it does (tasks.go).
	task *task
	// stateless marks a 2025-era stateless client's request
	// (stateless.go): the server asks it during the call, and logs all.
	stateless bool
	// answers are the client's answers to what the request asks
	// (mrtr.go), gathered on the first Ask.
	answers    map[string]json.RawMessage
	answersErr error
}

// notSessionless are the methods of the 2025 era that 2026-07-28 removed:
// a sessionless request naming one is answered as an unknown method.
var notSessionless = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// sessionlessOwn are the methods of 2026-07-28 that the sessionless front
// serves itself (ServeSessionless), outside the server's handlers.
var sessionlessOwn = map[string]bool{"server/discover": true, "subscriptions/listen": true}

// Refusal is a sessionless request refused before it is served, with the
// HTTP status a transport answers it with.
type Refusal struct {
	Status int // 400 or 404
	Err    *jsonrpc.Error
}

// CheckSessionless refuses what cannot be served of a sessionless request
// before anything is. A revision not served is -32022, with the supported
// ones. _meta without the client's capabilities is -32602. A method this
// server does not serve, or that the revision removed, is -32601. nil means
// ServeSessionless may serve it.
func (s *Server) CheckSessionless(sr *Sessionless) *Refusal {
	m, v := sr.m, sr.version
	if !IsSessionlessVersion(v) {
		return &Refusal{Status: 400, Err: jsonrpc.NewError(CodeUnsupportedProtocolVersion,
			fmt.Sprintf("unsupported protocol version %q", v),
			map[string]any{"supported": sessionlessVersions, "requested": v})}
	}
	if caps := sr.capabilities; len(caps) == 0 || caps[0] != '{' {
		return &Refusal{Status: 400, Err: jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"invalid params: _meta."+MetaClientCapabilities+" is required and must be an object", nil)}
	}
	if !m.IsRequest() {
		return nil
	}
	if sessionlessOwn[m.Method] {
		return nil
	}
	s.mu.Lock()
	_, known := s.methods[m.Method]
	s.mu.Unlock()
	if !known || notSessionless[m.Method] {
		return &Refusal{Status: 404, Err: jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+m.Method,
			map[string]string{"method": m.Method})}
	}
	return nil
}

// ServeSessionless serves one sessionless request that CheckSessionless
// let through, with related messages (progress, log messages) on sink,
// and returns the response to write (nil for a notification). Every
// result carries resultType "complete" and the server's identity in its
// _meta; list and read results carry their caching hints.
func (s *Server) ServeSessionless(ctx context.Context, sr *Sessionless, sink Sink) []byte {
	return s.AnswerSessionless(ctx, sr, sink).Bytes()
}

// AnswerSessionless is ServeSessionless with the response in parts: the
// end of a long result stays in the buffer it came in (a relayed
// backend's), for a transport that can write it from there.
func (s *Server) AnswerSessionless(ctx context.Context, sr *Sessionless, sink Sink) jsonrpc.Parts {
	m := sr.m
	if !m.IsRequest() {
		return jsonrpc.Parts{} // notifications/cancelled: closing the stream cancels
	}
	if sink == nil {
		sink = sinkFunc(func(context.Context, []byte) error { return nil })
	}
	var result json.RawMessage
	var err error
	switch m.Method {
	// These two are served here rather than through serve, so their
	// params are checked here as resolve checks every other method's.
	case "server/discover":
		if err = checkParamKeys(m.Method, m.Params); err == nil {
			result = s.discover(ctx)
		}
	case "subscriptions/listen":
		if err = checkParamKeys(m.Method, m.Params); err == nil {
			result = s.listen(ctx, m, sink) // until the stream or the server ends
		}
	default:
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		// The request and what its _meta said in one allocation: this
		// runs for every call a client of the revision makes.
		c := &sessionlessCall{meta: requestMeta{server: s, version: sr.version, capabilities: sr.capabilities, logRank: sr.logRank, paramHeaders: sr.paramHeaders}}
		c.r = Request{ID: m.ID, Method: m.Method, Params: m.Params, sink: sink, abort: cancel, meta: &c.meta, metaRaw: sr.metaRaw}
		result, err = s.serve(ctx, &c.r)
	}
	if err != nil {
		return jsonrpc.Parts{Head: jsonrpc.AppendError(nil, m.ID, s.errorForRequest(m.Method, err))}
	}
	room := 128 + len(m.ID) + len(s.infoJSON)
	if !jsonrpc.SplitsResult(result) {
		room += len(result)
	}
	head, rest := s.completeResult(jsonrpc.AppendResultHead(make([]byte, 0, room), m.ID), m.Method, result)
	return jsonrpc.ResultPartsFrom(head, rest)
}

// sessionlessCall is a sessionless request being served with its _meta.
type sessionlessCall struct {
	meta requestMeta
	r    Request
}

// errorForRequest maps a handler's error to the error object answered.
func (s *Server) errorForRequest(method string, err error) *jsonrpc.Error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		if je.Code == jsonrpc.CodeResourceNotFound && method == "resources/read" {
			// 2026-07-28 answers an unknown resource -32602 (SEP-2164);
			// -32002 is the earlier revisions' code, a relayed 2025
			// backend's included. Message and data stay.
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: je.Message, Data: je.Data}
		}
		return je
	}
	s.log.Error("mcp handler failed", "method", method, "err", err, "stack", string(debug.Stack()))
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error")
}

// cacheable are the methods whose results carry caching hints (SEP-2549).
// They vary with the caller's role, so no shared cache may keep them.
var cacheable = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true,
	"resources/templates/list": true, "resources/read": true, "server/discover": true,
}

// completeResult appends result to b with what 2026-07-28 asks of
// every result: resultType, the server's identity in _meta (merged into a
// _meta the result has), and for cacheable results ttlMs and cacheScope.
// A result that already says its resultType (the engine's own
// InputRequiredResult or ack, a relayed one) gets only this server's
// identity, in place of any other, and a cacheable one cacheScope private.
// It writes into the response itself, but for rest, the result's end as
// it came, which the caller writes after b: no copy of the result is
// made first.
func (s *Server) completeResult(b []byte, method string, result json.RawMessage) ([]byte, json.RawMessage) {
	if len(result) == 0 {
		return append(b, "{}"...), nil
	}
	if result[0] != '{' {
		return b, result
	}
	if rt, _ := jsonrpc.Lookup(result, "resultType"); rt != nil {
		// A relayed result of the revision keeps its hints, but what the
		// gateway answers depends on the caller's role: no cache shared
		// between callers may keep it.
		if cacheable[method] {
			if scope, ok := jsonrpc.LookupString(result, "cacheScope"); ok && scope != "private" {
				if out, err := jsonrpc.WithStringMember(result, "cacheScope", "private"); err == nil {
					result = out
				}
			}
		}
		return s.ownServerInfo(b, result)
	}
	info := s.infoJSON
	b = append(b, `{"resultType":"complete"`...)
	if cacheable[method] {
		b = append(b, `,"ttlMs":0,"cacheScope":"private"`...)
	}
	rest := result[1:]
	if meta, _ := jsonrpc.Lookup(result, "_meta"); len(meta) > 0 && meta[0] == '{' {
		// Splice serverInfo into the result's own _meta.
		start := jsonrpc.Offset(result, meta)
		b = append(b, ',')
		b = append(b, result[1:start+1]...)
		b = append(b, `"`+MetaServerInfo+`":`...)
		b = append(b, info...)
		if len(meta) > 2 && !noMembers(meta) {
			b = append(b, ',')
		}
		return b, result[start+1:]
	}
	b = append(b, `,"_meta":{"`+MetaServerInfo+`":`...)
	b = append(b, info...)
	b = append(b, '}')
	if !noMembers(result) {
		b = append(b, ',')
	}
	return b, rest
}

// ownServerInfo appends a result that already says its resultType
// (a relayed one) to b with this server's identity in _meta, in place of
// the one the server it came from gave: the client is talking to this
// server. The bytes are jsonrpc.SetMember's, of _meta and then of the
// result, written once; rest, the result's end, is the caller's to
// write after b.
func (s *Server) ownServerInfo(b []byte, result json.RawMessage) ([]byte, json.RawMessage) {
	meta, _ := jsonrpc.Lookup(result, "_meta")
	if len(meta) > 0 && meta[0] != '{' {
		return b, result
	}
	if cur, _ := jsonrpc.Lookup(meta, MetaServerInfo); bytes.Equal(cur, s.infoJSON) {
		return b, result
	}
	if meta == nil {
		b = append(b, '{')
		b = jsonrpc.AppendString(b, "_meta")
		b = append(b, ":{"...)
		b = jsonrpc.AppendString(b, MetaServerInfo)
		b = append(b, ':')
		b = append(b, s.infoJSON...)
		b = append(b, '}')
		return restOf(b, result)
	}
	at := jsonrpc.Offset(result, meta)
	if start, end, err := jsonrpc.ValueSpan(meta, MetaServerInfo); err == nil {
		b = append(b, result[:at+start]...)
		b = append(b, s.infoJSON...)
		return b, result[at+end:]
	}
	b = append(b, result[:at]...)
	b = append(b, '{')
	b = jsonrpc.AppendString(b, MetaServerInfo)
	b = append(b, ':')
	b = append(b, s.infoJSON...)
	b, metaRest := restOf(b, meta)
	b = append(b, metaRest...)
	return b, result[at+len(meta):]
}

// restOf is the members of object o after a first one already written to
// b, and o's end, as jsonrpc.SetMember writes them when it adds a member:
// b with the comma they need, and the bytes to write after it.
func restOf(b []byte, o []byte) ([]byte, []byte) {
	rest := bytes.TrimSpace(o[1:])
	if len(rest) > 0 && rest[0] != '}' {
		b = append(b, ',')
	}
	return b, rest
}

// noMembers reports whether the valid JSON object o has no member.
func noMembers(o []byte) bool {
	for _, c := range o[1:] {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '}'
	}
	return true
}

// discover is the server/discover result: the revisions served, the
// capabilities and the instructions the caller in ctx may read.
func (s *Server) discover(ctx context.Context) json.RawMessage {
	out, _ := json.Marshal(struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions,omitempty"`
	}{sessionlessVersions, withTasksExtension(s.caps), s.instructions(ctx)})
	return out
}
