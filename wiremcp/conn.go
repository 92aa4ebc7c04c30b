// conn.go makes one begun framed connection to an `mcpgate proxy` look like
// an MCP server connection (an mcp.Conn), so that a proxy is driven by the
// same mcp.Client, relay and restart loop as every other MCP server.
//
// The exchanges of the table (table.go) go on channels of their own, and
// the notification stream is read from the start. The proxy's MCP server
// may send its client requests during a call (tag 12: sampling,
// elicitation, roots). They reach the client as requests from the server,
// under an id of this connection's own, and their answers go back on the
// proxy's channel. Everything else the client's JSON-RPC traffic needs is
// answered here, locally:
//
//   - initialize: the proxy already holds its own upstream session, so the
//     answer is made here. A requested revision we support is echoed.
//     serverInfo is the image's DIVERGE.md name and version when it has
//     them, else the name the dialler gave. The capabilities (and the
//     instructions) are the MCP server's when it says them: Dial asks
//     server/discover on tag 9, which a server of 2026-07-28 answers.
//     Otherwise they are all the wire carries: tools, resources with
//     subscribe, prompts, completions, logging. A server without one of
//     them answers its requests -32601, which a relay takes for none. A
//     proxy that does not serve tag 9 gives only tools and resources;
//   - ping: answered while the connection lives, refused once it ended, so
//     that a liveness ping notices a dead proxy;
//   - notifications/initialized and notifications/cancelled: dropped. The
//     wire has no cancellation ("nobody cancels"): a cancelled call runs to
//     its end at the program and its answer is dropped by the client.
//
// One connection is one begin. The proxy serves one framed connection at
// a time (HTTP 409 to another while it is open); a later one re-attaches
// to the begun container. Both sides ping a quiet connection
// (Options.KeepAlive), so that a peer that vanished frees the slot.

package wiremcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/wire"
)

// wireCapabilities is what a proxy declares when its MCP server does not
// say: all the wire carries, each entry of which may change (the
// notification stream says when). seedCapabilities are what a proxy that
// serves only the seed's four exchanges carries.
const (
	wireCapabilities = `{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},` +
		`"prompts":{"listChanged":true},"completions":{},"logging":{}}`
	seedCapabilities = `{"tools":{"listChanged":true},"resources":{"listChanged":true}}`
)

// errNotServed is the message of a bare finish: the proxy received the
// exchange and does not serve it.
const errNotServed = "not served by the proxy"

// DialOptions are what Dial needs.
type DialOptions struct {
	Options
	// Name is the server's name when the image's DIVERGE.md gives none.
	Name string
	// Secrets are fed after the begin, name to value (none: no feed).
	Secrets map[string]string
	Logger  *slog.Logger
	// Postgres dials the database the program's connections are paired
	// with (pairs.go); nil declines them.
	Postgres func(context.Context) (net.Conn, error)
	// Daemon is the ws:// endpoint the program's daemon connections are
	// paired with ("": declined).
	Daemon string
}

// Conn is an mcp.Conn over one begun framed connection.
type Conn struct {
	cl    *wire.Client
	scope *wire.Scope
	info  json.RawMessage // serverInfo, an mcp.Implementation
	// caps and instructions are what initialize answers (discover).
	caps         json.RawMessage
	instructions string
	log          *slog.Logger

	ctx    context.Context // ends every exchange at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	in     *inbox

	// notes is the notification stream. order is held while a message
	// joins the inbox, so that an answer is delivered only after every
	// notification that reached us before it (a progress or log message
	// the program sent before its result must reach the client first).
	notes *wire.Channel
	order sync.Mutex
	// answers wait, under order, for readNotifications to deliver them
	// after the notifications before them; once it has returned
	// (readerGone), an answer is delivered by its exchange.
	answers    []*jsonrpc.Message
	readerGone bool
	// kick wakes readNotifications for the answers: it cancels the
	// context of its wait, or makes its next wait return at once.
	kickMu     sync.Mutex
	kicked     bool
	kickCtx    context.Context
	kickCancel context.CancelFunc

	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool  // Close was called
	reason    error // set by fail: why the connection ended
	// asked are the server requests (tag 12) given to the client and not
	// yet answered, by the id they were given (askedID).
	asked   map[string]chan *jsonrpc.Message
	askedID uint64

	postgres func(context.Context) (net.Conn, error)
	daemon   string
}

// Dial dials the proxy at url, begins it, feeds it the secrets, reads
// its Info and opens the notification stream; ctx bounds all of that. A
// refusal of the begin or of the secrets is a *RefusedError.
func Dial(ctx context.Context, url string, o DialOptions) (_ *Conn, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// The channels the proxy opens are served once c exists; one that
	// comes before (none should: the proxy asks only during an exchange)
	// gets a bare finish.
	var conn atomic.Pointer[Conn]
	o.Channels = wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		if c := conn.Load(); c != nil {
			c.serveProxyChannel(ctx, r, p)
		}
	})
	s, err := Begin(ctx, url, o.Options)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	if len(o.Secrets) > 0 {
		if err := s.FeedSecrets(ctx, o.Secrets); err != nil {
			return nil, err
		}
	}
	c := &Conn{cl: s.Client, scope: s.Scope, log: o.Logger, in: newInbox(), asked: map[string]chan *jsonrpc.Message{},
		postgres: o.Postgres, daemon: o.Daemon}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	conn.Store(c)
	c.info = serverInfo(ctx, s, o.Name)
	c.caps, c.instructions = discover(ctx, s)
	notes, err := s.Notifications(ctx)
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	c.notes = notes
	c.wg.Add(2)
	go c.readNotifications()
	go c.watch()
	return c, nil
}

// discover asks the MCP server behind the proxy for its capabilities and
// instructions (server/discover, tag 9). A server of 2026-07-28 says them.
// For one that does not, the capabilities are all the wire carries, or the
// seed's from a proxy that does not serve tag 9.
func discover(ctx context.Context, s *Session) (caps json.RawMessage, instructions string) {
	resp, err := s.Exchange(ctx, "server/discover", nil)
	switch {
	case errors.Is(err, wire.ErrBareFinish):
		return json.RawMessage(seedCapabilities), ""
	case err != nil || resp.Error != nil:
		return json.RawMessage(wireCapabilities), ""
	}
	caps, _ = jsonrpc.Lookup(resp.Result, "capabilities")
	if len(caps) == 0 || caps[0] != '{' {
		return json.RawMessage(wireCapabilities), ""
	}
	instructions, _ = jsonrpc.LookupString(resp.Result, "instructions")
	return caps, instructions
}

// serverInfo takes the image's name and version from its DIVERGE.md;
// without them the server is named name.
func serverInfo(ctx context.Context, s *Session, name string) json.RawMessage {
	info := mcp.Implementation{Name: name, Version: "unknown"}
	if ans, err := s.Info(ctx); err == nil && ans.Document != nil {
		var doc struct {
			Name    any `json:"name"`
			Version any `json:"version"`
		}
		if json.Unmarshal(ans.Document, &doc) == nil {
			if s, ok := doc.Name.(string); ok && s != "" {
				info.Name = s
			}
			if doc.Version != nil {
				info.Version = fmt.Sprint(doc.Version)
			}
		}
	}
	b, _ := json.Marshal(info)
	return b
}

// End ends the connection for reason (the first reason given wins): what
// a dialler that watches more than the wire (a process backend's child
// processes) calls when something it watches ended.
func (c *Conn) End(reason error) {
	c.fail(reason)
	_ = c.cl.Close()
}

// Closed is closed once Close has been called.
func (c *Conn) Closed() <-chan struct{} { return c.ctx.Done() }

// watch ends the inbox when the connection ends.
func (c *Conn) watch() {
	defer c.wg.Done()
	select {
	case <-c.cl.Done():
		c.fail(c.cl.Err())
	case <-c.ctx.Done():
	}
}

// fail records why the connection ended (the first reason wins) and lets
// Read report it once the inbox is drained.
func (c *Conn) fail(reason error) {
	c.mu.Lock()
	if c.reason == nil && !c.closed {
		c.reason = reason
	}
	c.mu.Unlock()
	c.in.end()
}

func (c *Conn) ended() bool {
	select {
	case <-c.cl.Done():
		return true
	case <-c.ctx.Done():
		return true
	default:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason != nil || c.closed
}

// Write takes one JSON-RPC message from the client, as the client built it.
// A request is answered locally or sent on its own channel. An answer goes
// back to the server request it answers (tag 12). Notifications are
// dropped: the wire carries none of them.
func (c *Conn) Write(_ context.Context, m *jsonrpc.Message) error {
	if c.ended() {
		return errors.New("the connection to the proxy has ended")
	}
	switch m.Kind() {
	case jsonrpc.KindResult, jsonrpc.KindError:
		c.answered(m)
		return nil
	case jsonrpc.KindNotification:
		return nil // notifications/initialized, notifications/cancelled
	}
	switch m.Method {
	case "initialize":
		c.in.push(jsonrpc.NewResult(bytes.Clone(m.ID), c.initializeResult(m.Params)))
	case "ping":
		c.in.push(jsonrpc.NewResult(bytes.Clone(m.ID), json.RawMessage("{}")))
	default:
		if _, ok := ChannelRequest(m.Method, nil); !ok {
			c.in.push(jsonrpc.NewErrorResponse(bytes.Clone(m.ID), jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "%s is not carried by the wire", m.Method)))
			return nil
		}
		m = m.Clone() // m is the caller's again once Write returns
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return errors.New("the connection to the proxy has ended")
		}
		c.wg.Add(1) // under mu: Close waits only after closed is set
		c.mu.Unlock()
		req, _ := ChannelRequest(m.Method, m.Params)
		go c.exchange(m.ID, req)
	}
	return nil
}

// initializeResult echoes a requested revision we support.
func (c *Conn) initializeResult(params json.RawMessage) json.RawMessage {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	b := []byte(`{"protocolVersion":`)
	b = jsonrpc.AppendString(b, mcp.NegotiateVersion(p.ProtocolVersion))
	b = append(b, `,"capabilities":`...)
	b = append(b, c.caps...)
	if c.instructions != "" {
		b = append(b, `,"instructions":`...)
		b = jsonrpc.AppendString(b, c.instructions)
	}
	b = append(b, `,"serverInfo":`...)
	b = append(b, c.info...)
	return append(b, '}')
}

// exchange runs one MCP exchange on its own channel and turns its answer
// into the JSON-RPC response to id, the result's bytes untouched.
func (c *Conn) exchange(id jsonrpc.ID, req wire.ChannelRequest) {
	defer c.wg.Done()
	ch, err := c.scope.OpenChannel(c.ctx, req.Append(nil))
	if err != nil {
		c.in.push(jsonrpc.NewErrorResponse(id, jsonrpc.Errorf(jsonrpc.CodeInternalError, "the connection to the proxy has ended")))
		return
	}
	p, err := ch.Next(c.ctx)
	var out *jsonrpc.Message
	var tooLarge *wire.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		out = mcp.TooLargeAnswer(id, int(tooLarge.Limit))
	case errors.Is(err, wire.ErrBareFinish):
		if r, ok := req.(wire.McpRequest); ok {
			// A proxy that does not serve tag 9 (or this method on it):
			// the method is not there.
			out = jsonrpc.NewErrorResponse(id, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "%s: %s", r.Method, errNotServed))
			break
		}
		out = jsonrpc.NewErrorResponse(id, jsonrpc.Errorf(jsonrpc.CodeInternalError, errNotServed))
	case err != nil:
		out = jsonrpc.NewErrorResponse(id, jsonrpc.Errorf(jsonrpc.CodeInternalError, "the connection to the proxy has ended"))
	default:
		resp, derr := wire.DecodeResponse(p)
		switch {
		case derr != nil:
			out = jsonrpc.NewErrorResponse(id, jsonrpc.Errorf(jsonrpc.CodeInternalError, "unreadable answer from the proxy: %v", derr))
		case resp.Error != nil:
			out = jsonrpc.NewErrorResponse(id, resp.Error)
		default:
			out = jsonrpc.NewResult(id, resp.Result)
		}
	}
	c.deliverAnswer(out)
}

// Read returns the next answer or notification; after the connection
// ends, io.EOF (closed by us) or why it ended.
func (c *Conn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	msg, ok, err := c.in.pop(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		return msg, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reason != nil {
		// %v, not %w: the reason often wraps io.EOF, which the client
		// would take for a clean close and report as nothing.
		return nil, fmt.Errorf("proxy connection ended: %v", c.reason)
	}
	return nil, io.EOF
}

// Close ends the connection and waits for every exchange to return.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cancel()
		err = c.cl.Close()
		c.wg.Wait()
		c.in.end()
	})
	return err
}
