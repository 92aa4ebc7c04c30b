// logline.go turns one line a child process wrote into a log attribute. A
// child that logs JSON (as mcpgate itself does when not on a terminal) used
// to reach the gateway's JSON log as one escaped string inside another
// line; its members are now the line's own attributes, in their order.

package stdio

import (
	"bytes"
	"encoding/json"
	"log/slog"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// LineAttr is line as a log attribute: a JSON object becomes the group
// "child" holding its members (nested values kept as JSON values), any
// other line the string "line".
func LineAttr(line []byte) slog.Attr {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) < 2 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return slog.String("line", string(line))
	}
	var members []any
	err := jsonrpc.Members(trimmed, func(key string, value json.RawMessage) bool {
		var v any
		d := json.NewDecoder(bytes.NewReader(value))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return false
		}
		members = append(members, slog.Any(key, v))
		return true
	})
	if err != nil {
		return slog.String("line", string(line))
	}
	return slog.Group("child", members...)
}
