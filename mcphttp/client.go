// client.go holds what the two client Conns (Streamable HTTP and legacy
// SSE) share: their options, their typed errors and the small HTTP helpers.
// It also turns an HTTP failure into a JSON-RPC answer, so that a caller
// waiting on a request is never left hanging.

package mcphttp

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"

	"github.com/mcpgate/mcpgate/internal/h1"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// ClientOptions configures DialStreamable and DialSSE.
type ClientOptions struct {
	// HTTPClient sends the requests. Its Timeout, if any, must allow for
	// long-lived event streams. The caller owns it; without one, the Conn
	// makes its own (NewHTTPClient) and closes it when it closes.
	HTTPClient *http.Client
	// Header is added to every request: static credentials such as
	// Authorization, or a User-Agent.
	Header http.Header
	Logger *slog.Logger
	// MaxMessageBytes bounds one incoming message (default 16 MiB); a
	// larger one fails the request it answers, never truncates.
	MaxMessageBytes int
	// WrapTransport, when set, wraps the HTTP client's transport (an
	// OAuth client's, that adds the access token).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// withDefaults fills o's defaults. own is the HTTP client made for a
// Conn given none, which the Conn closes when it closes.
func (o ClientOptions) withDefaults() (_ ClientOptions, own *http.Client) {
	if o.HTTPClient == nil {
		own = NewHTTPClient()
		o.HTTPClient = own
	}
	if o.WrapTransport != nil {
		hc := *o.HTTPClient
		rt := hc.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		hc.Transport, o.WrapTransport = o.WrapTransport(rt), nil
		o.HTTPClient = &hc
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 16 << 20
	}
	return o, own
}

// NewHTTPClient is a client for relaying: http.DefaultClient but for the
// idle connections it keeps per server. Go's default keeps 2, so a relay
// calling one backend from 16 sessions at once dialled a new TCP
// connection for most calls (the benchmark's relay ran at half the null
// relay's rate); this one keeps 256. It sends a plain http:// request on
// the caller's goroutine (internal/h1), the rest through net/http. Whoever makes it owns it, and closes
// its idle connections when done with it; a Conn given none makes its own
// and closes it with itself.
func NewHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: h1.New(t)}
}

// Errors the client Conns report.
var (
	// ErrConnClosed is returned by Write after Close.
	ErrConnClosed = errors.New("mcphttp: connection closed")
	// ErrSessionExpired ends a Streamable HTTP connection whose server
	// answered 404 to its session id: the session must be started anew.
	ErrSessionExpired = errors.New("mcphttp: session expired (HTTP 404)")
	// ErrNoEndpoint is returned by DialSSE when the stream does not open
	// with an endpoint event.
	ErrNoEndpoint = errors.New("mcphttp: legacy SSE stream did not announce an endpoint")
	// ErrCrossOriginEndpoint is returned by DialSSE when the server names
	// an endpoint on another origin, where our messages (and credentials)
	// must not go.
	ErrCrossOriginEndpoint = errors.New("mcphttp: legacy SSE endpoint is on another origin")
)

// HTTPStatusError is an HTTP answer the transport cannot use.
type HTTPStatusError struct {
	Method string // of the refused request
	Status int
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("mcphttp: %s answered %d %s", e.Method, e.Status, http.StatusText(e.Status))
}

// failedCall builds the error response a client delivers to itself for a
// request the server will never answer. status is the HTTP status, 0 when
// the failure is not an HTTP answer (a stream that broke).
func failedCall(id jsonrpc.ID, status int, reason string) *jsonrpc.Message {
	return (&mcp.TransportError{Reason: reason, HTTPStatus: status}).Answer(id)
}

// parseHTTPURL accepts only absolute http and https URLs.
func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("mcphttp: bad URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcphttp: bad URL %q: want an absolute http or https URL", raw)
	}
	return u, nil
}

// addHeaders copies the static headers onto req; the transport's own
// headers are set afterwards and win.
func addHeaders(req *http.Request, static http.Header) {
	for k, vs := range static {
		req.Header[k] = append([]string(nil), vs...)
	}
}

// drain reads a little of a body we do not use and closes it, so that the
// connection can be reused.
func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	_ = body.Close()
}

// mediaType is the bare media type of a Content-Type header.
func mediaType(ct string) string {
	// The two a server answers a POST with, bare, are returned as they
	// are: mime.ParseMediaType builds a map of parameters on every call.
	if ct == "application/json" || ct == "text/event-stream" {
		return ct
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}
