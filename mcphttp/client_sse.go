// client_sse.go is the client side of the legacy HTTP+SSE transport
// (2024-11-05), for backends that never moved to Streamable HTTP: one GET
// stream carries everything the server says, starting with the endpoint
// to POST to; each POST is only acknowledged. The endpoint must be on the
// stream's own origin, or a hostile server could have our messages — and
// the credentials in ClientOptions.Header — sent anywhere.

package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

var _ mcp.Conn = (*SSEConn)(nil)

// SSEConn is a legacy HTTP+SSE client connection; it implements mcp.Conn.
type SSEConn struct {
	endpoint string // where messages are POSTed
	opts     ClientOptions
	log      *slog.Logger

	inbox  *inbox
	ctx    context.Context // the stream's life; Close cancels it
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	own *http.Client // made for this Conn, which closes it; nil when the caller gave one
}

// DialSSE opens the event stream at url and waits, within ctx, for the
// server to announce its messages endpoint.
func DialSSE(ctx context.Context, url string, o ClientOptions) (*SSEConn, error) {
	base, err := parseHTTPURL(url)
	if err != nil {
		return nil, err
	}
	o, own := o.withDefaults()
	c := &SSEConn{opts: o, log: o.Logger, inbox: newInbox(), own: own}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, c.cancel) // until the endpoint is known

	r, body, err := c.open(base)
	if err == nil {
		c.endpoint, err = awaitEndpoint(r, base)
	}
	if !stop() && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		if body != nil {
			_ = body.Close()
		}
		c.cancel()
		if own != nil {
			own.CloseIdleConnections()
		}
		return nil, err
	}
	c.wg.Add(1)
	go c.readLoop(r, body)
	return c, nil
}

// open sends the GET and checks that an event stream came back.
func (c *SSEConn) open(base *url.URL) (*sse.Reader, io.ReadCloser, error) {
	req, _ := http.NewRequestWithContext(c.ctx, http.MethodGet, base.String(), nil)
	addHeaders(req, c.opts.Header)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("mcphttp: GET: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		drain(resp.Body)
		return nil, nil, &HTTPStatusError{Method: http.MethodGet, Status: resp.StatusCode}
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		drain(resp.Body)
		return nil, nil, fmt.Errorf("mcphttp: GET answered Content-Type %q, want text/event-stream", ct)
	}
	return sse.NewReader(resp.Body, c.opts.MaxMessageBytes), resp.Body, nil
}

// awaitEndpoint reads the first event, which must be the endpoint, and
// resolves it against the stream's URL.
func awaitEndpoint(r *sse.Reader, base *url.URL) (string, error) {
	ev, err := r.Next()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoEndpoint, err)
	}
	if ev.Name != "endpoint" {
		return "", fmt.Errorf("%w: first event is %q", ErrNoEndpoint, ev.Name)
	}
	u, err := base.Parse(strings.TrimSpace(string(ev.Data)))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoEndpoint, err)
	}
	if !sameOrigin(u, base) {
		return "", fmt.Errorf("%w: %s", ErrCrossOriginEndpoint, u.Redacted())
	}
	return u.String(), nil
}

// sameOrigin compares scheme, host and port, with default ports filled in.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// readLoop delivers message events until the stream ends.
func (c *SSEConn) readLoop(r *sse.Reader, body io.ReadCloser) {
	defer c.wg.Done()
	defer body.Close()
	for {
		ev, err := r.Next()
		if err != nil {
			c.inbox.end(streamEnd(c.ctx, err))
			return
		}
		if ev.Name == "" || ev.Name == "message" {
			if !eachMessage(ev.Data, c.inbox.push) {
				c.log.Warn("mcphttp client: an event that is not JSON-RPC dropped")
			}
		}
	}
}

// streamEnd is what Read reports after the stream: io.EOF when it ended
// cleanly or we closed it, the failure otherwise.
func streamEnd(ctx context.Context, err error) error {
	if errors.Is(err, io.EOF) || ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
		return io.EOF
	}
	return fmt.Errorf("mcphttp: event stream: %w", err)
}

// Endpoint is the URL messages are POSTed to.
func (c *SSEConn) Endpoint() string { return c.endpoint }

// Read returns the next message from the server.
func (c *SSEConn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	return c.inbox.pop(ctx)
}

// Write POSTs one message to the endpoint; the server only acknowledges
// it (202 or 200), and any answer arrives on the stream.
func (c *SSEConn) Write(ctx context.Context, m *jsonrpc.Message) error {
	msg := m.Append(nil)
	if c.ctx.Err() != nil {
		return ErrConnClosed
	}
	x := newExchange(ctx, c.ctx)
	defer x.cancel()
	req, _ := http.NewRequestWithContext(x, http.MethodPost, c.endpoint, bytes.NewReader(msg))
	addHeaders(req, c.opts.Header)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if c.ctx.Err() != nil {
			return ErrConnClosed
		}
		return fmt.Errorf("mcphttp: POST: %w", err)
	}
	drain(resp.Body)
	if resp.StatusCode/100 != 2 {
		return &HTTPStatusError{Method: http.MethodPost, Status: resp.StatusCode}
	}
	return nil
}

// Close ends the stream; Read then returns io.EOF.
func (c *SSEConn) Close() error {
	c.once.Do(func() {
		c.inbox.shut()
		c.cancel()
		c.wg.Wait()
		if c.own != nil {
			c.own.CloseIdleConnections()
		}
	})
	return nil
}
