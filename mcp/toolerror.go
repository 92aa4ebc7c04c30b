// toolerror.go is the contract for a native tool that ran and failed (seed
// 003). The model gets compact JSON in an isError result naming one of five
// classes — five because there are five different things a model can do
// next — whether retrying can help, and a hint on what to do instead.
//
// Typed errors are classified first; matching on the message is the last
// resort. Hints are generic English: seed 003's hints named arguments that
// some of its tools did not have, and a model then invented them.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/mcpgate/mcpgate/internal/textcut"
)

// Tool failure classes.
const (
	ToolErrTimeout            = "timeout"
	ToolErrBackendUnavailable = "backend_unavailable"
	ToolErrBadArgs            = "bad_args"
	ToolErrNotFound           = "not_found"
	ToolErrInternal           = "internal"
)

// Sentinels a tool wraps (with %w) to classify its failure explicitly.
var (
	ErrBadArgs            = errors.New("bad arguments")
	ErrNotFound           = errors.New("not found")
	ErrBackendUnavailable = errors.New("backend unavailable")
)

// maxDetailRunes bounds the raw error text handed to the model.
const maxDetailRunes = 300

// ToolError is a classified tool failure. A tool may return one directly to
// choose its class and hint. The field order is the order a model should
// read them in: what happened, whether to retry, what to do, and last the
// raw text, the least actionable part.
type ToolError struct {
	Class     string `json:"error"`
	Retryable bool   `json:"retryable"`
	Hint      string `json:"hint"`
	Detail    string `json:"detail,omitempty"`
}

func (e *ToolError) Error() string {
	if e.Detail == "" {
		return "tool error: " + e.Class
	}
	return "tool error: " + e.Class + ": " + e.Detail
}

var toolHints = map[string]struct {
	retryable bool
	hint      string
}{
	ToolErrTimeout:            {true, "The operation ran out of time. Ask for less (a narrower range or fewer items) and try again."},
	ToolErrBackendUnavailable: {true, "The service behind this tool is not answering. Wait a moment and try once more; if it fails again, use another source."},
	ToolErrBadArgs:            {false, "The arguments were not accepted. Correct them using the tool's input schema; the same arguments will fail again."},
	ToolErrNotFound:           {false, "Nothing matched. Check the name or id with a listing tool before trying again."},
	ToolErrInternal:           {false, "The tool failed unexpectedly. Do not retry; say in your answer that this information could not be obtained."},
}

// NeedsClientCapability is the failure of a tool that needs a capability
// the client did not declare (sampling, elicitation, roots). Neither the
// arguments nor the moment are at fault, so it is not bad_args and not
// retryable: the model is told what the tool needs and to say so.
func NeedsClientCapability(capability string) *ToolError {
	return &ToolError{Class: ToolErrInternal, Retryable: false,
		Hint: "This tool needs a client that supports " + capability + ", and this client does not declare it. " +
			"Do not retry with other arguments; say in your answer that the tool needs a client with " + capability + ".",
		Detail: "the client did not declare the " + capability + " capability"}
}

// ClassifyToolError turns a tool's error into the contract. It is pure: it
// only looks at err. A nil error is a caller bug and classifies as internal
// rather than panicking on the error path.
func ClassifyToolError(err error) ToolError {
	class := classify(err)
	var te *ToolError
	if errors.As(err, &te) {
		out := *te
		if out.Class == "" || toolHints[out.Class].hint == "" {
			out.Class = class
		}
		if out.Hint == "" {
			out.Hint = toolHints[out.Class].hint
			out.Retryable = toolHints[out.Class].retryable
		}
		out.Detail = textcut.Runes(out.Detail, maxDetailRunes)
		return out
	}
	h := toolHints[class]
	te2 := ToolError{Class: class, Retryable: h.retryable, Hint: h.hint}
	if err != nil {
		te2.Detail = textcut.Runes(err.Error(), maxDetailRunes)
	}
	return te2
}

func classify(err error) string {
	var te *ToolError
	var netErr net.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return ToolErrInternal
	case errors.As(err, &te) && toolHints[te.Class].hint != "":
		// Only a class the contract knows is taken as is; any other
		// falls through, so the model still gets one of the five.
		return te.Class
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ToolErrTimeout
	case errors.As(err, &netErr) && netErr.Timeout():
		return ToolErrTimeout
	case errors.Is(err, ErrBackendUnavailable), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH):
		return ToolErrBackendUnavailable
	case errors.Is(err, ErrBadArgs), errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return ToolErrBadArgs
	case errors.Is(err, ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return ToolErrNotFound
	}
	return classifyMessage(strings.ToLower(err.Error()))
}

// classifyMessage is the last resort, for errors from code that does not
// type them.
func classifyMessage(msg string) string {
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("timeout", "timed out", "deadline exceeded"):
		return ToolErrTimeout
	case has("connection refused", "connection reset", "unavailable", "no such host", "unreachable"):
		return ToolErrBackendUnavailable
	case has("not found", "does not exist", "no such"):
		return ToolErrNotFound
	case has("invalid argument", "invalid param", "required", "must be"):
		return ToolErrBadArgs
	}
	return ToolErrInternal
}

// ToolErrorJSON is the contract's wire form: compact JSON.
func ToolErrorJSON(err error) string {
	te := ClassifyToolError(err)
	b, _ := json.Marshal(te)
	return string(b)
}

// ToolErrorResult is the isError result carrying ToolErrorJSON(err).
func ToolErrorResult(err error) json.RawMessage {
	b, _ := Result(CallToolResult{Content: []Content{TextContent(ToolErrorJSON(err))}, IsError: true})
	return b
}
