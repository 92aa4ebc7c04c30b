// disregard_test.go shows each case the spec disregards — a frame shorter
// than 9 bytes, a type not allowed in its direction, a frame naming no open
// scope or channel, a request naming a scope still open, a text message —
// being ignored: nothing is answered, no handler runs, the reason is
// logged at debug, and the connection goes on working.

package wire_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
)

// recorder serves like echo and records every payload a handler got.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (rec *recorder) serve(ctx context.Context, r *wire.Responder, p []byte) {
	rec.mu.Lock()
	rec.seen = append(rec.seen, string(p))
	rec.mu.Unlock()
	switch {
	case !r.IsChannel():
		_ = r.Respond([]byte("scope:" + string(p)))
		<-ctx.Done()
	case string(p) == "hold":
		<-ctx.Done()
	default:
		_ = r.Respond([]byte("chan:" + string(p)))
	}
}

func TestServerDisregards(t *testing.T) {
	frame := func(typ wire.FrameType, scope, channel uint32, payload string) func(*rawPeer) {
		return func(p *rawPeer) {
			p.send(wire.Frame{Type: typ, Scope: scope, Channel: channel, Payload: []byte(payload)})
		}
	}
	for _, tc := range []struct {
		name, reason string
		setup        func(*rawPeer)
		send         func(*rawPeer)
	}{
		{"a frame shorter than 9 bytes", "shorter than its 9-byte header", nil,
			func(p *rawPeer) { p.sendBytes([]byte{byte(wire.TypeChannelRequest), 0, 0, 0, 1, 0, 0, 0}) }},
		{"an empty message", "shorter than its 9-byte header", nil, func(p *rawPeer) { p.sendBytes([]byte{}) }},
		{"an unknown type", "unknown frame type 7", nil,
			func(p *rawPeer) { p.sendBytes([]byte{7, 0, 0, 0, 1, 0, 0, 0, 0, 'b', 'a', 'd'}) }},
		{"a response from the client", "type not sent in this direction", nil,
			frame(wire.TypeResponse, 1, 0, "bad")},
		{"a response finish from the client, on an open scope", "type not sent in this direction", nil,
			frame(wire.TypeResponseFinish, 1, 0, "")},
		{"a channel request on an unknown scope", "channel request names no open scope", nil,
			frame(wire.TypeChannelRequest, 99, 1, "bad")},
		{"a request on a scope still open", "request names a scope still open", nil,
			frame(wire.TypeRequest, 1, 0, "bad")},
		{"a channel request on a channel still open", "channel request names a channel still open",
			frame(wire.TypeChannelRequest, 1, 5, "hold"), frame(wire.TypeChannelRequest, 1, 5, "bad")},
		{"a channel response for an unknown channel", "channel response names no open channel", nil,
			frame(wire.TypeChannelResponse, 1, 42, "bad")},
		{"a channel finish for an unknown channel", "channel response names no open channel", nil,
			frame(wire.TypeChannelResponseFinish, 1, 42, "")},
		{"a channel response on an unknown scope", "channel response names no open scope", nil,
			frame(wire.TypeChannelResponse, 99, 1, "bad")},
		{"a text message", "not binary", nil,
			func(p *rawPeer) {
				p.sendText(string(wire.AppendFrame(nil, wire.Frame{Type: wire.TypeRequest, Scope: 3})))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			srv := startServer(t, wire.HandlerFunc(rec.serve))
			p := dialRaw(t, srv.URL)
			p.send(wire.Frame{Type: wire.TypeRequest, Scope: 1, Payload: []byte("begin")})
			p.expect(wire.Frame{Type: wire.TypeResponse, Scope: 1, Payload: []byte("scope:begin")})
			if tc.setup != nil {
				tc.setup(p)
			}

			tc.send(p)

			// The connection still works, and the first thing it says is the
			// answer to what came next: nothing answered the stray frame.
			p.send(wire.Frame{Type: wire.TypeChannelRequest, Scope: 1, Channel: 2, Payload: []byte("probe")})
			p.expect(wire.Frame{Type: wire.TypeChannelResponse, Scope: 1, Channel: 2, Payload: []byte("chan:probe")})
			p.expect(wire.Frame{Type: wire.TypeChannelResponseFinish, Scope: 1, Channel: 2})
			p.send(wire.Frame{Type: wire.TypeRequest, Scope: 2, Payload: []byte("probe")})
			p.expect(wire.Frame{Type: wire.TypeResponse, Scope: 2, Payload: []byte("scope:probe")})

			if err := p.ws.Close(websocket.StatusNormalClosure, ""); err != nil {
				t.Fatal(err)
			}
			srv.waitServed(t)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if slices.Contains(rec.seen, "bad") {
				t.Fatalf("a handler ran for the stray frame: %q", rec.seen)
			}
			if log := srv.Log.String(); !strings.Contains(log, "level=DEBUG") || !strings.Contains(log, tc.reason) {
				t.Fatalf("no debug line saying %q:\n%s", tc.reason, log)
			}
		})
	}
}

// startRawServer serves each connection with script, a peer that writes
// frames by hand, and waits for every script in the test's cleanup.
func startRawServer(t *testing.T, script func(*rawPeer)) string {
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		defer ws.CloseNow()
		script(&rawPeer{t: t, ws: ws})
	}))
	t.Cleanup(func() {
		wg.Wait()
		srv.Close()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// TestClientDisregards: the client ignores the same kinds of stray frames
// from a server, and its streams see only what was theirs.
func TestClientDisregards(t *testing.T) {
	url := startRawServer(t, func(p *rawPeer) {
		if f := p.recv(); f.Type != wire.TypeRequest || f.Scope != 1 {
			t.Errorf("first frame %+v", f)
			return
		}
		p.sendBytes([]byte{2, 0, 0})
		p.sendText("hello")
		p.sendBytes([]byte{9, 0, 0, 0, 1, 0, 0, 0, 0})
		for _, f := range []wire.Frame{
			{Type: wire.TypeRequest, Scope: 1, Payload: []byte("bad")},    // client's type
			{Type: wire.TypeAuthorization, Payload: []byte("bad")},        // not used here
			{Type: wire.TypeResponse, Scope: 9, Payload: []byte("bad")},   // no such scope
			{Type: wire.TypeResponseFinish, Scope: 9},                     // no such scope
			{Type: wire.TypeChannelResponse, Scope: 1, Channel: 9},        // no such channel
			{Type: wire.TypeChannelResponseFinish, Scope: 1, Channel: 9},  // no such channel
			{Type: wire.TypeChannelRequest, Scope: 9, Channel: 1},         // no such scope
			{Type: wire.TypeResponse, Scope: 1, Payload: []byte("begun")}, // the real answer
		} {
			p.send(f)
		}
		f := p.recv()
		if f.Type != wire.TypeChannelRequest || f.Scope != 1 || string(f.Payload) != "probe" {
			t.Errorf("expected the probe channel, got %+v", f)
			return
		}
		p.send(wire.Frame{Type: wire.TypeChannelResponse, Scope: 1, Channel: f.Channel, Payload: []byte("ok")})
		p.send(wire.Frame{Type: wire.TypeChannelResponseFinish, Scope: 1, Channel: f.Channel})
		p.send(wire.Frame{Type: wire.TypeResponseFinish, Scope: 1})
		_, _, _ = p.ws.Read(context.Background()) // until the client closes
	})
	var log logBuffer
	var served atomic.Int32
	c := dialClient(t, url, &wire.ClientOptions{
		Options: wire.Options{Logger: log.logger()},
		Channels: wire.HandlerFunc(func(context.Context, *wire.Responder, []byte) {
			served.Add(1)
		}),
	})
	ctx := testContext(t)
	scope, err := c.Open(ctx, []byte("begin"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := scope.Next(ctx); err != nil || string(got) != "begun" {
		t.Fatalf("scope: %q, %v", got, err)
	}
	ch, err := scope.OpenChannel(ctx, []byte("probe"))
	if err != nil {
		t.Fatal(err)
	}
	if got, end := readAll(ctx, ch.Next); end != io.EOF || !slices.Equal(got, []string{"ok"}) {
		t.Fatalf("channel: %q then %v", got, end)
	}
	if got, end := readAll(ctx, scope.Next); end != io.EOF || len(got) != 0 {
		t.Fatalf("scope: %q then %v", got, end)
	}
	_ = c.Close()
	if served.Load() != 0 {
		t.Fatalf("a channel handler ran for a stray frame")
	}
	for _, reason := range []string{"not binary", "shorter than", "unknown frame type 9", "type not sent in this direction",
		"authorization is not used", "response names no open scope", "channel response names no open channel",
		"channel request names no open scope"} {
		if !strings.Contains(log.String(), reason) {
			t.Errorf("no debug line saying %q", reason)
		}
	}
}
