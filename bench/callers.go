// callers.go is how each kind of path is called: an MCP session over
// Streamable HTTP, the wire's per-path form (one WebSocket per call), or
// a channel on the wire's one framed connection.

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/wire"
)

// The tool every path calls: the fixture's cheapest, a fixed short text.
const (
	toolName   = "test_simple_text"
	callParams = `{"name":"` + toolName + `","arguments":{}}`
)

// largeParams call the fixture's bench_text for a 64 KiB answer: what a
// relay costs when the answer is large.
const largeParams = `{"name":"bench_text","arguments":{"bytes":65536}}`

// httpCaller is one MCP session, calling with params.
type httpCaller struct {
	s      *session
	params string
}

func (c httpCaller) call(ctx context.Context) error { return c.s.call(ctx, c.params) }
func (c httpCaller) close(ctx context.Context)      { c.s.close(ctx) }

// sessionFactory opens initialized sessions on url that call the
// cheapest tool.
func sessionFactory(hc *http.Client, url, token string) func(context.Context) (caller, error) {
	return sessionsCalling(hc, url, token, callParams)
}

// sessionsCalling opens initialized sessions on url that call with params.
func sessionsCalling(hc *http.Client, url, token, params string) func(context.Context) (caller, error) {
	return func(ctx context.Context) (caller, error) {
		s := newSession(hc, url, token)
		if err := s.initialize(ctx); err != nil {
			return nil, err
		}
		return httpCaller{s, params}, nil
	}
}

// sessionlessCaller calls as a 2026-07-28 client does: no initialize, no
// session, the revision and the client's capabilities in each request's
// _meta and the revision's headers on each POST.
type sessionlessCaller struct {
	hc         *http.Client
	url, token string
}

const sessionlessParams = `{"name":"` + toolName + `","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`

func (c sessionlessCaller) call(ctx context.Context) error {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + sessionlessParams + `}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", toolName)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"resultType":"complete"`)) {
		return fmt.Errorf("tools/call: HTTP %d: %.200s", resp.StatusCode, b)
	}
	return nil
}
func (sessionlessCaller) close(context.Context) {}

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

// framed is the wire's framed connection to a proxy, begun once; a proxy
// serves one framed connection at a time, so every framed caller shares
// it, as the gateway would.
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

// framedCaller opens one channel per call: req, or the tools/call.
type framedCaller struct {
	f   *framed
	req []byte
}

var (
	callRequest = wire.McpCallTool{Params: []byte(callParams)}.Append(nil)
	// promptRequest is a prompts/get on tag 9.
	promptRequest = wire.McpRequest{Method: "prompts/get", Params: []byte(`{"name":"test_simple_prompt"}`)}.Append(nil)
)

func (c framedCaller) call(ctx context.Context) error {
	req := c.req
	if req == nil {
		req = callRequest
	}
	ch, err := c.f.scope.OpenChannel(ctx, req)
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
		return fmt.Errorf("framed call: %s", resp.Error.Raw())
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
