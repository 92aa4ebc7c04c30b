// client_listen.go keeps a subscriptions/listen open for a client of a
// sessionless server (2026-07-28), which has no other way to tell of list
// changes and resource updates: they come as notifications on the listen
// request's stream, to ClientOptions.OnNotification like any other.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Listen keeps a subscriptions/listen with params open until ctx ends. A
// stream the server ends, or that breaks, is opened again after pause,
// ended having been told why (nil: the server ended it); what changed
// while none was open was not told, so ended is where a client resyncs.
// Listen returns ctx's error, or the server's refusal to listen (a
// JSON-RPC error of its own, not -32603).
func (c *Client) Listen(ctx context.Context, params json.RawMessage, pause time.Duration, ended func(error)) error {
	for {
		_, err := c.Call(ctx, "subscriptions/listen", params)
		var je *jsonrpc.Error
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &je) && je.Code != jsonrpc.CodeInternalError:
			return err
		}
		ended(err)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
