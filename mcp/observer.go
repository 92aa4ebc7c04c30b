// observer.go is how the audit log, the metrics and the traces watch the
// engine. They are not middleware that each work out which entry a call
// named and how it ended. They are observers the engine tells twice: once
// it has resolved the request (Request.Target), and once it has classified
// the answer (End). A panicking handler is observed as the engine answers
// it, -32603.

package mcp

import (
	"context"
	"time"
)

// An Observer watches every request the engine serves.
type Observer interface {
	// Begin is called before the request's chain runs, with its Target
	// resolved; the context it returns serves the request (a span, say).
	Begin(ctx context.Context, r *Request) context.Context
	// End is called once the answer is known, with the context Begin
	// returned. It must not keep r.
	End(ctx context.Context, r *Request, e End)
}

// End is how a request ended.
type End struct {
	Outcome Outcome
	// Code is the JSON-RPC error code answered, 0 for a result; -32601
	// means the engine serves no such method.
	Code     int64
	Start    time.Time
	Duration time.Duration
}
