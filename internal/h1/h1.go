// Package h1 is an HTTP/1.1 client transport for the requests a relay
// makes on every call: a POST or GET, its body in memory, to a plain
// http:// origin. net/http's Transport hands each such request to two
// goroutines of its connection and back, and allocated about 45 times for
// it. This one writes the request and reads the answer on the caller's
// goroutine, from connections it keeps idle itself.
//
// Whatever it does not do goes to the net/http Transport it wraps: TLS, a
// proxy, an upgrade, a body of unknown length, and any setting of that
// Transport it does not honour. A connection the server closed while idle
// is found before it is used again, as net/http finds it. Trailers of a
// chunked answer are read and dropped, and no request asks for gzip on
// its own: a caller that wants gzip asks and decodes.
package h1

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Transport sends plain HTTP/1.1 requests itself and the rest through
// Fallback. It is safe for concurrent use; its zero value is not usable:
// make it with New.
type Transport struct {
	// Fallback sends what this transport does not. Its dialer, proxy
	// function, idle limits and header size limit are this transport's.
	Fallback *http.Transport

	mu    sync.Mutex
	hosts map[string]*host
}

// host is one origin's idle connections, by the URL's host as written.
type host struct {
	addr    string  // host:port dialled
	proxied bool    // a proxy applies: every request goes to Fallback
	idle    []*conn // the longest idle first
	sweep   *time.Timer
	armed   bool // sweep will fire
}

// New returns a Transport over fallback.
func New(fallback *http.Transport) *Transport {
	return &Transport{Fallback: fallback, hosts: map[string]*host{}}
}

// RoundTrip sends req and returns the answer, whose body must be read to
// its end or closed for the connection to be used again.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.plain(req) {
		return t.Fallback.RoundTrip(req)
	}
	h := t.host(req.URL.Host, func() *http.Request { return req })
	if h.proxied {
		return t.Fallback.RoundTrip(req)
	}
	o := outgoingOf(req)
	return t.send(req.Context(), h, &o)
}

// Poster sends a POST as its parts, with no *http.Request made for it:
// Transport, or a transport over it that adds nothing to the POST.
type Poster interface {
	Post(ctx context.Context, u *url.URL, header http.Header, body Body) (*http.Response, error)
}

var _ Poster = (*Transport)(nil)

// A Body is a POST's body in up to three slices, sent one after another:
// a long part goes out from where it lies, not copied behind the others.
type Body [3][]byte

// Len is the body's length.
func (b *Body) Len() int { return len(b[0]) + len(b[1]) + len(b[2]) }

// Bytes is the body as one slice: its first part when that is all of it.
func (b *Body) Bytes() []byte {
	if len(b[1]) == 0 && len(b[2]) == 0 {
		return b[0]
	}
	return append(append(append(make([]byte, 0, b.Len()), b[0]...), b[1]...), b[2]...)
}

// PostRequest is the *http.Request of a Post's parts, its body readable
// again (GetBody), for a POST that must go as one after all.
func PostRequest(ctx context.Context, u *url.URL, header http.Header, body Body) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body.Bytes()))
	req.Header = header
	return req
}

// Post sends a POST of body to u with header, as RoundTrip would send an
// *http.Request of those parts, without making one: a relay's upstream
// POST is its most frequent request. The answer's Request is nil. A POST
// this transport does not send itself goes through RoundTrip.
func (t *Transport) Post(ctx context.Context, u *url.URL, header http.Header, body Body) (*http.Response, error) {
	request := func() *http.Request { return PostRequest(ctx, u, header, body) }
	if !t.plainURL(u) || !plainHeader(header) {
		return t.RoundTrip(request())
	}
	h := t.host(u.Host, request)
	if h.proxied {
		return t.Fallback.RoundTrip(request())
	}
	return t.send(ctx, h, &outgoing{method: http.MethodPost, url: u, header: header, posted: true, inline: body})
}

// send sends o to h on a kept connection or a new one.
func (t *Transport) send(ctx context.Context, h *host, o *outgoing) (*http.Response, error) {
	c, err := t.get(ctx, h)
	if err != nil {
		o.closeBody()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return c.roundTrip(ctx, o)
}

// CloseIdleConnections closes the connections no request is using, here
// and in Fallback.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*conn
	for _, h := range t.hosts {
		idle = append(idle, h.idle...)
		h.idle = nil
	}
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
	t.Fallback.CloseIdleConnections()
}

// plain reports whether req is one this transport sends itself. It is an
// http:// request with no body or one of known length. Nothing in it asks
// for an upgrade, a 100-continue or a connection of its own. Fallback has
// no setting this transport would ignore.
func (t *Transport) plain(req *http.Request) bool {
	if req.URL == nil || !t.plainURL(req.URL) || req.Close || len(req.Trailer) != 0 || req.TransferEncoding != nil {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodPost, http.MethodDelete, "":
	default:
		return false
	}
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength <= 0 {
		return false
	}
	return plainHeader(req.Header)
}

// plainURL reports whether u is an http:// URL and Fallback has no
// setting this transport would ignore.
func (t *Transport) plainURL(u *url.URL) bool {
	f := t.Fallback
	return u.Scheme == "http" && u.Host != "" &&
		!f.DisableKeepAlives && f.ResponseHeaderTimeout == 0 && !deprecatedDial(f)
}

// plainHeader reports whether h asks for nothing this transport does not
// do: an upgrade, a 100-continue, a connection of its own.
func plainHeader(h http.Header) bool {
	for _, k := range [...]string{"Connection", "Upgrade", "Expect", "Te"} {
		if _, ok := h[k]; ok {
			return false
		}
	}
	return true
}

// deprecatedDial reports whether f dials with its Dial field, which only
// Fallback honours.
func deprecatedDial(f *http.Transport) bool {
	//lint:ignore SA1019 a transport given Dial must keep using it
	return f.Dial != nil
}

// host is the origin of a URL's host, made on its first request: the
// address to dial, and whether Fallback's proxy function names a proxy for
// the request. ProxyFromEnvironment reads the environment once, so the
// answer holds.
func (t *Transport) host(hostport string, req func() *http.Request) *host {
	t.mu.Lock()
	h := t.hosts[hostport]
	t.mu.Unlock()
	if h != nil {
		return h
	}
	h = &host{addr: dialAddr(hostport)}
	if t.Fallback.Proxy != nil {
		u, err := t.Fallback.Proxy(req())
		h.proxied = err != nil || u != nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.hosts[hostport]; old != nil {
		return old
	}
	t.hosts[hostport] = h
	return h
}

// dialAddr is hostport with port 80 when it names none.
func dialAddr(hostport string) string {
	if _, _, err := net.SplitHostPort(hostport); err == nil {
		return hostport
	}
	h := hostport
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	return net.JoinHostPort(h, "80")
}

// get is an idle connection to h still open at the other end, or a new
// one.
func (t *Transport) get(ctx context.Context, h *host) (*conn, error) {
	now := time.Now()
	t.mu.Lock()
	for n := len(h.idle); n > 0; n = len(h.idle) {
		c := h.idle[n-1]
		h.idle[n-1] = nil
		h.idle = h.idle[:n-1]
		t.mu.Unlock()
		if c.reusable(now) {
			return c, nil
		}
		c.nc.Close()
		t.mu.Lock()
	}
	t.mu.Unlock()
	return t.dial(ctx, h)
}

// put keeps c idle for its host's next request, or closes it when the
// host keeps its limit already.
func (t *Transport) put(c *conn) {
	limit := t.Fallback.MaxIdleConnsPerHost
	if limit == 0 {
		limit = http.DefaultMaxIdleConnsPerHost
	}
	c.idleSince = time.Now()
	h := c.h
	t.mu.Lock()
	if len(h.idle) < limit {
		h.idle = append(h.idle, c)
		c = nil
		if d := t.Fallback.IdleConnTimeout; d > 0 && !h.armed {
			t.armLocked(h, d)
		}
	}
	t.mu.Unlock()
	if c != nil {
		c.nc.Close()
	}
}

// armLocked has h's idle connections swept in d. The caller holds t.mu.
func (t *Transport) armLocked(h *host, d time.Duration) {
	h.armed = true
	if h.sweep == nil {
		h.sweep = time.AfterFunc(d, func() { t.sweep(h) })
		return
	}
	h.sweep.Reset(d)
}

// sweep closes h's connections idle for longer than Fallback's
// IdleConnTimeout, as net/http does: a server that closed its end leaves
// ours open until then. It comes again while any are left.
func (t *Transport) sweep(h *host) {
	d := t.Fallback.IdleConnTimeout
	now := time.Now()
	t.mu.Lock()
	n := 0
	for n < len(h.idle) && now.Sub(h.idle[n].idleSince) >= d {
		n++
	}
	stale := make([]*conn, n)
	copy(stale, h.idle)
	left := copy(h.idle, h.idle[n:])
	clear(h.idle[left:])
	h.idle = h.idle[:left]
	h.armed = false
	if len(h.idle) > 0 {
		t.armLocked(h, d-now.Sub(h.idle[0].idleSince))
	}
	t.mu.Unlock()
	for _, c := range stale {
		c.nc.Close()
	}
}

// dial opens a connection with Fallback's dialer.
func (t *Transport) dial(ctx context.Context, h *host) (*conn, error) {
	dial := t.Fallback.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", h.addr)
	if err != nil {
		return nil, err
	}
	return newConn(t, h, nc), nil
}

// closeBody closes a request's body, as RoundTrip must whatever happens.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// Errors of a malformed answer.
var (
	errMalformed   = errors.New("h1: malformed HTTP response")
	errHeaderSize  = errors.New("h1: server's response headers exceeded the limit")
	errBodyLength  = errors.New("h1: request body's length is not its ContentLength")
	errClosedBody  = errors.New("h1: read on closed response body")
	errChunked     = errors.New("h1: malformed chunked encoding")
	errUnsupported = errors.New("h1: unsupported transfer encoding")
)
