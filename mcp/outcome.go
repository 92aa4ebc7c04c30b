// outcome.go names how a request ended, once, for everything that reports
// on it: the audit log records it, the metrics count it, the traces carry
// it. They used to classify the same answer three times, each scanning the
// result, and the classes lived in the store.

package mcp

import (
	"encoding/json"
	"errors"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Outcome is the class of a request's end.
type Outcome string

const (
	OutcomeOK          Outcome = "ok"           // a result, not an error result
	OutcomeToolError   Outcome = "tool_error"   // a tools/call result with isError
	OutcomeForbidden   Outcome = "forbidden"    // refused by the gate for the role
	OutcomeRateLimited Outcome = "rate_limited" // refused by the gate for the rate
	OutcomeInvalid     Outcome = "invalid"      // -32602: unknown name, bad arguments
	OutcomeError       Outcome = "error"        // any other JSON-RPC error
)

// errorResult reports whether some reader could take a tools/call result
// for an error result: a member whose key a reader takes for isError
// (exactly, or as encoding/json matches fields, once or more) is true. A
// backend cannot hide an error from the audit and the metrics behind a
// twin that a client in Go reads.
func errorResult(result json.RawMessage) bool {
	found := false
	_ = jsonrpc.MemberKeys(result, func(key []byte, v json.RawMessage) bool {
		found = string(v) == "true" && jsonrpc.EqualFold(key, "isError")
		return !found
	})
	return found
}

// Classify names the outcome of a request of method from its handler's
// answer, and the JSON-RPC code answered (0 for a result). Only a
// tools/call result is read (for isError); no other result is scanned.
//
// The gate's refusals are recognised by code AND data.kind: some SDKs use
// -32000 and -32001 for other things (a timeout), and those are errors,
// not refusals.
func Classify(method string, result json.RawMessage, err error) (Outcome, int64) {
	if err == nil {
		if method == "tools/call" && errorResult(result) {
			return OutcomeToolError, 0
		}
		return OutcomeOK, 0
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		// The engine answers any other error as an internal error.
		return OutcomeError, jsonrpc.CodeInternalError
	}
	kind, _ := jsonrpc.LookupString(je.Data, "kind")
	switch {
	case je.Code == jsonrpc.CodeForbidden && ErrorKind(kind) == KindForbidden:
		return OutcomeForbidden, je.Code
	case je.Code == jsonrpc.CodeRateLimited && ErrorKind(kind) == KindRateLimited:
		return OutcomeRateLimited, je.Code
	case je.Code == jsonrpc.CodeInvalidParams:
		return OutcomeInvalid, je.Code
	}
	return OutcomeError, je.Code
}
