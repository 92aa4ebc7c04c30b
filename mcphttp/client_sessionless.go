// client_sessionless.go is the client side of 2026-07-28 on Streamable
// HTTP. The connection learns the era from the answer to server/discover,
// as it learns a 2025 revision from the answer to initialize. From then on
// every POST carries MCP-Protocol-Version and Mcp-Method. A request naming
// an entry carries Mcp-Name, encoded as the revision says. The Mcp-Param
// headers are those the caller set on the request (mcp.Outbound). There is
// no session id, no GET stream and no DELETE. A request is cancelled by
// closing its answer's stream, so a notifications/cancelled is not POSTed
// but closes the stream of the request it names.

package mcphttp

import (
	"encoding/json"
	"net/http"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// probeVersion is the revision server/discover is sent with before the
// era is known.
var probeVersion = []string{mcp.LatestSessionlessVersion()}

// methodHeaders are the Mcp-Method values of the methods a relay sends
// most, shared by every request (the transport only reads them).
var methodHeaders = map[string][]string{}

func init() {
	for _, m := range []string{"tools/call", "tools/list", "resources/read", "resources/list", "resources/templates/list",
		"prompts/get", "prompts/list", "completion/complete", "server/discover", "subscriptions/listen",
		"tasks/get", "tasks/update", "tasks/cancel", "notifications/cancelled"} {
		methodHeaders[m] = []string{m}
	}
}

// Sessionless reports whether the server answered server/discover, and the
// connection speaks 2026-07-28 to it.
func (c *StreamableConn) Sessionless() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionless
}

// sessionlessLocked reports whether a POST of m is sessionless. It is
// when the connection speaks the era, or when m is the probe: a
// server/discover before any revision is known. Once a session's revision
// is known, a server/discover is a request of that session. The caller
// holds c.mu.
func (c *StreamableConn) sessionlessLocked(m *jsonrpc.Message) bool {
	return c.sessionless || m.Method == "server/discover" && c.versionHdr == nil
}

// sessionlessHeaders adds the revision's headers to a sessionless POST of
// m, into a header map of its own. version is the connection's
// MCP-Protocol-Version value, read with the rest of newPOST's state (nil
// before any revision is known: the probe's).
func (c *StreamableConn) sessionlessHeaders(h http.Header, m *jsonrpc.Message, version []string) {
	if version == nil {
		version = probeVersion
	}
	h[HeaderProtocolVersion] = version
	if v, ok := methodHeaders[m.Method]; ok {
		h[HeaderMethod] = v
	} else {
		h[HeaderMethod] = []string{m.Method}
	}
	if member := nameMember(m.Method); member != "" {
		if name, ok := jsonrpc.LookupText(m.Params, member); ok {
			h[HeaderName] = c.nameHeader(name)
		}
	}
	for _, kv := range m.Headers {
		h[http.CanonicalHeaderKey(kv[0])] = []string{kv[1]}
	}
}

// slKey is a sessionless POST's header in the connection's cache: its
// method and its Mcp-Name value (nil for none; nameHeader makes one value
// per name, so its first string's address stands for the name).
type slKey struct {
	method string
	name   *string
}

// sharedSessionless is the header of a sessionless POST of m, made once
// per method and name from base (postHdr of generation gen) and shared
// after, as a session's POSTs share postHdr: the transport only reads it.
// A POST with x-mcp-header values (m.Headers) gets a map of its own.
func (c *StreamableConn) sharedSessionless(base http.Header, gen uint64, m *jsonrpc.Message, version []string) http.Header {
	key := slKey{method: m.Method}
	if member := nameMember(m.Method); member != "" {
		if name, ok := jsonrpc.LookupText(m.Params, member); ok {
			key.name = &c.nameHeader(name)[0]
		}
	}
	c.mu.Lock()
	h, ok := c.slHdr[key]
	c.mu.Unlock()
	if ok {
		return h
	}
	h = withRoom(base)
	c.sessionlessHeaders(h, m, version)
	c.mu.Lock()
	if gen == c.postGen { // not made from a postHdr replaced meanwhile
		if c.slHdr == nil || len(c.slHdr) >= maxNameHeaders {
			c.slHdr = map[slKey]http.Header{}
		}
		c.slHdr[key] = h
	}
	c.mu.Unlock()
	return h
}

// withRoom is a copy of h, its values shared, with room for the three
// headers sessionlessHeaders adds.
func withRoom(h http.Header) http.Header {
	own := make(http.Header, len(h)+3)
	for k, vs := range h {
		own[k] = vs
	}
	return own
}

// maxNameHeaders bounds the Mcp-Name values a connection keeps; past it
// they are forgotten and made again. It bounds slHdr too.
const maxNameHeaders = 1024

// nameHeader is the Mcp-Name header value of name, made once per name.
func (c *StreamableConn) nameHeader(name []byte) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.nameHdr[string(name)]; ok {
		return v
	}
	if c.nameHdr == nil || len(c.nameHdr) >= maxNameHeaders {
		c.nameHdr = map[string][]string{}
	}
	s := string(name)
	v := []string{mcp.EncodeHeaderValue(s)}
	c.nameHdr[s] = v
	return v
}

// discovered notes the answer to server/discover: a result naming a
// sessionless revision we speak puts the connection in that era.
func (c *StreamableConn) discovered(result json.RawMessage) {
	if v := mcp.SessionlessVersionOf(result); v != "" {
		c.mu.Lock()
		c.sessionless, c.version, c.versionHdr = true, v, []string{v}
		c.postHdr = nil
		c.mu.Unlock()
	}
}

// cancelled closes the answer stream of the request a
// notifications/cancelled names, which is how a sessionless request is
// cancelled; ok is false when m is no such notification on a sessionless
// connection.
func (c *StreamableConn) cancelled(m *jsonrpc.Message) (ok bool) {
	if m.Method != "notifications/cancelled" || !c.Sessionless() {
		return false
	}
	id, _ := jsonrpc.Lookup(m.Params, "requestId")
	c.mu.Lock()
	stop := c.streams[string(id)]
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	return true
}

// trackStream keeps the way to close the answer stream of request id
// while it is read; the returned func forgets it.
func (c *StreamableConn) trackStream(id jsonrpc.ID, stop func()) (forget func()) {
	c.mu.Lock()
	if c.streams == nil {
		c.streams = map[string]func(){}
	}
	c.streams[string(id)] = stop
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.streams, string(id))
		c.mu.Unlock()
	}
}
