// observe.go lets the relay's user watch each call that goes out to the
// backend, to time it or trace it, without the relay knowing how. The
// gateway hangs an OpenTelemetry client span on it. A relay without an
// observer pays one nil check.

package catalogue

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
)

// Observer is told of each call the relay makes to its backend as it goes
// out. It reads the call's backend, its kind and the revision spoken, and
// the method, never the params, and
// may set _meta members on the request (a trace context). It may return a
// context carrying what it started; the function it returns is called
// with the call's error (nil, a *jsonrpc.Error answered by the backend, or
// a failure to reach it) once the answer is in.
type Observer func(ctx context.Context, c upstream.Call, out *mcp.Outbound) (context.Context, func(err error))

// call sends one request to the backend on client (the shared session or
// the caller's own), observed if there is an observer.
func (b *Mirror) call(ctx context.Context, client *mcp.Client, out *mcp.Outbound) (json.RawMessage, error) {
	if b.observe == nil {
		return client.Send(ctx, out)
	}
	ctx, done := b.observe(ctx, upstream.Call{Backend: b.name, Kind: b.kind, Version: client.ProtocolVersion()}, out)
	res, err := client.Send(ctx, out)
	done(err)
	return res, err
}
