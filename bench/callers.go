// callers.go is how each kind of path is called: an MCP session over
// Streamable HTTP, the wire's per-path form (one WebSocket per call), or
// a channel on the wire's one framed connection.

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate/wire"
)

// The tool every path calls: the fixture's cheapest, a fixed short text.
const (
	toolName   = "test_simple_text"
	callParams = `{"name":"` + toolName + `","arguments":{}}`
)

// httpCaller is one MCP session.
type httpCaller struct{ s *session }

func (c httpCaller) call(ctx context.Context) error { return c.s.call(ctx, callParams) }
func (c httpCaller) close(ctx context.Context)      { c.s.close(ctx) }

// sessionFactory opens initialized sessions on url.
func sessionFactory(hc *http.Client, url, token string) func(context.Context) (caller, error) {
	return func(ctx context.Context) (caller, error) {
		s := newSession(hc, url, token)
		if err := s.initialize(ctx); err != nil {
			return nil, err
		}
		return httpCaller{s}, nil
	}
}

// perPathCaller calls on the wire's per-path form.
type perPathCaller struct{ base string }

func (c perPathCaller) call(ctx context.Context) error {
	resp, err := wire.CallPath(ctx, c.base, wire.PathCallTool, []byte(callParams))
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("tools/call: %s", resp.Error.Raw())
	}
	return nil
}
func (perPathCaller) close(context.Context) {}

// framed is the wire's one framed connection to a proxy, begun once; a
// proxy accepts a single framed connection in its life, so every framed
// caller shares it, as the gateway would.
type framed struct {
	cl    *wire.Client
	scope *wire.Scope
}

func dialFramed(ctx context.Context, base string) (*framed, error) {
	cl, err := wire.Dial(ctx, base+"/", nil)
	if err != nil {
		return nil, err
	}
	scope, err := cl.Open(ctx, wire.BeginTools{Arguments: []byte("null")}.Append(nil))
	if err != nil {
		_ = cl.Close()
		return nil, err
	}
	p, err := scope.Next(ctx)
	if err != nil {
		_ = cl.Close()
		return nil, fmt.Errorf("the begin: %w", err)
	}
	if ans, err := wire.DecodeBeginAnswer(p); err != nil || !ans.Begun() {
		_ = cl.Close()
		return nil, fmt.Errorf("the begin was refused: %v %s", err, ans.Error)
	}
	return &framed{cl: cl, scope: scope}, nil
}

func (f *framed) close() { _ = f.cl.Close() }

// framedCaller opens one channel per call.
type framedCaller struct{ f *framed }

var callRequest = wire.McpCallTool{Params: []byte(callParams)}.Append(nil)

func (c framedCaller) call(ctx context.Context) error {
	ch, err := c.f.scope.OpenChannel(ctx, callRequest)
	if err != nil {
		return err
	}
	p, err := ch.Next(ctx)
	if err != nil {
		return err
	}
	resp, err := wire.DecodeResponse(p)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("tools/call: %s", resp.Error.Raw())
	}
	return nil
}
func (framedCaller) close(context.Context) {}

// firstAnswer retries opening a caller and calling once until it works:
// the readiness of any path, and the end of a start-up's clock.
func firstAnswer(ctx context.Context, open func(context.Context) (caller, error), timeout, every time.Duration) (caller, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		c, err := open(ctx)
		if err == nil {
			if err = c.call(ctx); err == nil {
				return c, nil
			}
			c.close(ctx)
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, errors.Join(fmt.Errorf("no answer within %s", timeout), last)
		case <-time.After(every):
		}
	}
}
