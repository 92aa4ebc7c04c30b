// client.go is the client side of the engine. It reaches an MCP server over
// any Conn and matches answers to calls. It answers the server's own
// requests (sampling, elicitation, roots) through a handler the caller
// supplies, which is how a gateway relays them to the client that caused
// them.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A Conn carries JSON-RPC messages between a Client and a server, parsed. A
// transport parses what it reads once (it must, to know what a message
// answers) and hands the Client that parse. It gets the Client's messages
// as they were built, so nothing encodes what it will parse a moment later.
// Payloads stay raw bytes. Client transports (stdio, Streamable HTTP,
// legacy SSE, the container wire) implement it.
type Conn interface {
	// Write sends one message; m is the caller's again once Write
	// returns.
	Write(ctx context.Context, m *jsonrpc.Message) error
	// Read returns the next message from the server (a batch the server
	// sent is read one message at a time); the caller owns it. It
	// returns io.EOF once the connection is closed.
	Read(ctx context.Context) (*jsonrpc.Message, error)
	Close() error
}

// ClientOptions configures a Client.
type ClientOptions struct {
	Info Implementation
	// Capabilities declared at initialize (raw JSON; default {}).
	Capabilities json.RawMessage
	// ProtocolVersion requested at initialize (default LatestVersion).
	ProtocolVersion string
	// OnRequest answers the server's requests. nil answers -32601.
	OnRequest func(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error)
	// OnNotification receives the server's notifications, in order; it must
	// not block for long.
	OnNotification func(m *jsonrpc.Message)
	Logger         *slog.Logger
}

// Client is one session with an MCP server.
type Client struct {
	conn Conn
	rt   RoundTripConn // conn, when it can return answers at once
	opts ClientOptions
	log  *slog.Logger

	nextID atomic.Int64
	mu     sync.Mutex
	calls  map[int64]*pending // by the call's number, its id
	err    error
	done   chan struct{}
	wg     sync.WaitGroup

	initResult  json.RawMessage // or the server/discover result (client_era.go)
	version     string
	sessionless bool
	metaHead    []byte // SessionlessMeta
	infoJSON    []byte // opts.Info, encoded once
}

// ErrClosed is returned by calls on a closed client.
var ErrClosed = errors.New("mcp: client closed")

// NewClient starts a client on conn; call Initialize next.
func NewClient(conn Conn, opts ClientOptions) *Client {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ProtocolVersion == "" {
		opts.ProtocolVersion = LatestVersion
	}
	if opts.Capabilities == nil {
		opts.Capabilities = emptyResult
	}
	c := &Client{conn: conn, opts: opts, log: opts.Logger, calls: map[int64]*pending{}, done: make(chan struct{})}
	c.infoJSON, _ = json.Marshal(opts.Info)
	c.rt, _ = conn.(RoundTripConn)
	c.wg.Add(1)
	go c.readLoop()
	return c
}

// Initialize performs the handshake and returns the server's raw result.
func (c *Client) Initialize(ctx context.Context) (json.RawMessage, error) {
	params, _ := json.Marshal(struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      Implementation  `json:"clientInfo"`
	}{c.opts.ProtocolVersion, c.opts.Capabilities, c.opts.Info})
	res, err := c.Call(ctx, "initialize", params)
	if err != nil {
		return nil, err
	}
	v, _ := jsonrpc.LookupString(res, "protocolVersion")
	if !IsSupportedVersion(v) {
		return nil, fmt.Errorf("mcp: server answered unsupported protocol version %q", v)
	}
	c.mu.Lock()
	c.initResult, c.version = res, v
	c.mu.Unlock()
	if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		return nil, err
	}
	return res, nil
}

// Resume takes up a session another client initialized: another replica of
// a gateway, whose state travels in a sealed id. No initialize is sent. The
// revision is version, and the server's result is initResult, which may be
// the answer to initialize on another connection to the same server. The
// connection must carry the session already
// (mcphttp.StreamableConn.Resume).
func (c *Client) Resume(version string, initResult json.RawMessage) {
	c.mu.Lock()
	c.initResult, c.version = initResult, version
	c.mu.Unlock()
}

// InitializeResult is the server's answer to initialize, or to
// server/discover for a sessionless server (both name its capabilities,
// instructions and identity).
func (c *Client) InitializeResult() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initResult
}

// ProtocolVersion is the negotiated revision.
func (c *Client) ProtocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Outbound is one request a Client sends on a caller's behalf. Whoever
// relays it builds it once and passes it explicitly: the method and params,
// the _meta members to set on it, and the headers a transport that has
// headers sends with it.
type Outbound struct {
	Method string
	Params json.RawMessage
	// Meta holds encoded "key":value members, comma separated, set first
	// in the params' _meta; MetaKeys are their keys, whose old values are
	// dropped. A trace context travels upstream this way.
	Meta     []byte
	MetaKeys []string
	// Headers are name, value pairs (a call's Mcp-Param headers).
	// Transports without headers ignore them.
	Headers [][2]string
}

// Call sends a request and returns the raw result. A JSON-RPC error from the
// server is returned as a *jsonrpc.Error holding the server's raw bytes; a
// failure the transport made is a *TransportError.
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.Send(ctx, &Outbound{Method: method, Params: params})
}

// Send is Call for a request with _meta members or headers of its own.
func (c *Client) Send(ctx context.Context, o *Outbound) (json.RawMessage, error) {
	m, err := c.roundtrip(ctx, o)
	if err != nil {
		return nil, err
	}
	if m.Local != nil {
		return nil, m.Local
	}
	if m.Error != nil {
		return nil, jsonrpc.RawError(m.Error)
	}
	return m.Result, nil
}

// Roundtrip sends a request and returns the whole response message. If ctx
// ends first, the server is sent notifications/cancelled.
func (c *Client) Roundtrip(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Message, error) {
	return c.roundtrip(ctx, &Outbound{Method: method, Params: params})
}

// pending is one call awaiting its answer: the request, its id's digits
// and where the answer lands, in one allocation with the channel that
// says it landed (an answer a transport returns at once needs none).
type pending struct {
	msg    jsonrpc.Message
	idBuf  [20]byte
	answer *jsonrpc.Message // set under Client.mu, and then done closed if made
	// done is made, under Client.mu, only when the answer does not come
	// back from send itself: most answers do, and then no channel is made.
	done chan struct{}
}

// callNumber is the number an id of plain digits spells (the client's
// own calls are numbered so; a session keys requests in flight by it);
// false for any other id.
func callNumber(id jsonrpc.ID) (int64, bool) {
	if len(id) == 0 || len(id) > 18 {
		return 0, false
	}
	var n int64
	for _, d := range id {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}

func (c *Client) roundtrip(ctx context.Context, o *Outbound) (*jsonrpc.Message, error) {
	method, params := o.Method, o.Params
	n := c.nextID.Add(1)
	p := &pending{}
	id := jsonrpc.ID(strconv.AppendInt(p.idBuf[:0], n, 10))
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.calls[n] = p
	sessionless, version := c.sessionless, c.version
	c.mu.Unlock()
	if method == "server/discover" && !sessionless && version == "" {
		// The probe. After initialize it is a request of the session.
		sessionless, version = true, LatestSessionlessVersion()
	}
	if sessionless {
		params = c.stampSessionless(params, version, o)
	} else if len(o.Meta) > 0 {
		params = WithMeta(params, o.Meta, o.keepMeta)
	}
	defer func() {
		c.mu.Lock()
		delete(c.calls, n)
		c.mu.Unlock()
	}()
	p.msg = jsonrpc.Message{ID: id, Method: method, Params: params, Headers: o.Headers}
	answer, err := c.send(ctx, &p.msg)
	if err != nil {
		return nil, err
	}
	if answer != nil {
		return answer, nil
	}
	c.mu.Lock()
	answer = p.answer // delivered by the reader while send ran
	if answer == nil {
		p.done = make(chan struct{})
	}
	c.mu.Unlock()
	if answer != nil {
		return answer, nil
	}
	select {
	case <-p.done:
		return p.answer, nil
	case <-ctx.Done():
		cancel := `{"requestId":` + string(id) + `,"reason":"` + ctx.Err().Error() + `"}`
		_ = c.Notify(context.WithoutCancel(ctx), "notifications/cancelled", json.RawMessage(cancel))
		return nil, ctx.Err()
	case <-c.done:
		// An answer queued just before the connection ended still counts.
		select {
		case <-p.done:
			return p.answer, nil
		default:
			return nil, c.Err()
		}
	}
}

// Notify sends a notification (with the revision in _meta, to a
// sessionless server).
func (c *Client) Notify(ctx context.Context, method string, params json.RawMessage) error {
	c.mu.Lock()
	sessionless, version := c.sessionless, c.version
	c.mu.Unlock()
	if sessionless {
		params = c.stampSessionless(params, version, &Outbound{})
	}
	return c.conn.Write(ctx, &jsonrpc.Message{Method: method, Params: params})
}

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err says why the connection ended (nil while it is up).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection and waits for the client's goroutines.
func (c *Client) Close() error {
	err := c.conn.Close()
	c.wg.Wait()
	return err
}

func (c *Client) readLoop() {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		m, err := c.conn.Read(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrClosed
			}
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			close(c.done)
			return
		}
		c.dispatch(ctx, m)
	}
}

func (c *Client) dispatch(ctx context.Context, m *jsonrpc.Message) {
	switch m.Kind() {
	case jsonrpc.KindResult, jsonrpc.KindError:
		n, ok := callNumber(m.ID)
		c.mu.Lock()
		p := c.calls[n]
		if ok && p != nil && p.answer == nil {
			p.answer = m // the first answer counts
			if p.done != nil {
				close(p.done)
			}
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.log.Debug("mcp client: answer to no pending call", "id", string(m.ID))
	case jsonrpc.KindNotification:
		if c.opts.OnNotification != nil {
			c.opts.OnNotification(m)
		}
	case jsonrpc.KindRequest:
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.answer(ctx, m)
		}()
	}
}

// answer serves one server-to-client request.
func (c *Client) answer(ctx context.Context, m *jsonrpc.Message) {
	var out *jsonrpc.Message
	if m.Method == "ping" {
		out = jsonrpc.NewResult(m.ID, emptyResult)
	} else if c.opts.OnRequest == nil {
		out = jsonrpc.NewErrorResponse(m.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", m.Method))
	} else {
		res, err := c.opts.OnRequest(ctx, m)
		var je *jsonrpc.Error
		switch {
		case err == nil:
			out = jsonrpc.NewResult(m.ID, res)
		case errors.As(err, &je):
			out = jsonrpc.NewErrorResponse(m.ID, je)
		default:
			c.log.Warn("mcp client: request handler failed", "method", m.Method, "err", err)
			out = jsonrpc.NewErrorResponse(m.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error"))
		}
	}
	if err := c.conn.Write(ctx, out); err != nil {
		c.log.Debug("mcp client: answer not sent", "method", m.Method, "err", err)
	}
}
