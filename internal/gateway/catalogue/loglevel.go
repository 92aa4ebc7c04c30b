// loglevel.go carries a client's logging/setLevel to the backends. The
// gateway answered it itself and never told a backend, so a backend kept
// its own default and the client never got the messages below it (the
// reference server's logging tool sent 3 of its 4). A backend's shared
// session serves every client, so it is set to the most verbose level any
// client asked for. What each client then gets is filtered by its own level
// at the front: the relay logs through the front session.

package catalogue

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// setLevelTimeout bounds each backend's answer.
const setLevelTimeout = 10 * time.Second

// SetLevel asks every backend that is up and offers logging for level,
// unless one was already asked for it or a more verbose one. Failures are
// logged: the client's own level is set whatever a backend answers.
func (c *Claims) SetLevel(ctx context.Context, level mcp.LogLevel) {
	rank := level.Rank()
	if rank == 0 {
		return
	}
	c.mu.Lock()
	if cur := c.level.Rank(); cur == 0 || rank < cur {
		c.level = level // what a backend that comes up later is asked for
	}
	var ask []*Mirror
	for _, b := range c.live {
		if b.offersLogging && !b.sessionless && (b.levelSent == 0 || rank < b.levelSent) {
			b.levelSent = rank
			ask = append(ask, b)
		}
	}
	c.mu.Unlock()
	for _, b := range ask {
		b.setLevel(ctx, level)
	}
}

// Level is the most verbose level a client asked of the gateway ("" for
// none): what a sessionless backend, which has no logging/setLevel, is
// asked to log at in each request's _meta.
func (c *Claims) Level() mcp.LogLevel {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.level
}

// catchUpLevel asks a backend that just came up for the level clients
// asked for before it did.
func (c *Claims) catchUpLevel(ctx context.Context, b *Mirror) {
	c.mu.Lock()
	level := c.level
	ask := level != "" && b.offersLogging && !b.sessionless && b.levelSent == 0
	if ask {
		b.levelSent = level.Rank()
	}
	c.mu.Unlock()
	if ask {
		b.setLevel(ctx, level)
	}
}

func (b *Mirror) setLevel(ctx context.Context, level mcp.LogLevel) {
	params, _ := json.Marshal(map[string]mcp.LogLevel{"level": level})
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), setLevelTimeout)
	defer cancel()
	if _, err := b.client.Call(ctx, "logging/setLevel", params); err != nil {
		b.log.Warn("relay: the backend refused logging/setLevel", "level", string(level), "err", err)
	}
}

// offersLogging reads the logging capability of an initialize result.
func offersLogging(initResult []byte) bool {
	caps, _ := jsonrpc.Lookup(initResult, "capabilities")
	if len(caps) == 0 {
		return false
	}
	l, _ := jsonrpc.Lookup(caps, "logging")
	return len(l) > 0 && string(l) != "null"
}

// ForwardLogLevel is the middleware that, once the front session took a
// client's logging/setLevel, carries it to the backends (SetLevel).
func (c *Claims) ForwardLogLevel(next mcp.Handler) mcp.Handler {
	return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
		res, err := next.ServeMCP(ctx, r)
		if err == nil && r.Method == "logging/setLevel" {
			level, _ := jsonrpc.LookupString(r.Params, "level")
			c.SetLevel(ctx, mcp.LogLevel(level))
		}
		return res, err
	})
}
