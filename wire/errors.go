// errors.go names every way this package fails. A caller decides on these
// (a bare finish means "not served", a closed connection means "not
// answered"), so each is a sentinel or a small typed error, never a string
// to be matched.

package wire

import (
	"errors"
	"fmt"
	"io"
)

// Frame errors: what ParseFrame reports.
var (
	// ErrShortFrame is a message shorter than the 9-byte frame header.
	ErrShortFrame = errors.New("wire: frame shorter than its 9-byte header")
)

// UnknownTypeError is a frame whose type byte is none of the seven.
type UnknownTypeError struct{ Type uint8 }

func (e UnknownTypeError) Error() string { return fmt.Sprintf("wire: unknown frame type %d", e.Type) }

// Payload errors: what the Decode functions report.

// ErrEmpty is a payload with no bytes at all, so not even a tag.
var ErrEmpty = errors.New("wire: empty payload")

// UnknownTagError is a payload whose leading tag is none of its family's.
type UnknownTagError struct{ Tag uint8 }

func (e UnknownTagError) Error() string { return fmt.Sprintf("wire: unknown payload tag %d", e.Tag) }

// ConnectionIDError is a Postgres or Daemon channel request whose
// connection id is not exactly four bytes.
type ConnectionIDError struct{ Len int }

func (e ConnectionIDError) Error() string {
	return fmt.Sprintf("wire: connection id is %d bytes, want 4", e.Len)
}

// McpParamsError is an MCP exchange's params that do not parse as the
// method's params type. Err is the parser's complaint; the params are not
// secret, so it may quote them.
type McpParamsError struct{ Err error }

func (e McpParamsError) Error() string { return "wire: MCP params did not parse: " + e.Err.Error() }
func (e McpParamsError) Unwrap() error { return e.Err }

// McpRequestError is a tag 9 payload that is not {"method","params"}
// with a method the wire carries.
type McpRequestError struct{ Err error }

func (e McpRequestError) Error() string { return "wire: MCP request did not parse: " + e.Err.Error() }
func (e McpRequestError) Unwrap() error { return e.Err }

// SecretsError is a secrets feed whose values do not parse. It keeps no
// decoder error and quotes no input: a JSON parser's message can quote the
// byte it stopped at, and that byte may belong to a secret. Offset is the
// byte offset in the values JSON where parsing stopped; Reason is one of a
// fixed set of phrases written by this package.
type SecretsError struct {
	Offset int64
	Reason string
}

func (e SecretsError) Error() string {
	return fmt.Sprintf("wire: secrets did not parse: %s at byte %d", e.Reason, e.Offset)
}

// BodyError is the JSON after a payload's tag that does not parse as that
// variant: a result, an error value, a document, a begin's content.
type BodyError struct{ Err error }

func (e BodyError) Error() string { return "wire: payload body did not parse: " + e.Err.Error() }
func (e BodyError) Unwrap() error { return e.Err }

// Multiplexer errors: what streams and responders report.
var (
	// ErrConnectionClosed ends every scope and channel still open when the
	// connection ends; nothing was finished. The error a stream returns
	// wraps it together with the reason the connection ended.
	ErrConnectionClosed = errors.New("wire: connection closed")
	// ErrScopeFinished ends the channels of a scope that was finished
	// while they were open, and refuses writes and opens on it.
	ErrScopeFinished = errors.New("wire: scope finished")
	// ErrFinished is a Respond or Finish on an exchange already finished.
	ErrFinished = errors.New("wire: exchange already finished")
	// ErrBareFinish is what Next returns when a finish came with nothing
	// before it: "received, not served". errors.Is(ErrBareFinish, io.EOF)
	// holds, so a loop that stops at io.EOF stops here too.
	ErrBareFinish error = bareFinish{}
)

type bareFinish struct{}

func (bareFinish) Error() string        { return "wire: bare finish (received, not served)" }
func (bareFinish) Is(target error) bool { return target == io.EOF }

// Per-path errors: what CallPath and SubscribePath report.
var (
	// ErrNotServed is a per-path connection closed cleanly with no answer.
	ErrNotServed = errors.New("wire: path closed without an answer (not served)")
	// ErrNotBinary is a peer message that was not binary where one had to be.
	ErrNotBinary = errors.New("wire: message was not binary")
)

// TooLargeError ends an exchange whose answer was over the connection's
// read limit (Options.ReadLimit): the message was thrown away, and the
// connection stays up.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("wire: an answer over the read limit of %d bytes was dropped", e.Limit)
}
