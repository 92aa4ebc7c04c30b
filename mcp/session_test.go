// session_test.go pins what a Session does between messages: requests
// served concurrently, notifications/cancelled reaching the handler's
// context, server-to-client requests routed back to their caller, and
// Close ending whatever still waits.

package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// asyncCall serves one request on its own goroutine, as a transport does,
// and delivers the parsed answer on the returned channel (nil for none).
func asyncCall(t *testing.T, ss *mcp.Session, sink mcp.Sink, id jsonrpc.ID, method, params string) <-chan *jsonrpc.Message {
	t.Helper()
	m := request(t, id, method, params)
	ch := make(chan *jsonrpc.Message, 1)
	go func() {
		answer := ss.Handle(context.Background(), m, sink)
		if answer == nil {
			ch <- nil
			return
		}
		parsed, err := jsonrpc.Parse(answer)
		if err != nil {
			t.Errorf("unparseable answer %s", answer)
		}
		ch <- parsed
	}()
	return ch
}

func TestRequestsOnOneSessionRunConcurrently(t *testing.T) {
	started := make(chan struct{})
	secondDone := make(chan struct{})
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(
		&mcp.Tool{Name: "first", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			close(started)
			<-secondDone // only the second request, served meanwhile, lets this one end
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("first")}})
		}},
		textTool("second", "second"),
	))
	ss, _ := readySession(t, srv)

	first := asyncCall(t, ss, nil, nextID(), "tools/call", `{"name":"first"}`)
	wait(t, started, "the first request to start")
	second := asyncCall(t, ss, nil, nextID(), "tools/call", `{"name":"second"}`)
	if got := decode[toolResult](t, result(t, wait(t, second, "the second answer while the first is in flight"))); got.text(t) != "second" {
		t.Fatalf("second %+v", got)
	}
	close(secondDone)
	if got := decode[toolResult](t, result(t, wait(t, first, "the first answer"))); got.text(t) != "first" {
		t.Fatalf("first %+v", got)
	}
}

func TestCancelledNotificationCancelsHandler(t *testing.T) {
	type seen struct {
		err error
	}
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	ended := make(chan seen, 1)
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{Name: "slow", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
		case <-release:
		}
		ended <- seen{ctx.Err()}
		return json.RawMessage(`{"content":[]}`), nil
	}}))

	t.Run("a cancel naming the request cancels its context", func(t *testing.T) {
		ss, _ := readySession(t, srv)
		id := jsonrpc.ID(`"req-42"`)
		answer := asyncCall(t, ss, nil, id, "tools/call", `{"name":"slow"}`)
		wait(t, started, "the handler to start")
		notify(t, ss, "notifications/cancelled", `{"requestId":"req-42","reason":"user gave up"}`)
		if got := wait(t, ended, "the handler to end"); !errors.Is(got.err, context.Canceled) {
			t.Fatalf("handler context error %v, want context.Canceled", got.err)
		}
		// MCP: the receiver of a cancellation should not answer it.
		if m := wait(t, answer, "Handle to return"); m != nil {
			t.Fatalf("a cancelled request was answered: %+v", m)
		}
	})
	t.Run("a cancel naming a numbered request cancels it", func(t *testing.T) {
		ss, _ := readySession(t, srv)
		answer := asyncCall(t, ss, nil, jsonrpc.ID(`4711`), "tools/call", `{"name":"slow"}`)
		wait(t, started, "the handler to start")
		notify(t, ss, "notifications/cancelled", `{"requestId":"4711"}`) // the string is not the number
		notify(t, ss, "notifications/cancelled", `{"requestId": 4711 }`)
		if got := wait(t, ended, "the handler to end"); !errors.Is(got.err, context.Canceled) {
			t.Fatalf("handler context error %v, want context.Canceled", got.err)
		}
		if m := wait(t, answer, "Handle to return"); m != nil {
			t.Fatalf("a cancelled request was answered: %+v", m)
		}
	})
	t.Run("a cancel naming another id leaves the request alone", func(t *testing.T) {
		ss, _ := readySession(t, srv)
		answer := asyncCall(t, ss, nil, jsonrpc.ID(`7`), "tools/call", `{"name":"slow"}`)
		wait(t, started, "the handler to start")
		notify(t, ss, "notifications/cancelled", `{"requestId":"7"}`) // the string "7" is not the number 7
		notify(t, ss, "notifications/cancelled", `{"requestId":8}`)
		notify(t, ss, "notifications/cancelled", `{}`)
		close(release)
		if got := wait(t, ended, "the handler to end"); got.err != nil {
			t.Fatalf("handler context error %v", got.err)
		}
		result(t, wait(t, answer, "the answer"))
	})
}

func TestRequestCallReachesClientAndReturnsItsAnswer(t *testing.T) {
	type outcome struct {
		res json.RawMessage
		err error
	}
	outcomes := make(chan outcome, 1)
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{Name: "ask", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		res, err := r.Call(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":5}`))
		outcomes <- outcome{res, err}
		return json.RawMessage(`{"content":[]}`), nil
	}}))

	// serve starts the tool and returns the server-to-client request it
	// sent on the request's own stream.
	serve := func(t *testing.T, ss *mcp.Session) (*jsonrpc.Message, <-chan *jsonrpc.Message) {
		related := newRecorder()
		answer := asyncCall(t, ss, related, nextID(), "tools/call", `{"name":"ask"}`)
		m := related.next(t)
		if m.Kind() != jsonrpc.KindRequest || m.Method != "sampling/createMessage" || string(m.Params) != `{"messages":[],"maxTokens":5}` {
			t.Fatalf("server-to-client request %+v", m)
		}
		return m, answer
	}

	t.Run("a result is returned raw", func(t *testing.T) {
		ss, _ := readySession(t, srv)
		req, answer := serve(t, ss)
		clientResult := `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","n":123456789012345678901234567890}`
		resp := mustParse(t, jsonrpc.AppendResult(nil, req.ID, json.RawMessage(clientResult)))
		if out := ss.Handle(context.Background(), resp, nil); out != nil {
			t.Fatalf("a response was answered: %s", out)
		}
		got := wait(t, outcomes, "r.Call to return")
		if got.err != nil || string(got.res) != clientResult {
			t.Fatalf("r.Call = %s, %v", got.res, got.err)
		}
		result(t, wait(t, answer, "the tool's answer"))
	})
	t.Run("a JSON-RPC error is returned as *jsonrpc.Error with its bytes", func(t *testing.T) {
		ss, _ := readySession(t, srv)
		req, answer := serve(t, ss)
		rawErr := `{"code":-1,"message":"User rejected sampling request","data":{"big":123456789012345678901234567890}}`
		resp := mustParse(t, []byte(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":`+rawErr+`}`))
		ss.Handle(context.Background(), resp, nil)
		got := wait(t, outcomes, "r.Call to return")
		var je *jsonrpc.Error
		if !errors.As(got.err, &je) {
			t.Fatalf("r.Call error %v, want *jsonrpc.Error", got.err)
		}
		if je.Code != -1 || string(je.Raw()) != rawErr {
			t.Fatalf("error %d %s, want %s", je.Code, je.Raw(), rawErr)
		}
		wait(t, answer, "the tool's answer")
	})
	t.Run("an answer to an unknown id is ignored", func(t *testing.T) {
		ss, _ := readySession(t, srv)
		req, answer := serve(t, ss)
		stray := mustParse(t, jsonrpc.AppendResult(nil, jsonrpc.ID(`"nobody"`), json.RawMessage(`{}`)))
		ss.Handle(context.Background(), stray, nil)
		ss.Handle(context.Background(), mustParse(t, jsonrpc.AppendResult(nil, req.ID, json.RawMessage(`{"ok":1}`))), nil)
		if got := wait(t, outcomes, "r.Call to return"); string(got.res) != `{"ok":1}` {
			t.Fatalf("r.Call = %s, %v", got.res, got.err)
		}
		wait(t, answer, "the tool's answer")
	})
	t.Run("cancelling the request cancels the call and tells the client", func(t *testing.T) {
		ss, _ := readySession(t, srv)
		related := newRecorder()
		id := nextID()
		answer := asyncCall(t, ss, related, id, "tools/call", `{"name":"ask"}`)
		req := related.next(t)
		notify(t, ss, "notifications/cancelled", `{"requestId":`+string(id)+`}`)
		if got := wait(t, outcomes, "r.Call to return"); !errors.Is(got.err, context.Canceled) {
			t.Fatalf("r.Call error %v, want context.Canceled", got.err)
		}
		cancel := related.next(t)
		if cancel.Method != "notifications/cancelled" || cancel.Kind() != jsonrpc.KindNotification {
			t.Fatalf("client was sent %+v", cancel)
		}
		if rid, _ := jsonrpc.Lookup(cancel.Params, "requestId"); !bytes.Equal(rid, req.ID) {
			t.Fatalf("cancel names %s, want %s", rid, req.ID)
		}
		wait(t, answer, "the tool's answer")
	})
}

func TestCloseEndsPendingCalls(t *testing.T) {
	errs := make(chan error, 1)
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{Name: "ask", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		_, err := r.Call(ctx, "roots/list", nil)
		errs <- err
		return nil, err
	}}))
	// Close both cancels the handler's context and ends the session; the
	// call must report the session's end every time, not either at random.
	for range 50 {
		ss, _ := readySession(t, srv)
		related := newRecorder()
		answer := asyncCall(t, ss, related, nextID(), "tools/call", `{"name":"ask"}`)
		if m := related.next(t); m.Method != "roots/list" {
			t.Fatalf("sent %s", m.Method)
		}
		ss.Close()
		if err := wait(t, errs, "r.Call to return"); !errors.Is(err, mcp.ErrSessionClosed) {
			t.Fatalf("r.Call error %v, want ErrSessionClosed", err)
		}
		wait(t, answer, "the tool's answer")
		select {
		case <-ss.Done():
		default:
			t.Fatal("Done is open after Close")
		}
	}
	t.Run("a request after Close is refused", func(t *testing.T) {
		ss, _ := readySession(t, srv)
		ss.Close()
		ss.Close() // idempotent
		rpcError(t, call(t, ss, "ping", ""), jsonrpc.CodeInvalidRequest)
	})
}

func TestProgressFollowsTheToken(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{Name: "work", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		if err := r.Progress(ctx, 1, 2, "half"); err != nil {
			return nil, err
		}
		return json.RawMessage(`{"content":[]}`), nil
	}}))
	ss, _ := readySession(t, srv)

	related := newRecorder()
	result(t, callWith(t, ss, related, "tools/call", `{"name":"work","_meta":{"progressToken":12345678901234567890123}}`))
	msgs := related.messages(t)
	if len(msgs) != 1 || msgs[0].Method != "notifications/progress" {
		t.Fatalf("sent %v", related.methods(t))
	}
	if want := `{"progressToken":12345678901234567890123,"progress":1,"total":2,"message":"half"}`; string(msgs[0].Params) != want {
		t.Fatalf("params %s, want %s", msgs[0].Params, want)
	}

	related = newRecorder()
	result(t, callWith(t, ss, related, "tools/call", `{"name":"work"}`))
	if got := related.methods(t); len(got) != 0 {
		t.Fatalf("progress sent without a token: %v", got)
	}
}

func TestUnhandledNotificationsReachOnNotification(t *testing.T) {
	got := make(chan string, 4)
	srv := newServer(t, mcp.Options{OnNotification: func(_ context.Context, _ *mcp.Session, m *jsonrpc.Message) {
		got <- m.Method
	}})
	ss, _ := readySession(t, srv)
	notify(t, ss, "notifications/initialized", "")
	notify(t, ss, "notifications/cancelled", `{"requestId":1}`)
	notify(t, ss, "notifications/roots/list_changed", "")
	if m := wait(t, got, "OnNotification"); m != "notifications/roots/list_changed" {
		t.Fatalf("OnNotification got %s", m)
	}
	if len(got) != 0 {
		t.Fatalf("engine notifications were passed on")
	}
}

// A client's answer to a request one replica sent, reaching the same
// session on another replica, is handed to the first (ForeignAnswer, then
// DeliverAnswer there) and ends the call waiting for it. An answer naming
// the replica it reached, or no replica, is not handed anywhere.
func TestAnAnswerToAnotherReplicasRequestIsHandedToIt(t *testing.T) {
	outcomes := make(chan json.RawMessage, 1)
	var holder *mcp.Server
	handed := make(chan string, 4)
	forward := func(replica, sid string, answer []byte) {
		handed <- replica
		if replica == "aaaa" && !holder.DeliverAnswer(sid, answer) {
			t.Errorf("the holder had no call of session %s waiting for %s", sid, answer)
		}
	}
	holder = newServer(t, mcp.Options{Replica: "aaaa", ForeignAnswer: forward})
	other := newServer(t, mcp.Options{Replica: "bbbb", ForeignAnswer: forward})
	mustAdd(t, holder.AddTools(askTool(outcomes)))
	here := newSession(t, holder, mcp.SessionOptions{ID: "sealed-1", Out: newRecorder()})
	initialize(t, here, mcp.LatestVersion)
	there := newSession(t, other, mcp.SessionOptions{ID: "sealed-1", Out: newRecorder()})
	initialize(t, there, mcp.LatestVersion)

	related := newRecorder()
	answer := asyncCall(t, here, related, nextID(), "tools/call", `{"name":"ask"}`)
	req := related.next(t)
	if !strings.HasPrefix(string(req.ID), `"mcpgate-aaaa-`) {
		t.Fatalf("the request's id %s does not name its replica", req.ID)
	}
	for _, id := range []string{`"mcpgate-bbbb-1"`, `"mcpgate-7"`, `"other"`} {
		there.Handle(context.Background(), mustParse(t, jsonrpc.AppendResult(nil, jsonrpc.ID(id), json.RawMessage(`{}`))), nil)
	}
	there.Handle(context.Background(), mustParse(t, jsonrpc.AppendResult(nil, req.ID, json.RawMessage(`{"model":"m"}`))), nil)
	if got := wait(t, outcomes, "the call to get its answer"); string(got) != `{"model":"m"}` {
		t.Errorf("the call got %s", got)
	}
	result(t, wait(t, answer, "the tool's answer"))
	if got := wait(t, handed, "the hand-off"); got != "aaaa" || len(handed) != 0 {
		t.Errorf("handed to %q and %d more, want aaaa alone", got, len(handed))
	}
}
