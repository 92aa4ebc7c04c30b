// parse.go turns bytes into envelopes: one pass over the top-level object,
// keeping the members MCP routes on and slicing the rest.

package jsonrpc

import (
	"encoding/json"
)

// Parse reads one JSON-RPC message. Its raw members alias data.
// A *ParseError says how to answer input that is not a valid message.
func Parse(data []byte) (*Message, error) {
	m := new(Message)
	if err := parseInto(m, data); err != nil {
		return nil, err
	}
	return m, nil
}

// IsBatch reports whether data is a JSON array (a batch), looking only at
// its first non-space byte.
func IsBatch(data []byte) bool {
	i := skipSpace(data, 0)
	return i < len(data) && data[i] == '['
}

// ParseBatch splits a JSON array into its elements and parses each. Each
// element's outcome is reported separately, as JSON-RPC asks: a bad element
// gets its own error answer and does not spoil the others. An empty or
// malformed array is a single *ParseError.
func ParseBatch(data []byte) ([]*Message, []error, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, nil, &ParseError{Code: CodeInvalidRequest, Message: "batch is not an array"}
	}
	if !Valid(data) {
		return nil, nil, &ParseError{Code: CodeParseError, Message: "parse error: invalid JSON"}
	}
	var msgs []*Message
	var errs []error
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		end := skipValid(data, i) // validated above
		m, err := Parse(data[i:end])
		msgs = append(msgs, m)
		errs = append(errs, err)
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if len(msgs) == 0 {
		return nil, nil, &ParseError{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}
	}
	return msgs, errs, nil
}

func invalid(id ID, msg string) *ParseError {
	return &ParseError{Code: CodeInvalidRequest, Message: "invalid request: " + msg, ID: id}
}

func parseInto(m *Message, data []byte) error {
	i := skipSpace(data, 0)
	if i >= len(data) {
		return &ParseError{Code: CodeParseError, Message: "parse error: empty message"}
	}
	if data[i] != '{' {
		if !Valid(data) {
			return &ParseError{Code: CodeParseError, Message: "parse error: invalid JSON"}
		}
		return invalid(nil, "message is not an object")
	}
	// Validate the whole document first: a parse error must win over any
	// envelope complaint, whatever order the members come in.
	end, err := skipObject(data, i, 1)
	if err != nil || skipSpace(data, end) != len(data) {
		return &ParseError{Code: CodeParseError, Message: "parse error: invalid JSON"}
	}

	e := readMembers(m, data, i)
	return e.check(m)
}

// envelope is what parseInto read of the members it checks itself; the
// others went into the Message as they are.
type envelope struct {
	version, method          []byte
	methodSet, idSet, idNull bool
}

// readMembers reads the members of the object at data[i], a valid JSON
// document.
func readMembers(m *Message, data []byte, i int) (e envelope) {
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		keyEnd, escaped, _ := skipString(data, i)
		key := data[i+1 : keyEnd-1]
		if escaped {
			var s string
			_ = json.Unmarshal(data[i:keyEnd], &s)
			key = []byte(s)
		}
		i = skipSpace(data, keyEnd)
		i = skipSpace(data, i+1) // ':'
		valEnd := skipValid(data, i)
		val := data[i:valEnd]
		switch string(key) {
		case "jsonrpc":
			e.version = val
		case "id":
			e.idSet = true
			e.idNull = string(val) == "null"
			if !e.idNull {
				m.ID = ID(val)
			}
		case "method":
			e.methodSet = true
			e.method = val
		case "params":
			if string(val) != "null" {
				m.Params = val
			}
		case "result":
			m.Result = val
		case "error":
			m.Error = val
		}
		i = skipSpace(data, valEnd)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}

	return e
}

// check holds the envelope to JSON-RPC 2.0: a request (a method), or a
// response (a result or an error, and an id).
func (e *envelope) check(m *Message) error {
	if m.ID != nil && !m.ID.IsValid() {
		m.ID = nil
		return invalid(nil, "id must be a string or a number")
	}
	if string(e.version) != `"2.0"` {
		return invalid(m.ID, `jsonrpc must be "2.0"`)
	}
	if e.methodSet {
		if len(e.method) == 0 || e.method[0] != '"' {
			return invalid(m.ID, "method must be a string")
		}
		name, ok := methodName(e.method)
		if !ok || name == "" {
			return invalid(m.ID, "method must be a non-empty string")
		}
		m.Method = name
		if m.Result != nil || m.Error != nil {
			return invalid(m.ID, "a request cannot carry result or error")
		}
		if e.idSet && e.idNull {
			return invalid(nil, "id must not be null")
		}
		if m.Params != nil && m.Params[0] != '{' && m.Params[0] != '[' {
			return invalid(m.ID, "params must be an object or an array")
		}
		return nil
	}
	switch {
	case m.Result != nil && m.Error != nil:
		return invalid(m.ID, "a response cannot carry both result and error")
	case m.Result == nil && m.Error == nil:
		return invalid(m.ID, "message has neither method nor result nor error")
	case m.Error != nil && m.Error[0] != '{':
		return invalid(m.ID, "error must be an object")
	case !e.idSet:
		return invalid(nil, "response without id")
	case e.idNull && m.Error == nil:
		return invalid(nil, "result with a null id")
	}
	return nil
}

// methodName returns the method string, avoiding an allocation for the
// methods MCP sends most.
func methodName(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[len(raw)-1] == '"' {
		if s, ok := knownMethods[string(raw[1:len(raw)-1])]; ok {
			return s, true
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

var knownMethods = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"initialize", "ping", "notifications/initialized", "notifications/cancelled",
		"notifications/progress", "notifications/message",
		"tools/list", "tools/call", "resources/list", "resources/read",
		"resources/templates/list", "resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "logging/setLevel", "completion/complete",
		"sampling/createMessage", "elicitation/create", "roots/list",
		"notifications/tools/list_changed", "notifications/resources/list_changed",
		"notifications/prompts/list_changed", "notifications/resources/updated",
		"notifications/roots/list_changed",
	} {
		m[s] = s
	}
	return m
}()
