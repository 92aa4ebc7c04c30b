// upstream.go is the proxy's one MCP session with the server it relays to
// (docs/wire.md §4). The session is dialled on the first exchange, not at start
// — the program may still be booting, or waiting for its secrets — and kept
// while it lives. An exchange is sent exactly once: when its session dies
// under it, the caller hears why (TransportError) and the next exchange
// dials afresh. Results and errors are the server's bytes, untouched.

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// UpstreamConfig chooses the upstream.
type UpstreamConfig struct {
	Kind upstream.Kind
	// URL is the MCP endpoint (http, sse) or the contract program's base
	// URL (contract; default ContractURL of $PORT).
	URL string
	// Command is the stdio server and its arguments.
	Command []string
	// Env is the stdio server's environment before secrets are added (nil:
	// the proxy's own).
	Env    []string
	Logger *slog.Logger
	// HTTPClient reaches HTTP upstreams and the contract program. The
	// caller owns it; without one the Upstream makes its own
	// (mcphttp.NewHTTPClient) and closes it with itself.
	HTTPClient *http.Client
	// NotificationBuffer is each subscriber's buffer (default 64).
	NotificationBuffer int
	// Restart is the stdio server's restart backoff (zero: defaults).
	Restart upstream.Backoff
	// ClientInfo is what the proxy calls itself at initialize.
	ClientInfo mcp.Implementation
	// Era is what the proxy speaks to the server: mcp.EraAuto (default:
	// server/discover, then initialize), mcp.EraSession or
	// mcp.EraSessionless. A legacy SSE upstream is of the session era.
	Era mcp.Era
}

// ContractURL is where a contract program listens: 127.0.0.1 on port (the
// value of $PORT; "" means the default 8080).
func ContractURL(port string) string {
	if port == "" {
		port = "8080"
	}
	return "http://127.0.0.1:" + port
}

// Upstream is the MCP session with the server the proxy relays to. It is
// safe for concurrent use; exchanges on it run in parallel.
type Upstream struct {
	cfg      UpstreamConfig
	log      *slog.Logger
	dial     func(context.Context) (mcp.Conn, error)
	sup      *Supervisor // stdio only
	contract *Contract   // contract only
	hub      *hub
	ownHTTP  *http.Client // made by NewUpstream when the config gave none; closed with it

	dialing chan struct{} // one dial at a time
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup // session watchers and closers

	mu       sync.Mutex
	current  *session
	sessions map[*session]struct{} // not yet closed
	closed   bool

	// ask answers what the MCP server asks of its client (sampling,
	// elicitation, roots): the Server relays it to the gateway. nil
	// until set, and then the sessions dialled declare those
	// capabilities.
	ask atomic.Pointer[AskFunc]

	// level is what logging/setLevel last set, for a sessionless
	// upstream (sessionless.go); inputs numbers the inputs asked for.
	level  atomic.Pointer[mcp.LogLevel]
	inputs atomic.Uint64
	// subs are the resources subscribed to on a sessionless upstream;
	// subsChanged is closed when they change; awaiting are the subscribes
	// waiting for a listen acknowledged with their change (sessionless.go).
	subMu       sync.Mutex
	subs        map[string]struct{}
	subsChanged chan struct{}
	awaiting    []subWait
}

// AskFunc answers one request the MCP server sent its client, with the
// client's raw result or a *jsonrpc.Error.
type AskFunc func(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error)

// SetAsk makes f the answer to the server's requests in the sessions
// dialled from now on (Server does, at NewServer).
func (u *Upstream) SetAsk(f AskFunc) { u.ask.Store(&f) }

// NewUpstream validates cfg and returns an Upstream. Nothing is dialled
// and no process is started until the first exchange (or Connect, or a
// secrets feed for stdio).
func NewUpstream(cfg UpstreamConfig) (*Upstream, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var ownHTTP *http.Client
	if cfg.HTTPClient == nil {
		ownHTTP = mcphttp.NewHTTPClient()
		cfg.HTTPClient = ownHTTP
	}
	u := &Upstream{cfg: cfg, log: cfg.Logger, ownHTTP: ownHTTP, dialing: make(chan struct{}, 1), sessions: map[*session]struct{}{}}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	u.hub = newHub(cfg.NotificationBuffer, cfg.Logger)
	httpOpts := mcphttp.ClientOptions{HTTPClient: cfg.HTTPClient, Logger: cfg.Logger}
	switch cfg.Kind {
	case upstream.KindHTTP:
		u.dial = func(ctx context.Context) (mcp.Conn, error) { return mcphttp.DialStreamable(ctx, cfg.URL, httpOpts) }
	case upstream.KindSSE:
		u.dial = func(ctx context.Context) (mcp.Conn, error) { return mcphttp.DialSSE(ctx, cfg.URL, httpOpts) }
	case upstream.KindContract:
		u.contract = NewContract(cfg.URL, cfg.HTTPClient)
		u.dial = func(ctx context.Context) (mcp.Conn, error) {
			return mcphttp.DialStreamable(ctx, cfg.URL+"/mcp", httpOpts)
		}
	case upstream.KindStdio:
		u.sup, err = NewSupervisor(cfg.Command, SupervisorOptions{Env: cfg.Env, Logger: cfg.Logger, Backoff: cfg.Restart})
		if err != nil {
			return nil, err
		}
		u.dial = u.sup.Dial
	}
	return u, nil
}

func (c UpstreamConfig) withDefaults() (UpstreamConfig, error) {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ClientInfo.Name == "" {
		c.ClientInfo = mcp.Implementation{Name: "mcpgate-proxy", Version: "1"}
	}
	switch c.Kind {
	case upstream.KindHTTP, upstream.KindSSE:
		if err := checkHTTPURL(c.URL); err != nil {
			return c, fmt.Errorf("proxy: upstream URL: %w", err)
		}
	case upstream.KindContract:
		if c.URL == "" {
			c.URL = ContractURL(os.Getenv("PORT"))
		}
		if err := checkHTTPURL(c.URL); err != nil {
			return c, fmt.Errorf("proxy: upstream URL: %w", err)
		}
	case upstream.KindStdio:
		if len(c.Command) == 0 || c.Command[0] == "" {
			return c, errors.New("proxy: upstream Command: a stdio upstream needs a command")
		}
	default:
		return c, fmt.Errorf("proxy: upstream Kind %q: want http, sse, stdio or contract", c.Kind)
	}
	return c, nil
}

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL", raw)
	}
	return nil
}

// Exchange sends one request and returns the server's result, or its
// JSON-RPC error (rpcErr.Raw() is the server's object, byte for byte), or
// err when there was no answer: *UnreachableError, *TransportError,
// ErrClosed, or the caller's ctx.Err(). JSON null params are sent as none.
func (u *Upstream) Exchange(ctx context.Context, method string, params json.RawMessage) (result json.RawMessage, rpcErr *jsonrpc.Error, err error) {
	if t := bytes.TrimSpace(params); len(t) == 0 || string(t) == "null" {
		params = nil
	}
	s, err := u.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer u.release(s)
	var res json.RawMessage
	if s.sessionless {
		res, err = u.exchangeSessionless(ctx, s, method, params)
	} else {
		res, err = s.client.Call(ctx, method, params)
	}
	if err == nil {
		return res, nil, nil
	}
	var te *mcp.TransportError
	if !errors.As(err, &te) && errors.As(err, &rpcErr) {
		return nil, rpcErr, nil // the server's own word
	}
	switch {
	case ctx.Err() != nil:
		return nil, nil, ctx.Err() // the caller left; the session is fine
	case u.isClosed():
		return nil, nil, ErrClosed
	}
	u.retire(s)
	return nil, nil, &TransportError{Method: method, Err: s.explain(err)}
}

// Connect makes sure there is a live session, dialling one if needed: what
// a notification stream calls to learn whether the server can be reached.
func (u *Upstream) Connect(ctx context.Context) error {
	s, err := u.acquire(ctx)
	if err != nil {
		return err
	}
	u.release(s)
	return nil
}

// Subscribe opens a notification stream: every notification the server
// sends from now on, on any session, as the whole JSON-RPC message. The
// channel is buffered; when it is full the oldest message is dropped (see
// notify.go). cancel closes it; so does Close.
func (u *Upstream) Subscribe() (<-chan json.RawMessage, func()) { return u.hub.subscribe() }

// DroppedNotifications counts notifications dropped for slow subscribers.
func (u *Upstream) DroppedNotifications() uint64 { return u.hub.dropped.Load() }

// FeedSecrets hands the secrets' values to the program: POST /secrets for
// a contract program (refusal is its answer when it refuses), a restart
// with them in the environment for stdio. For a URL upstream it returns
// ErrNoProgram.
func (u *Upstream) FeedSecrets(ctx context.Context, values map[string]string) (refusal json.RawMessage, err error) {
	switch {
	case u.contract != nil:
		return u.contract.FeedSecrets(ctx, values)
	case u.sup != nil:
		return nil, u.sup.Feed(ctx, values)
	default:
		return nil, ErrNoProgram
	}
}

// Contract is the contract program's client (nil unless Kind is contract).
func (u *Upstream) Contract() *Contract { return u.contract }

// Close ends the session (exchanges in flight fail with ErrClosed), stops a
// supervised program, and closes every notification stream.
func (u *Upstream) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	u.current = nil
	live := make([]*session, 0, len(u.sessions))
	for s := range u.sessions {
		live = append(live, s)
	}
	u.mu.Unlock()
	u.cancel()
	if u.sup != nil {
		// First, so that the sessions' ends below are not taken for a
		// crash worth a restart.
		_ = u.sup.Close()
	}
	for _, s := range live {
		s.close()
	}
	u.hub.close()
	u.wg.Wait()
	if u.ownHTTP != nil {
		u.ownHTTP.CloseIdleConnections()
	}
	return nil
}

func (u *Upstream) isClosed() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.closed
}
