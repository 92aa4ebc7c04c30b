// join_test.go checks JoinFrames over a real loopback WebSocket: a client's
// long message reaches its socket in one or two writes, not one per 4 KiB
// of the library's buffer, and arrives whole.

package wire_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
)

// countedConn counts the writes to a socket.
type countedConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countedConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// oneMessageServer accepts WebSockets on a server that start makes (plain
// or TLS), stopped when t ends: it reads one message of any length, hands
// it to got, and answers "ok", for which the client waits.
func oneMessageServer(t *testing.T, start func(http.Handler) *httptest.Server) (srv *httptest.Server, got <-chan []byte) {
	msgs := make(chan []byte, 1)
	srv = start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(-1)
		_, msg, err := ws.Read(r.Context())
		if err != nil {
			return
		}
		msgs <- msg
		_ = ws.Write(r.Context(), websocket.MessageBinary, []byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, msgs
}

func TestJoinFramesWritesAClientsMessageAtOnce(t *testing.T) {
	srv, got := oneMessageServer(t, httptest.NewServer)
	msg := bytes.Repeat([]byte("0123456789abcdef"), 16<<10) // 256 KiB, as a pair's response
	for _, tc := range []struct {
		name      string
		join      bool
		maxWrites int64
	}{
		{"joined: the message in at most two writes", true, 2},
		// The library alone, so that the test shows what it guards: one
		// write per 4 KiB.
		{"the library alone: one write per 4 KiB", false, int64(len(msg) / 4096)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			var writes atomic.Int64
			tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var d net.Dialer
				c, err := d.DialContext(ctx, network, addr)
				return countedConn{Conn: c, writes: &writes}, err
			}}
			defer tr.CloseIdleConnections()
			o := &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}}
			if tc.join {
				o = wire.JoinFrames(o)
			}
			ws, _, err := websocket.Dial(ctx, "ws"+srv.URL[len("http"):], o)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.CloseNow()
			before := writes.Load()
			if err := ws.Write(ctx, websocket.MessageBinary, msg); err != nil {
				t.Fatal(err)
			}
			n := writes.Load() - before
			if !bytes.Equal(receive(t, got), msg) {
				t.Fatal("the server did not receive the message whole")
			}
			if _, ok, err := ws.Read(ctx); err != nil || string(ok) != "ok" {
				t.Fatalf("the server's answer: %q, %v", ok, err)
			}
			if tc.join && n > tc.maxWrites || !tc.join && n < tc.maxWrites {
				t.Fatalf("%d writes to the socket for a message of %d bytes", n, len(msg))
			}
		})
	}
}

// Over TLS the upgraded connection is the TLS one: the frames are joined
// above it, and the message arrives whole.
func TestJoinFramesOverTLS(t *testing.T) {
	srv, got := oneMessageServer(t, httptest.NewTLSServer)
	ctx := testContext(t)
	ws, _, err := websocket.Dial(ctx, "wss"+srv.URL[len("https"):], wire.JoinFrames(&websocket.DialOptions{HTTPClient: srv.Client()}))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	msg := bytes.Repeat([]byte("tls!"), 100_000)
	if err := ws.Write(ctx, websocket.MessageBinary, msg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(receive(t, got), msg) {
		t.Fatal("the server did not receive the message whole")
	}
	if _, ok, err := ws.Read(ctx); err != nil || string(ok) != "ok" {
		t.Fatalf("the server's answer: %q, %v", ok, err)
	}
}
