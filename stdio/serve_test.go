// serve_test.go pins the rules the server end keeps on a raw stream:
// lifecycle, JSON-RPC error answers, batches by revision, line framing,
// and how Serve ends.

package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestServeAnswersRuleViolations(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantCode int64
		wantID   string // "" for null
	}{
		{"request before initialize is invalid", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, "1"},
		{"malformed JSON is a parse error with null id", `{"jsonrpc":"2.0","id":2,"method":`, jsonrpc.CodeParseError, ""},
		{"null id is invalid, not a notification", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, ""},
		{"wrong jsonrpc version is invalid", `{"jsonrpc":"1.0","id":"v","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"v"`},
		{"a bare value is invalid", `42`, jsonrpc.CodeInvalidRequest, ""},
		{"a batch before initialize is refused", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startServe(t, Options{})
			p.send(t, tt.line+"\n")
			m := p.nextMessage(t)
			if code := errorCode(t, m); code != tt.wantCode {
				t.Errorf("code = %d, want %d (%s)", code, tt.wantCode, m.Append(nil))
			}
			if string(m.ID) != tt.wantID {
				t.Errorf("id = %q, want %q", m.ID, tt.wantID)
			}
			// The session goes on.
			p.send(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n")
			if m := p.nextMessage(t); string(m.ID) != `"after"` || string(m.Result) != `{}` {
				t.Errorf("ping after the error: %s", m.Append(nil))
			}
		})
	}
}

func TestServePingBeforeInitialize(t *testing.T) {
	p := startServe(t, Options{})
	p.send(t, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n")
	if m := p.nextMessage(t); string(m.ID) != "7" || string(m.Result) != "{}" {
		t.Fatalf("ping: %s", m.Append(nil))
	}
}

func TestServeBatchDependsOnRevision(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}},` +
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}},` +
		`{"jsonrpc":"2.0","id":3}]` + "\n"

	t.Run("refused under 2025-06-18 with -32600", func(t *testing.T) {
		p := startServe(t, Options{})
		p.initialize(t, mcp.Version20250618)
		p.send(t, batch)
		m := p.nextMessage(t)
		if code := errorCode(t, m); code != jsonrpc.CodeInvalidRequest || m.ID != nil {
			t.Fatalf("got %s", m.Append(nil))
		}
	})
	t.Run("served under 2025-03-26, each element answered", func(t *testing.T) {
		p := startServe(t, Options{})
		p.initialize(t, mcp.Version20250326)
		p.send(t, batch)
		line := p.next(t)
		msgs, errs, err := jsonrpc.ParseBatch(line)
		if err != nil {
			t.Fatalf("answer %s is not a batch: %v", line, err)
		}
		got := map[string]*jsonrpc.Message{}
		for i, m := range msgs {
			if errs[i] != nil {
				t.Fatalf("element %d: %v", i, errs[i])
			}
			got[string(m.ID)] = m
		}
		if len(got) != 3 {
			t.Fatalf("want answers to 1, \"two\" and the invalid element, got %s", line)
		}
		if string(got["1"].Result) != "{}" || !bytes.Contains(got[`"two"`].Result, []byte(`"text":"b"`)) {
			t.Errorf("answers: %s", line)
		}
		if code := errorCode(t, got["3"]); code != jsonrpc.CodeInvalidRequest {
			t.Errorf("invalid element answered %d", code)
		}
	})
	t.Run("empty batch is invalid", func(t *testing.T) {
		p := startServe(t, Options{})
		p.initialize(t, mcp.Version20250326)
		p.send(t, "[]\n")
		if code := errorCode(t, p.nextMessage(t)); code != jsonrpc.CodeInvalidRequest {
			t.Fatalf("code %d", code)
		}
	})
}

func TestServeCompactsEmbeddedNewlinesByteForByte(t *testing.T) {
	p := startServe(t, Options{})
	p.initialize(t, mcp.LatestVersion)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pretty","arguments":{}}}`+"\n")
	line := p.next(t)
	if bytes.ContainsAny(line, "\r\n") {
		t.Fatalf("answer spans lines: %q", line)
	}
	m, err := jsonrpc.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, []byte(prettyResult)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Result, want.Bytes()) {
		t.Fatalf("result changed beyond whitespace:\n got %s\nwant %s", m.Result, want.Bytes())
	}
	for _, keep := range []string{bigInteger, `"line one\nline two"`, `2.50`, `-0e+3`, `"unknownField"`} {
		if !bytes.Contains(m.Result, []byte(keep)) {
			t.Errorf("result lost %s", keep)
		}
	}
}

func TestServeOversizedLineIsAnsweredAndStreamContinues(t *testing.T) {
	const limit = 1024
	p := startServe(t, Options{MaxLineBytes: limit})
	p.initialize(t, mcp.LatestVersion)
	pad := strings.Repeat("x", 3*limit)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+pad+`"}}`+"\n")
	m := p.nextMessage(t)
	if code := errorCode(t, m); code != jsonrpc.CodeInvalidRequest || m.ID != nil {
		t.Fatalf("oversized line answered %s", m.Append(nil))
	}
	e, _ := m.ErrorObject()
	if string(e.Data) != `{"maxBytes":1024}` {
		t.Errorf("data = %s", e.Data)
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	if m := p.nextMessage(t); string(m.ID) != "2" {
		t.Fatalf("after oversized line: %s", m.Append(nil))
	}
}

func TestServeSkipsBlankLinesAndAcceptsCRLF(t *testing.T) {
	p := startServe(t, Options{})
	p.send(t, "\r\n\n \t \n"+`{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\r\n")
	if m := p.nextMessage(t); string(m.ID) != "3" {
		t.Fatalf("got %s", m.Append(nil))
	}
}

func TestServeAnswersNothingToResponsesAndNotifications(t *testing.T) {
	p := startServe(t, Options{})
	p.initialize(t, mcp.LatestVersion)
	p.send(t, `{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`+"\n")
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`+"\n")
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`+"\n")
	if m := p.nextMessage(t); string(m.ID) != "4" {
		t.Fatalf("first line after a response and a notification: %s", m.Append(nil))
	}
}

func TestServeSlowCallDoesNotBlockOthers(t *testing.T) {
	p := startServe(t, Options{})
	p.initialize(t, mcp.LatestVersion)
	p.send(t, `{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"wait","arguments":{"key":"k"},"_meta":{"progressToken":"t"}}}`+"\n")
	if m := p.nextMessage(t); m.Method != "notifications/progress" {
		t.Fatalf("want progress, got %s", m.Append(nil))
	}
	p.send(t, `{"jsonrpc":"2.0","id":"fast","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`+"\n")
	if m := p.nextMessage(t); string(m.ID) != `"fast"` {
		t.Fatalf("want the fast answer first, got %s", m.Append(nil))
	}
	p.latches.open("k")
	if m := p.nextMessage(t); string(m.ID) != `"slow"` || !bytes.Contains(m.Result, []byte("released k")) {
		t.Fatalf("slow answer: %s", m.Append(nil))
	}
}

func TestServeAtEOFFinishesCallsInFlight(t *testing.T) {
	p := startServe(t, Options{})
	p.initialize(t, mcp.LatestVersion)
	p.send(t, `{"jsonrpc":"2.0","id":"held","method":"tools/call","params":{"name":"wait","arguments":{"key":"eof"},"_meta":{"progressToken":1}}}`+"\n")
	if m := p.nextMessage(t); m.Method != "notifications/progress" {
		t.Fatalf("want progress, got %s", m.Append(nil))
	}
	_ = p.in.Close()
	select {
	case err := <-p.served:
		t.Fatalf("Serve returned (%v) with a call in flight", err)
	default:
	}
	p.latches.open("eof")
	if m := p.nextMessage(t); string(m.ID) != `"held"` || m.Error != nil {
		t.Fatalf("held call answered %s", m.Append(nil))
	}
	if err := p.endInput(t); err != nil {
		t.Fatalf("Serve at EOF = %v, want nil", err)
	}
	if n := p.server.Sessions(); n != 0 {
		t.Errorf("%d sessions left open", n)
	}
}

func TestServeOnCancelStopsCallsAndReturns(t *testing.T) {
	p := startServe(t, Options{})
	p.initialize(t, mcp.LatestVersion)
	p.send(t, `{"jsonrpc":"2.0","id":"held","method":"tools/call","params":{"name":"wait","arguments":{"key":"never"},"_meta":{"progressToken":1}}}`+"\n")
	if m := p.nextMessage(t); m.Method != "notifications/progress" {
		t.Fatalf("want progress, got %s", m.Append(nil))
	}
	p.cancel() // the wait tool only ends when its context does
	select {
	case err := <-p.served:
		p.served <- err
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Serve did not return after cancel")
	}
	if n := p.server.Sessions(); n != 0 {
		t.Errorf("%d sessions left open", n)
	}
}

func TestServeBindsIdentityToSession(t *testing.T) {
	s, _ := newTestServer()
	id := mcp.Identity{Subject: "desktop", Role: "admin"}
	seen := make(chan mcp.Identity, 1)
	s.Use(func(next mcp.Handler) mcp.Handler {
		return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
			got, _ := mcp.IdentityFrom(ctx)
			if r.Session.Identity() != got {
				t.Errorf("session identity %v, context identity %v", r.Session.Identity(), got)
			}
			seen <- got
			return next.ServeMCP(ctx, r)
		})
	})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var out bytes.Buffer
	if err := Serve(context.Background(), s, in, &out, Options{Identity: id}); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != id {
		t.Errorf("identity = %v, want %v", got, id)
	}
	if out.String() != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("out = %q", out.String())
	}
}

// At the end of input nobody can answer the server's own requests: a tool
// waiting on the client learns so at once (as a failed tool result), and
// Serve returns without waiting for its context.
func TestServeAtEOFFailsCallsToTheClient(t *testing.T) {
	p := startServe(t, Options{})
	p.initialize(t, mcp.LatestVersion)
	p.send(t, `{"jsonrpc":"2.0","id":"asking","method":"tools/call","params":{"name":"ask","arguments":{}}}`+"\n")
	if m := p.nextMessage(t); m.Method != "sampling/createMessage" {
		t.Fatalf("want a sampling request, got %s", m.Append(nil))
	}
	_ = p.in.Close()
	m := p.nextMessage(t)
	if string(m.ID) != `"asking"` || !strings.Contains(string(m.Result), `"isError":true`) {
		t.Fatalf("the asking call was answered %s, want an isError result", m.Append(nil))
	}
	if err := p.endInput(t); err != nil {
		t.Fatalf("Serve at EOF = %v, want nil", err)
	}
}

// With Sessionless, a 2026-07-28 request is served on the same stream
// beside the session, without initialize; a refusal is its error; the
// session of the 2025 era goes on. Without it, the request is one of the
// session's, refused before initialize as before.
func TestServeSessionlessRequestsBesideTheSession(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	p := startServe(t, Options{Sessionless: true})
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`+"\n")
	if m := p.nextMessage(t); m.Error != nil || !strings.Contains(string(m.Result), `"supportedVersions":["2026-07-28"]`) {
		t.Fatalf("server/discover: %s", m.Append(nil))
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n")
	if code := errorCode(t, p.nextMessage(t)); code != mcp.CodeUnsupportedProtocolVersion {
		t.Errorf("an unknown revision: %d, want -32022", code)
	}
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping","params":{`+meta+`}}`+"\n")
	if code := errorCode(t, p.nextMessage(t)); code != jsonrpc.CodeMethodNotFound {
		t.Errorf("ping of 2026-07-28: %d, want -32601", code)
	}
	// The 2025 session still needs initialize.
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`+"\n")
	if code := errorCode(t, p.nextMessage(t)); code != jsonrpc.CodeInvalidRequest {
		t.Errorf("a session request before initialize: %d, want -32600", code)
	}

	off := startServe(t, Options{})
	off.send(t, `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{`+meta+`}}`+"\n")
	if code := errorCode(t, off.nextMessage(t)); code != jsonrpc.CodeInvalidRequest {
		t.Errorf("server/discover with the era off: %d, want -32600 (before initialize)", code)
	}
}
