// channel_request.go is the payload of a channel request the client opens
// on a tools begin scope: [tag][rest], nine asks. A request that does not
// decode is answered by a bare channel finish, so every way to fail is one
// of the typed errors the spec names: ErrEmpty, UnknownTagError,
// ConnectionIDError, McpParamsError, SecretsError.

package wire

import (
	"encoding/binary"
	"encoding/json"
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
)

// ChannelRequest is a decoded channel request: one of Postgres, Info,
// Daemon, McpListTools, McpListResources, McpCallTool, McpReadResource,
// McpNotifications, Secrets.
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

func (Postgres) channelRequest()         {}
func (Info) channelRequest()             {}
func (Daemon) channelRequest()           {}
func (McpListTools) channelRequest()     {}
func (McpListResources) channelRequest() {}
func (McpCallTool) channelRequest()      {}
func (McpReadResource) channelRequest()  {}
func (McpNotifications) channelRequest() {}
func (Secrets) channelRequest()          {}

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
	}
	return nil, UnknownTagError{Tag: tag}
}
