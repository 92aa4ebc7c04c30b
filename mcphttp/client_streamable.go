// client_streamable.go is the client side of Streamable HTTP. It is an
// mcp.Conn that POSTs each message and reads the answer from the POST's
// body, one JSON document or an event stream. It also keeps the standalone
// GET stream, on which the server sends what is not an answer to a POST.
// Every request written gets exactly one answer on Read, even when HTTP
// fails: a gateway relaying calls must never leave one of its callers
// waiting.

package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/h1"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// deleteTimeout bounds the DELETE that Close sends.
const deleteTimeout = 5 * time.Second

var _ mcp.Conn = (*StreamableConn)(nil)

// StreamableConn is a Streamable HTTP client connection; it implements
// mcp.Conn and mcp.RoundTripConn. It learns the negotiated revision, which
// every later request carries as MCP-Protocol-Version, from the answer to
// the initialize it sent.
type StreamableConn struct {
	url      string
	postTmpl *http.Request // what every POST has in common (postTemplate)
	opts     ClientOptions
	http     *http.Client
	// direct is http's transport when POSTs may skip http.Client (nil
	// when they may not; client_transport.go).
	direct http.RoundTripper
	// plain is direct when it can send a POST as its parts, with no
	// *http.Request made for it (internal/h1's, or a backend's OAuth
	// transport over it).
	plain h1.Poster
	// gzip: the POSTs ask for gzip themselves (asksGzip).
	gzip bool
	log  *slog.Logger

	inbox  *inbox
	ctx    context.Context // the connection's life; Close cancels it
	cancel context.CancelFunc
	wg     sync.WaitGroup // stream readers

	mu        sync.Mutex
	sessionID string
	version   string
	// The two as header values, shared by every request that carries them.
	sessionHdr, versionHdr []string
	// postHdr is the header of a session's POSTs, made again when the
	// session or the revision changes (nil until then; newPOST).
	postHdr http.Header
	postGen uint64 // counts postHdr's rebuilds
	// slHdr are sessionless POSTs' headers, made from postHdr (of
	// generation postGen) and shared as it is (client_sessionless.go).
	slHdr       map[slKey]http.Header
	listening   bool              // the standalone GET stream was started
	initID      string            // the key of the initialize request in flight, if any
	discoverID  string            // the same for server/discover
	sessionless bool              // the server answered server/discover (client_sessionless.go)
	streams     map[string]func() // closes a sessionless request's answer stream, by id
	// nameHdr are Mcp-Name header values made, by the name they carry:
	// a name called again costs no string (client_sessionless.go).
	nameHdr map[string][]string
	closed  bool
	// retry is the reconnection time the server asked for in its latest
	// SSE retry field (0: none; back off instead).
	retry time.Duration
	own   *http.Client // made for this Conn, which closes it; nil when the caller gave one
}

// DialStreamable returns a connection to the MCP endpoint at url. No
// request is made until the first Write (the session begins with
// initialize); ctx only bounds the dial itself.
func DialStreamable(ctx context.Context, url string, o ClientOptions) (*StreamableConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	u, err := parseHTTPURL(url)
	if err != nil {
		return nil, err
	}
	o, own := o.withDefaults()
	c := &StreamableConn{url: url, postTmpl: postTemplate(u), opts: o, http: o.HTTPClient, log: o.Logger, inbox: newInbox(), own: own}
	c.direct, c.gzip = directTransport(c.http, u), asksGzip(c.http)
	c.plain, _ = c.direct.(h1.Poster)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// SessionID is the session id the server issued at initialize ("" before,
// or for a server without sessions).
func (c *StreamableConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// setVersion makes every later request carry MCP-Protocol-Version v.
func (c *StreamableConn) setVersion(v string) {
	c.mu.Lock()
	c.version = v
	c.versionHdr = []string{v}
	c.postHdr = nil
	c.mu.Unlock()
}

// sending notes what a request about to be sent means for the connection:
// the answer to an initialize names the revision.
func (c *StreamableConn) sending(m *jsonrpc.Message) {
	if (m.Method == "initialize" || m.Method == "server/discover") && m.ID != nil {
		c.mu.Lock()
		switch {
		case m.Method == "initialize":
			c.initID = m.ID.Key()
		case c.version == "":
			// The probe. Once a revision is set, a server/discover is
			// an ordinary request of the era the connection speaks.
			c.discoverID = m.ID.Key()
		}
		c.mu.Unlock()
	}
}

// arrived is every message from the server on its way to the client, seen
// once: the answer to initialize sets the revision before the client can
// send anything after it.
func (c *StreamableConn) arrived(m *jsonrpc.Message) {
	c.mu.Lock()
	initID, discoverID := c.initID, c.discoverID
	c.mu.Unlock()
	if discoverID != "" && m.ID != nil && m.ID.Key() == discoverID {
		c.mu.Lock()
		c.discoverID = ""
		c.mu.Unlock()
		if m.Result != nil {
			c.discovered(m.Result)
		}
		return
	}
	if initID == "" || m.ID == nil || m.ID.Key() != initID || m.Result == nil {
		return
	}
	c.mu.Lock()
	c.initID = ""
	c.mu.Unlock()
	if v, _ := jsonrpc.LookupString(m.Result, "protocolVersion"); mcp.IsSupportedVersion(v) {
		c.setVersion(v)
	}
}

// deliver hands m to Read.
func (c *StreamableConn) deliver(m *jsonrpc.Message) {
	c.arrived(m)
	c.inbox.push(m)
}

// Read returns the next message from the server, in order of arrival.
func (c *StreamableConn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	return c.inbox.pop(ctx)
}

// Write POSTs one message. It returns once the server has accepted it:
// for a request, its answer then arrives on Read — the server's, or one
// made up here when HTTP fails.
func (c *StreamableConn) Write(ctx context.Context, m *jsonrpc.Message) error {
	if c.cancelled(m) {
		return nil
	}
	out := outgoingOf(m)
	c.sending(m)
	resp, x, err := c.post(ctx, m, m.Parts())
	if err != nil {
		return err
	}
	return c.receive(ctx, out, resp, x)
}

// post sends msg and returns the server's answer with the exchange that
// holds it, for receive (or RoundTrip) to read and end.
func (c *StreamableConn) post(ctx context.Context, m *jsonrpc.Message, msg jsonrpc.Parts) (*http.Response, *exchange, error) {
	if err := c.usable(); err != nil {
		return nil, nil, err
	}
	x := newExchange(ctx, c.ctx)
	var resp *http.Response
	var err error
	switch {
	case c.plain != nil:
		var h http.Header
		h, x.sessioned = c.postHeader(m)
		resp, err = c.plain.Post(x, c.postTmpl.URL, h, h1.Body{msg.Head, msg.Rest, msg.Tail()})
		resp, err = followRedirect(resp, err, c.http, func() *http.Request { return c.newPOST(x, m, msg.Bytes()) })
	case c.direct != nil:
		b := msg.Bytes()
		resp, err = postDirect(c.direct, c.http, c.newPOST(x, m, b), func() *http.Request { return c.newPOST(x, m, b) })
	default:
		resp, err = c.http.Do(c.newPOST(x, m, msg.Bytes()))
	}
	if err != nil {
		x.cancel()
		switch {
		case ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case c.ctx.Err() != nil:
			return nil, nil, ErrConnClosed
		}
		return nil, nil, fmt.Errorf("mcphttp: POST: %w", err)
	}
	if c.gzip {
		gunzip(resp)
	}
	return resp, x, nil
}

// usable reports why the connection can no longer be written to.
func (c *StreamableConn) usable() error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrConnClosed
	}
	if err := c.inbox.ended(); errors.Is(err, ErrSessionExpired) {
		return err
	}
	return nil
}

// newPOST builds a POST of msg; it is every relayed call's upstream
// request, so it parses nothing and sets constant header values. A
// session's POSTs share one header map when they go straight to the
// transport, which only reads it. One through http.Client gets a copy (a
// cookie jar writes to it), and so does a sessionless request, whose
// headers are its own.
func (c *StreamableConn) newPOST(ctx context.Context, m *jsonrpc.Message, msg []byte) *http.Request {
	h, _ := c.postHeader(m)
	return newPOSTRequest(ctx, c.postTmpl, msg, h)
}

// postHeader is the header of a POST of m (see newPOST), and whether it
// carries the session id.
func (c *StreamableConn) postHeader(m *jsonrpc.Message) (http.Header, bool) {
	c.mu.Lock()
	if c.postHdr == nil {
		c.postHdr, c.slHdr = c.postHeaderLocked(), nil
		c.postGen++
	}
	h, gen := c.postHdr, c.postGen
	sessionless, version := c.sessionlessLocked(m), c.versionHdr
	c.mu.Unlock()
	if sessionless && c.direct != nil && len(m.Headers) == 0 {
		h = c.sharedSessionless(h, gen, m, version)
		return h, h[HeaderSessionID] != nil
	}
	if sessionless || c.direct == nil {
		h = withRoom(h)
	}
	if sessionless {
		c.sessionlessHeaders(h, m, version)
	}
	return h, h[HeaderSessionID] != nil
}

// postHeaderLocked is the header every POST of the session carries. The
// caller holds c.mu.
func (c *StreamableConn) postHeaderLocked() http.Header {
	h := make(http.Header, len(c.opts.Header)+5)
	for k, vs := range c.opts.Header {
		h[k] = vs
	}
	if c.sessionHdr != nil {
		h[HeaderSessionID] = c.sessionHdr
	}
	if c.versionHdr != nil {
		h[HeaderProtocolVersion] = c.versionHdr
	}
	h["Accept"] = acceptPOST
	h["Content-Type"] = contentTypeJSON
	if c.gzip {
		h["Accept-Encoding"] = acceptGzip
	}
	return h
}

func (c *StreamableConn) newGET(ctx context.Context, lastEventID string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	c.setHeaders(req)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set(headerLastEventID, lastEventID)
	}
	return req
}

func (c *StreamableConn) setHeaders(req *http.Request) {
	addHeaders(req, c.opts.Header)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID != "" {
		req.Header.Set(HeaderSessionID, c.sessionID)
	}
	if c.version != "" {
		req.Header.Set(HeaderProtocolVersion, c.version)
	}
}

// receive handles the answer to a POST.
func (c *StreamableConn) receive(ctx context.Context, out outgoing, resp *http.Response, x *exchange) error {
	ok := resp.StatusCode/100 == 2
	if ok && out.initialize {
		c.adoptSession(resp.Header.Get(HeaderSessionID))
	}
	if ok && out.initialized {
		c.listen(ctx)
	}
	ct := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case !ok:
		defer x.cancel()
		return c.refused(out, resp, sentSession(resp, x))
	case resp.StatusCode == http.StatusAccepted || len(out.requests) == 0:
		// Nothing to wait for: a requestless POST's body carries nothing.
		drain(resp.Body)
		x.cancel()
		return nil
	case ct == "application/json":
		defer x.cancel()
		return c.readJSON(ctx, out, resp.Body, resp.ContentLength)
	case ct == "text/event-stream":
		if !x.detach() { // the caller gave up while the headers came
			drain(resp.Body)
			x.cancel()
			return ctx.Err()
		}
		stop := x.cancel
		if len(out.requests) == 1 && c.Sessionless() {
			forget := c.trackStream(out.requests[0], x.cancel)
			stop = func() { forget(); x.cancel() }
		}
		c.readResponseStream(out, resp.Body, stop)
		return nil
	default:
		drain(resp.Body)
		x.cancel()
		c.fail(out.requests, resp.StatusCode, "unexpected Content-Type "+resp.Header.Get("Content-Type"))
		return nil
	}
}

// adoptSession records the session id issued at initialize.
func (c *StreamableConn) adoptSession(id string) {
	if id == "" {
		return
	}
	c.mu.Lock()
	c.sessionID = id
	c.sessionHdr = []string{id}
	c.postHdr = nil
	c.mu.Unlock()
}

// refused turns an HTTP error into answers: a 404 to a request carrying
// our session id (session) means the session is gone, and so is this
// connection.
func (c *StreamableConn) refused(out outgoing, resp *http.Response, session bool) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	status := resp.StatusCode
	expired := status == http.StatusNotFound && session
	reason := "request refused"
	if expired {
		reason = "session expired"
	}
	c.log.Debug("mcphttp client: POST refused", "status", status, "reason", reason)
	answered := c.pushServerErrors(out.requests, body)
	c.fail(unanswered(out.requests, answered), status, reason)
	if expired {
		c.inbox.end(ErrSessionExpired)
	}
	if len(out.requests) > 0 {
		return nil // the answers on Read say what happened
	}
	if expired {
		return ErrSessionExpired
	}
	return &HTTPStatusError{Method: http.MethodPost, Status: status}
}

// pushServerErrors delivers a refusal body that is a JSON-RPC error for
// one of our requests as the server wrote it: its message beats ours.
func (c *StreamableConn) pushServerErrors(ids []jsonrpc.ID, body []byte) map[string]bool {
	m, err := jsonrpc.Parse(bytes.TrimSpace(body))
	if err != nil || m.Kind() != jsonrpc.KindError || !containsID(ids, m.ID) {
		return nil
	}
	c.deliver(m)
	return map[string]bool{m.ID.Key(): true}
}

// readJSON delivers a JSON answer: one message or a batch array, pushed
// as it came.
func (c *StreamableConn) readJSON(ctx context.Context, out outgoing, body io.ReadCloser, length int64) error {
	data, err := c.readBody(ctx, body, length)
	if err != nil || len(data) > c.opts.MaxMessageBytes {
		return c.bodyFailed(ctx, out, data, err)
	}
	c.deliverJSON(out, data)
	return nil
}

// readBody reads and closes a JSON answer's body, up to one byte more
// than MaxMessageBytes.
func (c *StreamableConn) readBody(ctx context.Context, body io.ReadCloser, length int64) ([]byte, error) {
	defer body.Close()
	return readAllSized(body, length, int64(c.opts.MaxMessageBytes)+1)
}

// bodyFailed answers the requests of a body that could not be read (err)
// or was too large; it returns the caller's ctx error if that ended it.
func (c *StreamableConn) bodyFailed(ctx context.Context, out outgoing, data []byte, err error) error {
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		c.fail(out.requests, 0, "reading the response: "+err.Error())
	case len(data) > c.opts.MaxMessageBytes:
		c.log.Warn("mcphttp client: answer over the size limit; its calls are failed", "limit", c.opts.MaxMessageBytes)
		for _, id := range out.requests {
			c.deliver(mcp.TooLargeAnswer(id, c.opts.MaxMessageBytes))
		}
	}
	return nil
}

// deliverJSON queues a JSON answer, parsed once (a batch message by
// message), and a failure for each request it does not answer.
func (c *StreamableConn) deliverJSON(out outgoing, data []byte) {
	var answered map[string]bool
	ok := eachMessage(data, func(m *jsonrpc.Message) {
		if isAnswer(m) {
			if answered == nil {
				answered = map[string]bool{}
			}
			answered[m.ID.Key()] = true
		}
		c.deliver(m)
	})
	if !ok {
		c.fail(out.requests, 0, "response is not JSON-RPC")
		return
	}
	c.fail(unanswered(out.requests, answered), 0, "response did not answer the request")
}

// fail answers requests locally with an error.
func (c *StreamableConn) fail(ids []jsonrpc.ID, status int, reason string) {
	for _, id := range ids {
		c.deliver(failedCall(id, status, reason))
	}
}

// Resume takes up session id, negotiated at version by another client of
// the same server, as if this connection had initialized it: requests
// carry the id and the version, and the standalone stream is opened.
func (c *StreamableConn) Resume(ctx context.Context, id, version string) {
	c.adoptSession(id)
	c.setVersion(version)
	c.listen(ctx)
}

// Close ends the session with DELETE (a server without that answers 405,
// which is fine), stops the streams, and makes Read return io.EOF.
func (c *StreamableConn) Close() error { return c.close(true) }

// Detach is Close without the DELETE: the session stays open on the
// server, for another client that resumes it.
func (c *StreamableConn) Detach() error { return c.close(false) }

func (c *StreamableConn) close(end bool) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sessionID := c.sessionID
	c.mu.Unlock()
	c.inbox.shut()
	c.cancel()
	var err error
	if end {
		err = c.deleteSession(sessionID)
	}
	c.wg.Wait()
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
	return err
}

func (c *StreamableConn) deleteSession(id string) error {
	if id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	c.setHeaders(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("mcphttp: DELETE: %w", err)
	}
	drain(resp.Body)
	switch {
	case resp.StatusCode/100 == 2, resp.StatusCode == http.StatusMethodNotAllowed, resp.StatusCode == http.StatusNotFound:
		return nil
	default:
		return &HTTPStatusError{Method: http.MethodDelete, Status: resp.StatusCode}
	}
}
