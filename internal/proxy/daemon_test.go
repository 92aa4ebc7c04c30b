package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// echoDaemon is a daemon endpoint on the gateway's side: it writes every
// binary message back, and tells closed when its peer closes.
func echoDaemon(t *testing.T) (url string, closed <-chan struct{}) {
	t.Helper()
	done := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		defer func() { done <- struct{}{} }()
		for {
			typ, msg, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			if err := ws.Write(r.Context(), typ, msg); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/daemon", done
}

// serveDaemonPair is a proxy whose gateway's daemon endpoint is daemon;
// it returns the URL the program dials.
func serveDaemonPair(t *testing.T, daemon string) string {
	return servePairs(t, wiremcp.DialOptions{Daemon: daemon}).daemon
}

func dialDaemon(t *testing.T, ctx context.Context, url string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// The program's frames reach the daemon message for message, and the
// daemon's reach the program, in order; the program closing closes the
// daemon's connection.
func TestTheDaemonPairRelaysMessageForMessage(t *testing.T) {
	ctx := testCtx(t)
	daemon, closed := echoDaemon(t)
	ws := dialDaemon(t, ctx, serveDaemonPair(t, daemon))
	for i := range 100 {
		f := wire.AppendFrame(nil, wire.Frame{Type: wire.TypeChannelResponse, Scope: uint32(i), Channel: 7,
			Payload: []byte(fmt.Sprintf("message %d %s", i, strings.Repeat("z", i*100)))})
		if err := ws.Write(ctx, websocket.MessageBinary, f); err != nil {
			t.Fatal(err)
		}
		typ, back, err := ws.Read(ctx)
		if err != nil || typ != websocket.MessageBinary || string(back) != string(f) {
			t.Fatalf("message %d came back as %q (%v)", i, back, err)
		}
	}
	_ = ws.Close(websocket.StatusNormalClosure, "done")
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("the daemon's connection outlived the program's")
	}
}

// What is not a frame, and an authorization frame, end the program's
// connection; text messages are skipped.
func TestADaemonMessageThatIsNotAFrameEndsItsConnection(t *testing.T) {
	ctx := testCtx(t)
	daemon, _ := echoDaemon(t)
	url := serveDaemonPair(t, daemon)
	for _, tc := range []struct {
		name string
		msg  []byte
		want websocket.StatusCode
	}{
		{"a short message", []byte{1, 2, 3}, websocket.StatusUnsupportedData},
		{"an unknown frame type", append([]byte{9}, make([]byte, 8)...), websocket.StatusUnsupportedData},
		{"an authorization frame", wire.AppendFrame(nil, wire.Frame{Type: wire.TypeAuthorization, Payload: []byte("Bearer x")}), websocket.StatusPolicyViolation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := dialDaemon(t, ctx, url)
			if err := ws.Write(ctx, websocket.MessageText, []byte("ignored")); err != nil {
				t.Fatal(err)
			}
			good := wire.AppendFrame(nil, wire.Frame{Type: wire.TypeChannelRequest, Scope: 1, Channel: 1})
			if err := ws.Write(ctx, websocket.MessageBinary, good); err != nil {
				t.Fatal(err)
			}
			if _, back, err := ws.Read(ctx); err != nil || string(back) != string(good) {
				t.Fatalf("a frame after a text message: %q %v", back, err)
			}
			if err := ws.Write(ctx, websocket.MessageBinary, tc.msg); err != nil {
				t.Fatal(err)
			}
			if _, msg, err := ws.Read(ctx); websocket.CloseStatus(err) != tc.want {
				t.Errorf("after %s: %q %v, want closed with %v", tc.name, msg, err, tc.want)
			}
		})
	}
}

// A daemon endpoint that refuses, or none at all, declines the program's
// connection: it is closed, saying to try again later.
func TestARefusedDaemonConnectionIsClosed(t *testing.T) {
	ctx := testCtx(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	t.Cleanup(refusing.Close)
	for name, daemon := range map[string]string{"refusing": "ws" + strings.TrimPrefix(refusing.URL, "http"), "none": ""} {
		t.Run(name, func(t *testing.T) {
			ws := dialDaemon(t, ctx, serveDaemonPair(t, daemon))
			if _, msg, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
				t.Errorf("%q %v, want closed with try again later", msg, err)
			}
		})
	}
}
