// channel_request.go is the payload of a channel request the client opens
// on a tools begin scope: [tag][rest], ten asks. A request that does not
// decode is answered by a bare channel finish, so every way to fail is one
// of the typed errors the spec names: ErrEmpty, UnknownTagError,
// ConnectionIDError, McpParamsError, SecretsError, McpRequestError.

package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

const (
	tagPostgres         uint8 = 0
	tagInfo             uint8 = 1
	tagDaemon           uint8 = 2
	tagMcpListTools     uint8 = 3
	tagMcpListResources uint8 = 4
	tagMcpCallTool      uint8 = 5
	tagMcpReadResource  uint8 = 6
	tagMcpNotifications uint8 = 7
	tagSecrets          uint8 = 8
	tagMcpRequest       uint8 = 9
)

// ChannelRequest is a decoded channel request: one of Postgres, Info,
// Daemon, McpListTools, McpListResources, McpCallTool, McpReadResource,
// McpNotifications, Secrets, McpRequest.
type ChannelRequest interface {
	// Append appends the payload, tag first, to b.
	Append(b []byte) []byte
	channelRequest()
}

// Postgres asks for the server's half of a database connection (tag 0).
type Postgres struct{ ConnID uint32 }

// Info asks for the image's DIVERGE.md (tag 1).
type Info struct{}

// Daemon asks for a daemon connection the program opened (tag 2).
type Daemon struct{ ConnID uint32 }

// McpListTools is tools/list (tag 3). Params is the paginated params JSON
// as it arrived, "null" allowed.
type McpListTools struct{ Params json.RawMessage }

// McpListResources is resources/list (tag 4); Params as for McpListTools.
type McpListResources struct{ Params json.RawMessage }

// McpCallTool is tools/call (tag 5). Params is CallToolRequestParams JSON
// as it arrived: checked, never re-encoded.
type McpCallTool struct{ Params json.RawMessage }

// McpReadResource is resources/read (tag 6). Params is
// ReadResourceRequestParams JSON as it arrived.
type McpReadResource struct{ Params json.RawMessage }

// McpNotifications subscribes to the MCP server's notifications (tag 7).
type McpNotifications struct{}

// McpRequest is any other MCP request (tag 9, this project's extension;
// docs/wire.md 3.7): prompts, templates, completion, logging, subscriptions and
// the methods of later revisions. Params is the request's params JSON as
// it arrived, nil when the payload has none.
type McpRequest struct {
	Method string
	Params json.RawMessage
}

func (Postgres) channelRequest()         {}
func (Info) channelRequest()             {}
func (Daemon) channelRequest()           {}
func (McpListTools) channelRequest()     {}
func (McpListResources) channelRequest() {}
func (McpCallTool) channelRequest()      {}
func (McpReadResource) channelRequest()  {}
func (McpNotifications) channelRequest() {}
func (Secrets) channelRequest()          {}
func (McpRequest) channelRequest()       {}

// Append appends the tag and the connection id, big-endian.
func (r Postgres) Append(b []byte) []byte {
	return binary.BigEndian.AppendUint32(append(b, tagPostgres), r.ConnID)
}

// Append appends the tag alone.
func (Info) Append(b []byte) []byte { return append(b, tagInfo) }

// Append appends the tag and the connection id, big-endian.
func (r Daemon) Append(b []byte) []byte {
	return binary.BigEndian.AppendUint32(append(b, tagDaemon), r.ConnID)
}

// Append appends the tag and the params; nil params are written as null.
func (r McpListTools) Append(b []byte) []byte {
	return appendParams(append(b, tagMcpListTools), r.Params)
}

// Append appends the tag and the params; nil params are written as null.
func (r McpListResources) Append(b []byte) []byte {
	return appendParams(append(b, tagMcpListResources), r.Params)
}

// Append appends the tag and the params as they are.
func (r McpCallTool) Append(b []byte) []byte { return append(append(b, tagMcpCallTool), r.Params...) }

// Append appends the tag and the params as they are.
func (r McpReadResource) Append(b []byte) []byte {
	return append(append(b, tagMcpReadResource), r.Params...)
}

// Append appends the tag alone.
func (McpNotifications) Append(b []byte) []byte { return append(b, tagMcpNotifications) }

// Append appends the tag and {"method","params"}; nil params are left out.
func (r McpRequest) Append(b []byte) []byte {
	b = append(b, tagMcpRequest)
	b = append(b, `{"method":`...)
	b = jsonrpc.AppendString(b, r.Method)
	if r.Params != nil {
		b = append(b, `,"params":`...)
		b = append(b, r.Params...)
	}
	return append(b, '}')
}

func appendParams(b []byte, params json.RawMessage) []byte {
	if params == nil {
		return append(b, "null"...)
	}
	return append(b, params...)
}

// DecodeChannelRequest reads a channel request payload. Raw fields alias
// p. Info and McpNotifications carry nothing, and bytes after their tag
// are ignored, as the seed's decoder does.
func DecodeChannelRequest(p []byte) (ChannelRequest, error) {
	if len(p) == 0 {
		return nil, ErrEmpty
	}
	tag, rest := p[0], p[1:]
	switch tag {
	case tagPostgres, tagDaemon:
		if len(rest) != 4 {
			return nil, ConnectionIDError{Len: len(rest)}
		}
		id := binary.BigEndian.Uint32(rest)
		if tag == tagPostgres {
			return Postgres{ConnID: id}, nil
		}
		return Daemon{ConnID: id}, nil
	case tagInfo:
		return Info{}, nil
	case tagMcpListTools:
		if err := CheckListParams(rest); err != nil {
			return nil, McpParamsError{Err: err}
		}
		return McpListTools{Params: rest}, nil
	case tagMcpListResources:
		if err := CheckListParams(rest); err != nil {
			return nil, McpParamsError{Err: err}
		}
		return McpListResources{Params: rest}, nil
	case tagMcpCallTool:
		if err := CheckCallToolParams(rest); err != nil {
			return nil, McpParamsError{Err: err}
		}
		return McpCallTool{Params: rest}, nil
	case tagMcpReadResource:
		if err := CheckReadResourceParams(rest); err != nil {
			return nil, McpParamsError{Err: err}
		}
		return McpReadResource{Params: rest}, nil
	case tagMcpNotifications:
		return McpNotifications{}, nil
	case tagSecrets:
		return decodeSecrets(rest)
	case tagMcpRequest:
		return decodeMcpRequest(rest)
	}
	return nil, UnknownTagError{Tag: tag}
}

// decodeMcpRequest reads tag 9's {"method","params"}. A method the wire
// refuses to carry — initialize, which the proxy's own session owns, and
// notifications, which are not requests — is McpRequestError; so is a
// method tags 3 to 6 name whose params do not pass their check.
func decodeMcpRequest(rest []byte) (ChannelRequest, error) {
	if err := checkJSON(rest); err != nil {
		return nil, McpRequestError{Err: err}
	}
	if err := requireObject(rest, "the request"); err != nil {
		return nil, McpRequestError{Err: err}
	}
	method, err := stringMember(rest, "method")
	if err != nil {
		return nil, McpRequestError{Err: err}
	}
	switch {
	case method == "":
		return nil, McpRequestError{Err: errors.New("the method is empty")}
	case method == "initialize" || strings.HasPrefix(method, "notifications/"):
		return nil, McpRequestError{Err: fmt.Errorf("%s is not carried by tag 9", method)}
	}
	params := member(rest, "params")
	if check := exchangeCheck[method]; check != nil {
		p := params
		if p == nil {
			p = json.RawMessage("null")
		}
		if err := check(p); err != nil {
			return nil, McpRequestError{Err: err}
		}
	}
	return McpRequest{Method: method, Params: params}, nil
}

// exchangeCheck is the check of the methods tags 3 to 6 carry, which tag
// 9 may carry too.
var exchangeCheck = map[string]func([]byte) error{
	"tools/list": CheckListParams, "resources/list": CheckListParams,
	"tools/call": CheckCallToolParams, "resources/read": CheckReadResourceParams,
}
