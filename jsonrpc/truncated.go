// truncated.go finds which request a response answers when only its two
// ends are at hand. A transport that refuses an oversized message keeps its
// first and last bytes. The call it answers then fails at once, instead of
// waiting for an answer that was thrown away.

package jsonrpc

import "regexp"

// TruncatedResponseID returns the id of the response whose message starts
// with head and ends with tail (the middle is gone). ok is false unless
// head shows a response — a "result" or "error" member before any
// "method" — and the id can be read: a complete "id" member in head, or
// the "id" that closes the object in tail. A request or notification that
// was too large is never taken for an answer.
func TruncatedResponseID(head, tail []byte) (id ID, ok bool) {
	i := skipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return nil, false
	}
	i = skipSpace(head, i+1)
	response := false
	for i < len(head) && head[i] == '"' {
		keyEnd, _, err := skipString(head, i)
		if err != nil {
			break
		}
		key := string(head[i+1 : keyEnd-1])
		i = skipSpace(head, keyEnd)
		if i >= len(head) || head[i] != ':' {
			break
		}
		i = skipSpace(head, i+1)
		switch key {
		case "method":
			return nil, false
		case "result", "error":
			response = true
		}
		end, err := skipValue(head, i, 1)
		if err != nil {
			break // the value runs past head
		}
		if key == "id" {
			id = ID(head[i:end])
		}
		i = skipSpace(head, end)
		if i < len(head) && head[i] == ',' {
			i = skipSpace(head, i+1)
		}
	}
	if !response {
		return nil, false
	}
	if id == nil {
		m := closingID.FindSubmatch(tail)
		if m == nil {
			return nil, false
		}
		id = ID(m[1])
	}
	if !id.IsValid() {
		return nil, false
	}
	return id, true
}

// closingID is an "id" member that closes the object, as encoders that
// write id after result do ("jsonrpc" may follow it).
var closingID = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*"|null)\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$`)
