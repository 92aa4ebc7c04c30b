// proxy_channel.go is the payload of a channel request the proxy opens on
// the begun tools scope (docs/wire.md 3.6): [tag][rest]. Its tags are a family
// of their own, separate from the client's: 0 and 1 are the proxy's halves
// of the Postgres and Daemon pairs, 12 is what the MCP server asks of its
// client during an exchange. Like the client's, a request that does not
// decode is answered by a bare channel finish.

package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

const (
	tagProxyPostgres    uint8 = 0
	tagProxyDaemon      uint8 = 1
	tagMcpServerRequest uint8 = 12
)

// ProxyChannelRequest is a decoded channel request the proxy opened: one
// of ProxyPostgres, ProxyDaemon, McpServerRequest.
type ProxyChannelRequest interface {
	// Append appends the payload, tag first, to b.
	Append(b []byte) []byte
	proxyChannelRequest()
}

// ProxyPostgres opens the gateway's half of a database connection the
// program made (tag 0); the proxy mints ConnID.
type ProxyPostgres struct{ ConnID uint32 }

// ProxyDaemon opens the gateway's half of a daemon connection the program
// made (tag 1); the proxy mints ConnID.
type ProxyDaemon struct{ ConnID uint32 }

// McpServerRequest is a request the MCP server sent its client while
// serving an exchange (tag 12): sampling/createMessage,
// elicitation/create, roots/list. Related is the client channel of that
// exchange, 0 when the upstream does not say which. Request is the
// JSON-RPC request as the proxy sends it, with an id of the proxy's own;
// the answer is one Response, the client's result or error, then the
// finish.
type McpServerRequest struct {
	Related uint32
	Request json.RawMessage
}

func (ProxyPostgres) proxyChannelRequest()    {}
func (ProxyDaemon) proxyChannelRequest()      {}
func (McpServerRequest) proxyChannelRequest() {}

// Append appends the tag and the connection id, big-endian.
func (r ProxyPostgres) Append(b []byte) []byte {
	return binary.BigEndian.AppendUint32(append(b, tagProxyPostgres), r.ConnID)
}

// Append appends the tag and the connection id, big-endian.
func (r ProxyDaemon) Append(b []byte) []byte {
	return binary.BigEndian.AppendUint32(append(b, tagProxyDaemon), r.ConnID)
}

// Append appends the tag, the related channel, big-endian, and the
// request as it is.
func (r McpServerRequest) Append(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(append(b, tagMcpServerRequest), r.Related)
	return append(b, r.Request...)
}

// ServerRequestError is a tag-12 payload whose request is not one
// JSON-RPC request (with an id and a method). The request is the MCP
// server's, not a secret: Err may quote it.
type ServerRequestError struct{ Err error }

func (e ServerRequestError) Error() string {
	return "wire: server request did not parse: " + e.Err.Error()
}
func (e ServerRequestError) Unwrap() error { return e.Err }

// DecodeProxyChannelRequest reads a channel request payload the proxy
// sent. Raw fields alias p.
func DecodeProxyChannelRequest(p []byte) (ProxyChannelRequest, error) {
	if len(p) == 0 {
		return nil, ErrEmpty
	}
	tag, rest := p[0], p[1:]
	switch tag {
	case tagProxyPostgres, tagProxyDaemon:
		if len(rest) != 4 {
			return nil, ConnectionIDError{Len: len(rest)}
		}
		id := binary.BigEndian.Uint32(rest)
		if tag == tagProxyPostgres {
			return ProxyPostgres{ConnID: id}, nil
		}
		return ProxyDaemon{ConnID: id}, nil
	case tagMcpServerRequest:
		if len(rest) < 4 {
			return nil, ConnectionIDError{Len: len(rest)}
		}
		req := rest[4:]
		m, err := jsonrpc.Parse(req)
		if err != nil {
			return nil, ServerRequestError{Err: err}
		}
		if !m.IsRequest() {
			return nil, ServerRequestError{Err: errors.New("not a request (a request has an id and a method)")}
		}
		return McpServerRequest{Related: binary.BigEndian.Uint32(rest), Request: req}, nil
	}
	return nil, UnknownTagError{Tag: tag}
}
