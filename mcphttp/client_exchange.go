// client_exchange.go builds the client's POSTs and the context of each HTTP
// exchange with as few allocations as it can. A relay makes one upstream
// POST per relayed call. The relay's profile showed url.Parse, Header.Set
// and two context.AfterFunc registrations on every one of them.

package mcphttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Header values shared by every request. The transport only reads a
// request's headers, so requests may share these slices.
var (
	acceptPOST      = []string{"application/json, text/event-stream"}
	contentTypeJSON = []string{"application/json"}
	acceptGzip      = []string{"gzip"}
)

// exchange is the context of one HTTP exchange. It keeps the caller's
// values. It ends when the connection closes (it is derived from the
// connection's context) or on cancel. It ends with the caller's ctx only
// until detach: a response stream handed to a reader goroutine outlives the
// Write that started it.
type exchange struct {
	context.Context // derived from the connection's context
	caller          context.Context
	cancelCtx       context.CancelFunc
	stopCaller      func() bool
	sessioned       bool // the POST carried the session id (sentSession)
}

func newExchange(caller, conn context.Context) *exchange {
	inner, cancel := context.WithCancel(conn)
	x := &exchange{Context: inner, caller: caller, cancelCtx: cancel, stopCaller: neverStops}
	if caller.Done() != nil { // a caller that can never end has nothing to watch
		x.stopCaller = context.AfterFunc(caller, cancel)
	}
	return x
}

// neverStops is the stop of a watch on a caller that cannot end: it never
// ends the exchange, so detaching always succeeds.
func neverStops() bool { return true }

// Value looks in the exchange's own chain first, so that a context derived
// from it sees the exchange's cancellation (not the caller's) as its
// parent's; the connection's chain holds no other value, and every other
// key is the caller's.
func (x *exchange) Value(key any) any {
	if v := x.Context.Value(key); v != nil {
		return v
	}
	return x.caller.Value(key)
}

// detach stops the caller's ctx from ending the exchange; false if it
// already has.
func (x *exchange) detach() bool { return x.stopCaller() }

// cancel ends the exchange and releases what it holds.
func (x *exchange) cancel() {
	x.stopCaller()
	x.cancelCtx()
}

// asksGzip reports whether the client asks for gzip on its POSTs itself
// (and so decodes it: gunzip). That is what hc's transport would do for
// them, in a map and a header value of its own on every request, unless
// it is an *http.Transport with DisableCompression set; a wrapped
// transport is taken to compress.
func asksGzip(hc *http.Client) bool {
	t, ok := hc.Transport.(*http.Transport)
	if hc.Transport == nil {
		t, ok = http.DefaultTransport.(*http.Transport)
	}
	return !ok || !t.DisableCompression
}

// gunzip decodes resp's body if the server gzipped it, as the transport
// would have had it not been asked for gzip by the client itself.
func gunzip(resp *http.Response) {
	if !strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		return
	}
	resp.Body = &gzipBody{src: resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
}

// gzipBody reads the gzip header on its first Read, not before: an event
// stream's first bytes may be a while coming.
type gzipBody struct {
	src io.ReadCloser
	zr  *gzip.Reader
	err error
}

func (b *gzipBody) Read(p []byte) (int, error) {
	if b.zr == nil && b.err == nil {
		b.zr, b.err = gzip.NewReader(b.src)
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.zr.Read(p)
}

func (b *gzipBody) Close() error { return b.src.Close() }

// postTemplate is what every POST to u has in common. newPOSTRequest
// copies it with WithContext: one allocation, where a literal made and
// then given its context is two.
func postTemplate(u *url.URL) *http.Request {
	return &http.Request{
		Method:     http.MethodPost,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Host:       u.Host,
	}
}

// newPOSTRequest is http.NewRequestWithContext for a POST of msg, made
// from a postTemplate without parsing its URL again: the URL is shared, as
// the client only reads it. So may the header be, when nothing on the way
// writes to it.
func newPOSTRequest(ctx context.Context, tmpl *http.Request, msg []byte, h http.Header) *http.Request {
	req := tmpl.WithContext(ctx)
	req.Header = h
	if len(msg) == 0 {
		req.Body, req.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
		return req
	}
	// io.NopCloser of a *bytes.Reader, as http.NewRequest makes it: the
	// transport knows that body is in memory, and writes headers and body in
	// one write. A body type of our own cost a second write syscall per
	// request, the headers flushed first.
	req.Body = io.NopCloser(bytes.NewReader(msg))
	req.ContentLength = int64(len(msg))
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(msg)), nil
	}
	return req
}
