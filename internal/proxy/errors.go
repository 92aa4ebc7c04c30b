// errors.go names the ways talking to the upstream fails, so that the wire
// can answer each one as the spec says (-32603 with the reason) and count
// them apart, without matching message text.

package proxy

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by an Upstream or Supervisor after Close.
	ErrClosed = errors.New("proxy: upstream closed")
	// ErrNoProgram is returned by Upstream.FeedSecrets when the upstream
	// is a URL: there is no program the proxy could hand secrets to.
	ErrNoProgram = errors.New("proxy: the upstream is a URL; there is no program to feed secrets to")
)

// UnreachableError is an exchange that found no session and could not
// establish one: the server refused, was not there, or failed initialize.
type UnreachableError struct {
	Err error
}

func (e *UnreachableError) Error() string { return "upstream MCP server unreachable: " + e.Err.Error() }

func (e *UnreachableError) Unwrap() error { return e.Err }

// TransportError is an exchange that was sent on a live session but got no
// answer from the server: the connection broke or the process died
// mid-call. The exchange is not retried; the session is dropped and the
// next exchange dials a new one.
type TransportError struct {
	Method string
	Err    error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("upstream MCP connection lost during %s: %v", e.Method, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }
