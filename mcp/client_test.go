// client_test.go runs mcp.Client against mcp.Server in-process, through a
// pipe that plays the transport on both ends: the handshake, raw results
// and errors, the server's own requests answered by OnRequest, and
// cancellation carried to the server as notifications/cancelled.

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// pipe is a Conn for the client and a Sink for the server session: what
// the client writes is handed to the session as a transport would (each
// request on its own goroutine), and what the session sends is what the
// client reads.
type pipe struct {
	sess     *mcp.Session
	toClient chan []byte
	closed   chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc

	mu       sync.Mutex
	isClosed bool
	wg       sync.WaitGroup
	written  []string // methods of what the client wrote
}

func newPipe(srv *mcp.Server) *pipe {
	p := &pipe{toClient: make(chan []byte), closed: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.sess = srv.NewSession(mcp.SessionOptions{ID: "pipe", Out: p})
	return p
}

// Send is the server side: one message to the client.
func (p *pipe) Send(_ context.Context, msg []byte) error {
	select {
	case p.toClient <- append([]byte(nil), msg...):
		return nil
	case <-p.closed:
		return io.ErrClosedPipe
	}
}

func (p *pipe) Write(_ context.Context, msg *jsonrpc.Message) error {
	m := msg.Clone() // the caller's again once Write returns
	p.mu.Lock()
	if p.isClosed {
		p.mu.Unlock()
		return io.ErrClosedPipe
	}
	p.written = append(p.written, m.Method)
	if !m.IsRequest() {
		p.mu.Unlock()
		p.sess.Handle(p.ctx, m, p) // notifications and answers, in order
		return nil
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		if answer := p.sess.Handle(p.ctx, m, p); answer != nil {
			_ = p.Send(p.ctx, answer)
		}
	}()
	return nil
}

func (p *pipe) Read(ctx context.Context) (*jsonrpc.Message, error) {
	select {
	case b := <-p.toClient:
		return jsonrpc.Parse(b)
	case <-p.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipe) Close() error {
	p.mu.Lock()
	if p.isClosed {
		p.mu.Unlock()
		return nil
	}
	p.isClosed = true
	close(p.closed)
	p.mu.Unlock()
	p.cancel()
	p.sess.Close()
	p.wg.Wait()
	return nil
}

func (p *pipe) clientWrote() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.written)
}

// bounded is a context for one client call: a deadlock in the engine
// fails the test instead of hanging it.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// connect starts a client on a pipe to srv, initialized.
func connect(t *testing.T, srv *mcp.Server, opts mcp.ClientOptions) (*mcp.Client, *pipe) {
	t.Helper()
	p := newPipe(srv)
	c := mcp.NewClient(p, opts)
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(bounded(t)); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	return c, p
}

func TestClientInitialize(t *testing.T) {
	tests := []struct {
		name, asked, want string
	}{
		{"the latest revision by default", "", mcp.LatestVersion},
		{"an older revision the server speaks", mcp.Version20250618, mcp.Version20250618},
		{"an unknown revision gets the server's newest", "2099-01-01", mcp.LatestVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{Info: mcp.Implementation{Name: "srv", Version: "9"}})
			c, p := connect(t, srv, mcp.ClientOptions{Info: mcp.Implementation{Name: "cli", Version: "1"}, ProtocolVersion: tt.asked})
			if c.ProtocolVersion() != tt.want || p.sess.Version() != tt.want {
				t.Fatalf("client %q, server %q, want %q", c.ProtocolVersion(), p.sess.Version(), tt.want)
			}
			res := decode[initResult](t, c.InitializeResult())
			if res.ServerInfo.Name != "srv" {
				t.Fatalf("initialize result %s", c.InitializeResult())
			}
			if got := p.clientWrote(); !slices.Equal(got, []string{"initialize", "notifications/initialized"}) {
				t.Fatalf("client wrote %v", got)
			}
		})
	}
}

func TestClientCall(t *testing.T) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":123456789012345678901234567890},"unknown":{ "kept" : true }}`)
	rawErr := `{"code":-32099,"message":"backend","data":{"n":98765432109876543210987654321},"extra":1}`
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(
		rawTool("raw", raw, nil),
		rawTool("fails", nil, jsonrpc.RawError(json.RawMessage(rawErr))),
	))
	c, _ := connect(t, srv, mcp.ClientOptions{})

	t.Run("a result comes back raw", func(t *testing.T) {
		got, err := c.Call(bounded(t), "tools/call", json.RawMessage(`{"name":"raw"}`))
		if err != nil || string(got) != string(raw) {
			t.Fatalf("Call = %s, %v", got, err)
		}
	})
	t.Run("an error comes back as *jsonrpc.Error with its bytes", func(t *testing.T) {
		_, err := c.Call(bounded(t), "tools/call", json.RawMessage(`{"name":"fails"}`))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != -32099 || string(je.Raw()) != rawErr {
			t.Fatalf("Call error %v", err)
		}
	})
	t.Run("an engine error comes back as *jsonrpc.Error", func(t *testing.T) {
		_, err := c.Call(bounded(t), "tools/call", json.RawMessage(`{"name":"nope"}`))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("Call error %v", err)
		}
	})
	t.Run("calls after Close fail", func(t *testing.T) {
		srv := newServer(t, mcp.Options{})
		c, _ := connect(t, srv, mcp.ClientOptions{})
		c.Close()
		<-c.Done()
		if _, err := c.Call(bounded(t), "ping", nil); !errors.Is(err, mcp.ErrClosed) {
			t.Fatalf("Call after Close: %v", err)
		}
		if !errors.Is(c.Err(), mcp.ErrClosed) {
			t.Fatalf("Err %v", c.Err())
		}
	})
}

func TestClientAnswersServerRequests(t *testing.T) {
	type outcome struct {
		res json.RawMessage
		err error
	}
	outcomes := make(chan outcome, 1)
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{Name: "ask", Handler: func(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
		method, _ := jsonrpc.LookupString(args, "method")
		res, err := r.Call(ctx, method, json.RawMessage(`{"messages":[]}`))
		outcomes <- outcome{res, err}
		return json.RawMessage(`{"content":[]}`), nil
	}}))
	ask := func(t *testing.T, c *mcp.Client, method string) outcome {
		t.Helper()
		if _, err := c.Call(bounded(t), "tools/call", json.RawMessage(`{"name":"ask","arguments":{"method":"`+method+`"}}`)); err != nil {
			t.Fatal(err)
		}
		return wait(t, outcomes, "the server's call")
	}

	t.Run("OnRequest answers", func(t *testing.T) {
		var seen []string
		var mu sync.Mutex
		c, _ := connect(t, srv, mcp.ClientOptions{OnRequest: func(_ context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
			mu.Lock()
			seen = append(seen, m.Method+" "+string(m.Params))
			mu.Unlock()
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}`), nil
		}})
		got := ask(t, c, "sampling/createMessage")
		if got.err != nil || string(got.res) != `{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}` {
			t.Fatalf("server's call = %s, %v", got.res, got.err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(seen, []string{`sampling/createMessage {"messages":[]}`}) {
			t.Fatalf("OnRequest saw %v", seen)
		}
	})
	t.Run("OnRequest's *jsonrpc.Error reaches the server", func(t *testing.T) {
		c, _ := connect(t, srv, mcp.ClientOptions{OnRequest: func(context.Context, *jsonrpc.Message) (json.RawMessage, error) {
			return nil, jsonrpc.NewError(-1, "user declined", nil)
		}})
		got := ask(t, c, "elicitation/create")
		var je *jsonrpc.Error
		if !errors.As(got.err, &je) || je.Code != -1 || je.Message != "user declined" {
			t.Fatalf("server's call error %v", got.err)
		}
	})
	t.Run("without OnRequest the client answers -32601", func(t *testing.T) {
		c, _ := connect(t, srv, mcp.ClientOptions{})
		got := ask(t, c, "roots/list")
		var je *jsonrpc.Error
		if !errors.As(got.err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
			t.Fatalf("server's call error %v", got.err)
		}
	})
	t.Run("the client answers ping itself", func(t *testing.T) {
		c, _ := connect(t, srv, mcp.ClientOptions{OnRequest: func(context.Context, *jsonrpc.Message) (json.RawMessage, error) {
			return nil, errors.New("OnRequest must not see ping")
		}})
		if got := ask(t, c, "ping"); got.err != nil || string(got.res) != `{}` {
			t.Fatalf("ping = %s, %v", got.res, got.err)
		}
	})
}

func TestClientReceivesNotificationsInOrder(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{Name: "chatty", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		for _, l := range []mcp.LogLevel{mcp.LevelInfo, mcp.LevelWarning} {
			if err := r.Log(ctx, l, "", string(l)); err != nil {
				return nil, err
			}
		}
		return json.RawMessage(`{"content":[]}`), nil
	}}))
	var mu sync.Mutex
	var got []string
	c, _ := connect(t, srv, mcp.ClientOptions{OnNotification: func(m *jsonrpc.Message) {
		mu.Lock()
		got = append(got, m.Method+" "+string(m.Params))
		mu.Unlock()
	}})
	if _, err := c.Call(bounded(t), "tools/call", json.RawMessage(`{"name":"chatty"}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		`notifications/message {"level":"info","data":"info"}`,
		`notifications/message {"level":"warning","data":"warning"}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("notifications %v, want %v", got, want)
	}
}

func TestClientCancellationReachesServer(t *testing.T) {
	started := make(chan struct{}, 1)
	cancelled := make(chan error, 1)
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{Name: "slow", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	}}))
	c, p := connect(t, srv, mcp.ClientOptions{})

	ctx, cancel := context.WithCancel(bounded(t))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"slow"}`))
		errc <- err
	}()
	wait(t, started, "the tool to start")
	cancel()
	if err := wait(t, errc, "Call to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call error %v, want context.Canceled", err)
	}
	if err := wait(t, cancelled, "the server-side handler to be cancelled"); !errors.Is(err, context.Canceled) {
		t.Fatalf("handler context error %v", err)
	}
	if got := p.clientWrote(); !slices.Contains(got, "notifications/cancelled") {
		t.Fatalf("client wrote %v", got)
	}
	// The connection is still good.
	if _, err := c.Call(bounded(t), "ping", nil); err != nil {
		t.Fatalf("ping after a cancel: %v", err)
	}
}
