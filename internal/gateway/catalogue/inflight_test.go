// inflight_test.go pins the relay from the backend back to the caller:
// progress with tokens mapped per caller, sampling reaching the caller that
// caused it, cancellation reaching the backend for the right request, and
// completion routed by its ref.

package catalogue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// backRig is a backend server whose tools talk back to the caller.
type backRig struct {
	arrived   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
	tokens    chan string
}

func newBackRig(t *testing.T) (*mcp.Server, *backRig) {
	t.Helper()
	rig := &backRig{arrived: make(chan struct{}, 16), release: make(chan struct{}),
		cancelled: make(chan struct{}, 16), tokens: make(chan string, 16)}
	text := func(s string) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(s)}})
	}
	who := func(args json.RawMessage) string { s, _ := jsonrpc.LookupString(args, "who"); return s }
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "back", Version: "1"},
		Complete: func(_ context.Context, r *mcp.Request) (json.RawMessage, error) {
			ref, _ := jsonrpc.Lookup(r.Params, "ref")
			return mcp.Result(map[string]any{"completion": map[string]any{"values": []string{string(ref)}}})
		}})
	must(t, s.AddTools(
		&mcp.Tool{Name: "progress", Handler: func(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			rig.tokens <- string(r.ProgressToken())
			rig.arrived <- struct{}{}
			<-rig.release
			for i := 1; i <= 3; i++ {
				if err := r.Progress(ctx, float64(i), 3, who(args)); err != nil {
					return nil, err
				}
			}
			return text(string(r.ProgressToken()))
		}},
		&mcp.Tool{Name: "hold", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			rig.arrived <- struct{}{}
			<-rig.release
			return text("held")
		}},
		&mcp.Tool{Name: "sample", Handler: func(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			res, err := r.Call(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":1,"from":"`+who(args)+`"}`))
			if err != nil {
				return nil, err
			}
			return text(string(res))
		}},
		&mcp.Tool{Name: "block", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			rig.arrived <- struct{}{}
			<-ctx.Done()
			rig.cancelled <- struct{}{}
			return nil, ctx.Err()
		}},
	))
	must(t, s.AddPrompts(&mcp.Prompt{Name: "p", Definition: json.RawMessage(`{"name":"p","arguments":[{"name":"a"}]}`),
		Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
			return json.RawMessage(`{"messages":[]}`), nil
		}}))
	return s, rig
}

// relayedBothWays relays back into a new front with the client's requests
// and notifications hooked into an Inflight, as the backend package does.
func relayedBothWays(t *testing.T, back *mcp.Server, claims *catalogue.Claims) (*front, *catalogue.Mirror) {
	t.Helper()
	return relayedBothWaysTo(t, back, claims, `{"sampling":{},"elicitation":{},"roots":{}}`)
}

// relayedBothWaysTo is relayedBothWays with a front client that declared
// capabilities.
func relayedBothWaysTo(t *testing.T, back *mcp.Server, claims *catalogue.Claims, capabilities string) (*front, *catalogue.Mirror) {
	t.Helper()
	inf := catalogue.NewInflight()
	conn := &memConn{in: make(chan []byte, 1024), done: make(chan struct{})}
	conn.ss = back.NewSession(mcp.SessionOptions{ID: "mem", Out: conn})
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "relay-test", Version: "1"},
		Capabilities: upstream.ClientCapabilities(), OnRequest: inf.OnRequest,
		OnNotification: func(m *jsonrpc.Message) { inf.OnNotification(m) }})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	f := newFrontCaps(t, capabilities)
	b := catalogue.New("b1", c, catalogue.Options{Inflight: inf, Claims: claims})
	must(t, b.Sync(context.Background(), f.Server))
	return f, b
}

// callerSink is one front request's stream; it answers sampling with
// answer (when set) through the session, as a transport would.
type callerSink struct {
	f      *front
	answer string
	mu     sync.Mutex
	msgs   []*jsonrpc.Message
}

func (s *callerSink) Send(ctx context.Context, msg []byte) error {
	m, err := jsonrpc.Parse(append([]byte(nil), msg...))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	if m.Kind() == jsonrpc.KindRequest && s.answer != "" {
		ans, _ := jsonrpc.Parse(jsonrpc.AppendResult(nil, m.ID, json.RawMessage(s.answer)))
		go s.f.ss.Handle(context.Background(), ans, nil)
	}
	return nil
}

func (s *callerSink) all() []*jsonrpc.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*jsonrpc.Message(nil), s.msgs...)
}

func frontCall(t *testing.T, ctx context.Context, f *front, sink mcp.Sink, params string) *jsonrpc.Message {
	id := jsonrpc.ID(strconv.FormatInt(lastID.Add(1), 10))
	ans := f.ss.Handle(ctx, request(t, id, "tools/call", params), sink)
	if ans == nil {
		return nil
	}
	m, err := jsonrpc.Parse(ans)
	if err != nil {
		t.Errorf("bad answer %s", ans)
	}
	return m
}

// Two callers in flight at once with the same progress token each get
// only their own progress, under their own token; the backend sees two
// distinct tokens of the gateway's.
func TestProgressTokensAreMappedPerCaller(t *testing.T) {
	back, rig := newBackRig(t)
	f, _ := relayedBothWays(t, back, nil)
	sinks := map[string]*callerSink{"A": {f: f}, "B": {f: f}}
	results := map[string]*jsonrpc.Message{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for who, sink := range sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := frontCall(t, context.Background(), f, sink,
				`{"name":"b1__progress","arguments":{"who":"`+who+`"},"_meta":{"progressToken":"same","x":1}}`)
			mu.Lock()
			results[who] = m
			mu.Unlock()
		}()
	}
	<-rig.arrived
	<-rig.arrived
	close(rig.release)
	wg.Wait()
	t1, t2 := <-rig.tokens, <-rig.tokens
	if t1 == t2 || !strings.HasPrefix(t1, `"gw-`) || !strings.HasPrefix(t2, `"gw-`) {
		t.Errorf("backend tokens %s and %s, want two distinct gateway tokens", t1, t2)
	}
	for who, sink := range sinks {
		if m := results[who]; m == nil || m.Kind() != jsonrpc.KindResult {
			t.Fatalf("%s: answer %+v", who, m)
		}
		n := 0
		for _, m := range sink.all() {
			if m.Method != "notifications/progress" {
				t.Errorf("%s got %s", who, m.Method)
				continue
			}
			n++
			tok, _ := jsonrpc.Lookup(m.Params, "progressToken")
			msg, _ := jsonrpc.LookupString(m.Params, "message")
			if string(tok) != `"same"` || msg != who {
				t.Errorf("%s got progress %s", who, m.Params)
			}
		}
		if n != 3 {
			t.Errorf("%s got %d progress notifications, want 3", who, n)
		}
	}
}

// A backend's sampling request during a call reaches the client of that
// call, not another caller in flight, and the client's raw answer reaches
// the backend.
func TestSamplingReachesTheCallerThatCausedIt(t *testing.T) {
	back, rig := newBackRig(t)
	f, _ := relayedBothWays(t, back, nil)
	other := &callerSink{f: f, answer: `{"role":"assistant","content":{"type":"text","text":"wrong"},"model":"m"}`}
	done := make(chan struct{})
	go func() {
		defer close(done)
		frontCall(t, context.Background(), f, other, `{"name":"b1__hold","arguments":{}}`)
	}()
	<-rig.arrived
	const answer = `{"role":"assistant","content":{"type":"text","text":"right"},"model":"m","big":123456789012345678901234567890}`
	caller := &callerSink{f: f, answer: answer}
	m := frontCall(t, context.Background(), f, caller, `{"name":"b1__sample","arguments":{"who":"caller"}}`)
	close(rig.release)
	<-done
	if m == nil || m.Kind() != jsonrpc.KindResult {
		t.Fatalf("sample answer %+v", m)
	}
	if got := toolText(t, m.Result); got != answer {
		t.Errorf("backend got %s, want the caller's raw answer %s", got, answer)
	}
	reqs := 0
	for _, m := range caller.all() {
		if m.Method == "sampling/createMessage" {
			reqs++
			if from, _ := jsonrpc.LookupString(m.Params, "from"); from != "caller" {
				t.Errorf("sampling params %s", m.Params)
			}
		}
	}
	if reqs != 1 {
		t.Errorf("caller got %d sampling requests, want 1", reqs)
	}
	for _, m := range other.all() {
		t.Errorf("the other caller got %s", m.Method)
	}
}

// When the caller's request ends, the backend is sent
// notifications/cancelled for its own request: its handler is cancelled.
func TestCancellationReachesTheBackend(t *testing.T) {
	back, rig := newBackRig(t)
	f, _ := relayedBothWays(t, back, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		frontCall(t, ctx, f, &callerSink{f: f}, `{"name":"b1__block","arguments":{}}`)
	}()
	<-rig.arrived
	cancel()
	select {
	case <-rig.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the backend's handler was never cancelled")
	}
	<-done
}

// completion/complete for a prefixed prompt reaches its backend with the
// backend's own name in ref.
func TestCompletionIsRoutedByRef(t *testing.T) {
	back, _ := newBackRig(t)
	claims := catalogue.NewClaims()
	_, b := relayedBothWays(t, back, claims)
	_ = b
	f := &front{Server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "front2", Version: "1"}, Complete: claims.Complete}), out: &mcptest.Recorder{}}
	f.ss = f.NewSession(mcp.SessionOptions{ID: "front2", Out: f.out})
	t.Cleanup(f.ss.Close)
	f.result(t, "initialize", `{"protocolVersion":"`+mcp.LatestVersion+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	f.ss.Handle(context.Background(), request(t, nil, "notifications/initialized", ""), nil)
	res := f.result(t, "completion/complete", `{"ref":{"type":"ref/prompt","name":"b1__p"},"argument":{"name":"a","value":""}}`)
	if !strings.Contains(string(res), `{\"type\":\"ref/prompt\",\"name\":\"p\"}`) {
		t.Errorf("completion result %s, want the backend to see ref name p", res)
	}
	if m := f.call(t, "completion/complete", `{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}}`); m.Error == nil {
		t.Errorf("unknown prompt: %s", m.Result)
	}
}

// A client that did not declare sampling is not sent the backend's
// sampling request: the backend hears -32601, as from such a client.
func TestSamplingIsNotSentToAClientWithoutTheCapability(t *testing.T) {
	back, _ := newBackRig(t)
	f, _ := relayedBothWaysTo(t, back, nil, `{"roots":{}}`)
	caller := &callerSink{f: f, answer: `{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}`}
	m := frontCall(t, context.Background(), f, caller, `{"name":"b1__sample","arguments":{"who":"caller"}}`)
	if m == nil {
		t.Fatal("no answer")
	}
	if !bytes.Contains(m.Error, []byte(`"code":-32601`)) || !bytes.Contains(m.Error, []byte("sampling")) {
		t.Errorf("answer %s %s, want the backend's -32601 about sampling relayed", m.Result, m.Error)
	}
	for _, m := range caller.all() {
		t.Errorf("the client without sampling was sent %s", m.Method)
	}
}
