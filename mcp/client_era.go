// client_era.go lets the client speak either era to its server. Connect
// probes with server/discover, which 2026-07-28 serves without a session.
// A server that answers it is spoken to sessionless from then on: every
// request carries the revision, the client's identity and its
// capabilities in _meta. A server that answers as only a 2025-era server
// would gets an initialize instead: an unknown method, a plain 400, or an
// unsupported-version error without our revision. An answer that proves
// nothing either way is an error: no connection, 401, 403, 429, a 5xx.
// The caller then tries again later rather than settle on the wrong era.

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Era names what the client speaks to a server (ClientOptions.Era, and
// what Connect learned).
type Era string

const (
	// EraAuto probes with server/discover and falls back to initialize.
	EraAuto Era = ""
	// EraSession is the 2024-11-05 … 2025-11-25 era: initialize, a session.
	EraSession Era = "session"
	// EraSessionless is 2026-07-28: no session, _meta on every request.
	EraSessionless Era = "sessionless"
)

// ErrInconclusive says a probe's answer told nothing of the server's era.
var ErrInconclusive = errors.New("mcp: the server's era could not be learned")

// probeTimeout bounds the wait for server/discover: a 2025-era server may
// ignore a request sent before initialize instead of refusing it.
const probeTimeout = 5 * time.Second

// Connect readies the client in era (EraAuto: the server's), and returns
// the era spoken. EraSession is Initialize; EraSessionless is
// server/discover, which must succeed.
func (c *Client) Connect(ctx context.Context, era Era) (Era, error) {
	if era == EraSession {
		_, err := c.Initialize(ctx)
		return EraSession, err
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	res, err := c.Call(pctx, "server/discover", nil)
	if offersOurs(err) {
		// A modern server refusing the revision it then lists as
		// supported: ask again once, as the revision says to.
		res, err = c.Call(pctx, "server/discover", nil)
	}
	timedOut := pctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err == nil {
		if v := SessionlessVersionOf(res); v != "" {
			head := append([]byte(`"`+MetaProtocolVersion+`":`), jsonrpc.AppendString(nil, v)...)
			head = append(append(head, `,"`+MetaClientInfo+`":`...), c.infoJSON...)
			c.mu.Lock()
			c.initResult, c.version, c.sessionless, c.metaHead = res, v, true, head
			c.mu.Unlock()
			return EraSessionless, nil
		}
		if era == EraSessionless {
			return "", fmt.Errorf("mcp: server/discover names no sessionless revision we speak: %.200s", res)
		}
		// It discovers, but names only revisions of the session era.
	} else if era == EraSessionless {
		return "", err
	} else if !timedOut && !provesSessionEra(err) {
		return "", fmt.Errorf("%w: %w", ErrInconclusive, err)
	}
	_, err = c.Initialize(ctx)
	return EraSession, err
}

// SessionlessVersionOf is the newest sessionless revision that a
// server/discover result supports and we speak, or "".
func SessionlessVersionOf(res json.RawMessage) string {
	raw, _ := jsonrpc.Lookup(res, "supportedVersions")
	var vs []string
	if json.Unmarshal(raw, &vs) != nil {
		return ""
	}
	for i := len(sessionlessVersions) - 1; i >= 0; i-- {
		if slices.Contains(vs, sessionlessVersions[i]) {
			return sessionlessVersions[i]
		}
	}
	return ""
}

// offersOurs reports whether err is -32022 naming, among the revisions
// the server supports, a sessionless one we speak.
func offersOurs(err error) bool {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeUnsupportedProtocolVersion {
		return false
	}
	raw, _ := jsonrpc.Lookup(je.Data, "supported")
	var vs []string
	_ = json.Unmarshal(raw, &vs)
	for _, v := range vs {
		if IsSessionlessVersion(v) {
			return true
		}
	}
	return false
}

// provesSessionEra reports whether err, the answer to server/discover,
// comes from a server of the 2025 era: a JSON-RPC error from the server
// itself, or an HTTP refusal other than one that says nothing of the
// protocol (401, 403, 429, 5xx). The transport's own failures (no
// connection) prove nothing.
func provesSessionEra(err error) bool {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return false
	}
	if je.Code == CodeUnsupportedProtocolVersion {
		return true // modern, but none of its revisions is ours: the 2025 era it is
	}
	status, _ := jsonrpc.Lookup(je.Data, "httpStatus")
	if len(status) == 0 {
		// No HTTP status: the server's own error, or a made-up one for a
		// connection that failed (a transport error has a reason).
		reason, _ := jsonrpc.Lookup(je.Data, "reason")
		return je.Code != jsonrpc.CodeInternalError || len(reason) == 0
	}
	var s int
	_ = json.Unmarshal(status, &s)
	return s != 401 && s != 403 && s != 429 && s < 500
}

// Sessionless reports whether the client speaks 2026-07-28 to its server.
func (c *Client) Sessionless() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionless
}

// Ping checks that the server is there: ping in a session, server/discover
// without one (2026-07-28 has no ping).
func (c *Client) Ping(ctx context.Context) error {
	method := "ping"
	if c.Sessionless() {
		method = "server/discover"
	}
	_, err := c.Call(ctx, method, nil)
	return err
}

// stampSessionless gives params the _meta members a sessionless request
// carries: the revision v, always; the client's identity and capabilities
// unless params already say them (a relay passes its caller's
// capabilities on). params whose _meta opens with SessionlessMeta — a
// relay built it whole — go as they are.
func (c *Client) stampSessionless(params json.RawMessage, v string, o *Outbound) json.RawMessage {
	if head := c.SessionlessMeta(); head != nil && len(params) > len(`{"_meta":{`)+len(head) &&
		string(params[:len(`{"_meta":{`)]) == `{"_meta":{` && bytes.HasPrefix(params[len(`{"_meta":{`):], head) {
		if len(o.Meta) > 0 {
			return WithMeta(params, o.Meta, o.keepMeta) // the relay built the rest whole
		}
		return params
	}
	// Sized for all it may hold: growing it cost an allocation per request.
	meta := make([]byte, 0, len(MetaProtocolVersion)+len(MetaClientCapabilities)+len(MetaClientInfo)+16+
		len(v)+len(c.opts.Capabilities)+len(c.infoJSON)+len(o.Meta))
	meta = append(meta, `"`+MetaProtocolVersion+`":`...)
	meta = jsonrpc.AppendString(meta, v)
	has := metaHas(params, MetaClientCapabilities, MetaClientInfo)
	if !has[0] {
		meta = append(meta, `,"`+MetaClientCapabilities+`":`...)
		meta = append(meta, c.opts.Capabilities...)
	}
	if !has[1] {
		meta = append(meta, `,"`+MetaClientInfo+`":`...)
		meta = append(meta, c.infoJSON...)
	}
	if len(o.Meta) > 0 {
		meta = append(meta, ',')
		meta = append(meta, o.Meta...)
	}
	return WithMeta(params, meta, func(key []byte) bool { return string(key) != MetaProtocolVersion && o.keepMeta(key) })
}

// SessionlessMeta is the head of the _meta the client gives a sessionless
// request — the revision and the client's identity, as encoded members —
// or nil before the client speaks 2026-07-28. A relay that builds a
// request's _meta whole starts it with these (then its own capabilities),
// and the client sends it as it is.
func (c *Client) SessionlessMeta() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.metaHead
}

// metaHas reports which of keys params._meta holds.
func metaHas(params json.RawMessage, keys ...string) []bool {
	out := make([]bool, len(keys))
	meta := paramsMeta(params)
	if meta == nil {
		return out
	}
	_ = jsonrpc.Members(meta, func(k string, _ json.RawMessage) bool {
		if i := slices.Index(keys, k); i >= 0 {
			out[i] = true
		}
		return true
	})
	return out
}

// keepMeta reports whether a _meta member of the params survives: one
// the Outbound sets itself replaces it.
func (o *Outbound) keepMeta(key []byte) bool {
	for _, k := range o.MetaKeys {
		if string(key) == k {
			return false
		}
	}
	return true
}

// WithMeta returns params with members (encoded "key":value pairs, comma
// separated, without braces) first in its _meta, followed by those of the
// _meta it had for which keep is true; every other member of params is
// kept byte for byte. params that are empty or null become an object.
// keep is given the key decoded, valid only during the call: the keys
// are not copied into strings, which cost an allocation each on every
// relayed call.
func WithMeta(params json.RawMessage, members []byte, keep func(key []byte) bool) json.RawMessage {
	n := len(params) + len(members) + 16
	if n > 512 {
		return appendWithMeta(make([]byte, 0, n), params, members, keep)
	}
	// Written on the stack, then copied out at its size: a relay drops its
	// caller's reserved members from every request, and an output sized
	// for params whole left that much unused.
	var buf [512]byte
	return append(json.RawMessage(nil), appendWithMeta(buf[:0], params, members, keep)...)
}

// appendWithMeta is WithMeta appending to out.
func appendWithMeta(out []byte, params json.RawMessage, members []byte, keep func(key []byte) bool) []byte {
	out = append(out, `{"_meta":{`...)
	out = append(out, members...)
	wrote := len(members) > 0
	old := paramsMeta(params)
	if old != nil {
		_ = jsonrpc.MemberKeys(old, func(k []byte, v json.RawMessage) bool {
			if keep(k) {
				if wrote {
					out = append(out, ',')
				}
				out = appendKey(out, k)
				out = append(out, v...)
				wrote = true
			}
			return true
		})
	}
	out = append(out, '}')
	if len(params) > 0 && params[0] == '{' {
		_ = jsonrpc.MemberKeys(params, func(k []byte, v json.RawMessage) bool {
			if string(k) != "_meta" {
				out = append(out, ',')
				out = appendKey(out, k)
				out = append(out, v...)
			}
			return true
		})
	}
	return append(out, '}')
}

// appendKey appends k encoded as a member's key, and the colon.
func appendKey(out, k []byte) []byte {
	out = jsonrpc.AppendStringBytes(out, k)
	return append(out, ':')
}
