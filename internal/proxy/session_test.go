// session_test.go pins the session's life: dialled by the first exchange
// and not before, kept while it lives, an unreachable server reported with
// its reason, and a server that dies mid-call failing that call (never
// retried) while the next call dials afresh and succeeds.

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
)

func TestTheSessionIsDialledByTheFirstExchange(t *testing.T) {
	ctx := testCtx(t)
	srv, c := serveStreamable(t, "")
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: srv.URL, HTTPClient: srv.Client()})
	_, cancel := u.Subscribe()
	defer cancel()
	if n := c.count("initialize"); n != 0 {
		t.Fatalf("initialize sent %d times before any exchange", n)
	}
	for range 3 {
		call(t, ctx, u, "test_simple_text", "{}")
	}
	if n := c.count("initialize"); n != 1 {
		t.Errorf("initialize sent %d times for 3 exchanges, want 1", n)
	}
}

func TestTheStdioServerStartsWithTheFirstExchange(t *testing.T) {
	ctx := testCtx(t)
	path, env := startsFile(t)
	cmd, base := childCommand(env)
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: cmd, Env: base})
	if n := countLines(t, path); n != 0 {
		t.Fatalf("the server started %d times before any exchange", n)
	}
	for range 3 {
		call(t, ctx, u, "test_simple_text", "{}")
	}
	if n := countLines(t, path); n != 1 {
		t.Errorf("the server started %d times for 3 exchanges, want 1", n)
	}
}

func TestACallerThatLeavesKeepsTheSession(t *testing.T) {
	ctx := testCtx(t)
	srv, c := serveStreamable(t, "")
	c.arrived = make(chan string, 1) // before any request: no race
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: srv.URL, HTTPClient: srv.Client()})

	leaving, leave := context.WithCancel(ctx)
	go func() {
		<-c.arrived // the call is at the server
		leave()
	}()
	_, _, err := u.Exchange(leaving, "tools/call", json.RawMessage(`{"name":"block"}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	call(t, ctx, u, "test_simple_text", "{}")
	if n := c.count("initialize"); n != 1 {
		t.Errorf("initialize sent %d times, want 1: a caller leaving is no reason to re-dial", n)
	}
}

func TestConnectDialsForANotificationStream(t *testing.T) {
	ctx := testCtx(t)
	srv, c := serveStreamable(t, "")
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: srv.URL, HTTPClient: srv.Client()})
	if err := u.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	call(t, ctx, u, "test_simple_text", "{}")
	if n := c.count("initialize"); n != 1 {
		t.Errorf("initialize sent %d times, want 1", n)
	}

	down := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: closedURL(t)})
	var unreachable *UnreachableError
	if err := down.Connect(ctx); !errors.As(err, &unreachable) {
		t.Errorf("Connect to nothing: %v, want an UnreachableError", err)
	}
}

func TestAnUnreachableServerIsReportedWithItsReason(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    UpstreamConfig
		reason string
	}{
		{"streamable", UpstreamConfig{Kind: upstream.KindHTTP, URL: closedURL(t) + "/mcp"}, "connection refused"},
		{"sse", UpstreamConfig{Kind: upstream.KindSSE, URL: closedURL(t) + "/sse"}, "connection refused"},
		{"contract", UpstreamConfig{Kind: upstream.KindContract, URL: closedURL(t)}, "connection refused"},
		{"stdio", UpstreamConfig{Kind: upstream.KindStdio, Command: []string{"/nonexistent/mcp-server"}}, "no such file or directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			u := newUpstream(t, c.cfg)
			for range 2 { // and again: nothing is cached
				res, rpcErr, err := u.Exchange(ctx, "tools/list", nil)
				var unreachable *UnreachableError
				if res != nil || rpcErr != nil || !errors.As(err, &unreachable) {
					t.Fatalf("got %s, %v, %v; want an UnreachableError", res, rpcErr, err)
				}
				if !strings.Contains(err.Error(), c.reason) {
					t.Errorf("error %q does not say %q", err, c.reason)
				}
			}
		})
	}
}

func TestAServerThatDiesMidCallFailsThatCallAndTheNextRedials(t *testing.T) {
	t.Run("streamable", func(t *testing.T) {
		ctx := testCtx(t)
		srv, c := serveStreamable(t, "die")
		u := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: srv.URL, HTTPClient: srv.Client()})
		call(t, ctx, u, "test_simple_text", "{}")

		res, rpcErr, err := u.Exchange(ctx, "tools/call", json.RawMessage(`{"name":"die"}`))
		var lost *TransportError
		if res != nil || rpcErr != nil || !errors.As(err, &lost) || !strings.Contains(err.Error(), "EOF") {
			t.Fatalf("got %s, %v, %v; want a TransportError saying EOF", res, rpcErr, err)
		}
		if n := c.count("tools/call die"); n != 1 {
			t.Errorf("the dying call was sent %d times, want 1 (never retried)", n)
		}

		call(t, ctx, u, "test_simple_text", "{}")
		if n := c.count("initialize"); n != 2 {
			t.Errorf("initialize sent %d times, want 2 (the next exchange re-dials)", n)
		}
	})
	t.Run("streamable, the answer stream cut short", func(t *testing.T) {
		ctx := testCtx(t)
		srv, c := serveStreamable(t, "")
		u := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: srv.URL, HTTPClient: srv.Client()})
		call(t, ctx, u, "test_simple_text", "{}")

		// Our HTTP client answers the call itself (-32603 "transport
		// error"); that is no word of the server's and must not pass for one.
		res, rpcErr, err := u.Exchange(ctx, "tools/call", json.RawMessage(`{"name":"cut"}`))
		var lost *TransportError
		if res != nil || rpcErr != nil || !errors.As(err, &lost) || !strings.Contains(err.Error(), "ended before the response") {
			t.Fatalf("got %s, %v, %v; want a TransportError", res, rpcErr, err)
		}
		call(t, ctx, u, "test_simple_text", "{}")
		if n := c.count("initialize"); n != 2 {
			t.Errorf("initialize sent %d times, want 2 (the next exchange re-dials)", n)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		ctx := testCtx(t)
		path, env := startsFile(t)
		cmd, base := childCommand(env)
		u := newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: cmd, Env: base, Restart: upstream.Backoff{Base: 1}})
		call(t, ctx, u, "test_simple_text", "{}")

		res, rpcErr, err := u.Exchange(ctx, "tools/call", json.RawMessage(`{"name":"exit"}`))
		var lost *TransportError
		if res != nil || rpcErr != nil || !errors.As(err, &lost) || !strings.Contains(err.Error(), "exit status 3") {
			t.Fatalf("got %s, %v, %v; want a TransportError with the exit status", res, rpcErr, err)
		}

		call(t, ctx, u, "test_simple_text", "{}")
		if n := countLines(t, path); n != 2 {
			t.Errorf("the server started %d times, want 2 (restarted once)", n)
		}
	})
}

func TestUpstreamConfigIsValidated(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  UpstreamConfig
		key  string // the error names it
	}{
		{"unknown kind", UpstreamConfig{Kind: "ftp"}, "Kind"},
		{"http without URL", UpstreamConfig{Kind: upstream.KindHTTP}, "URL"},
		{"sse with a relative URL", UpstreamConfig{Kind: upstream.KindSSE, URL: "/sse"}, "URL"},
		{"stdio without command", UpstreamConfig{Kind: upstream.KindStdio}, "Command"},
		{"contract with a bad URL", UpstreamConfig{Kind: upstream.KindContract, URL: "ftp://x"}, "URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewUpstream(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.key) {
				t.Errorf("err = %v, want one naming %s", err, c.key)
			}
		})
	}
}

func TestTheContractUpstreamDefaultsToPORT(t *testing.T) {
	t.Setenv("PORT", "9123")
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindContract})
	if got, want := u.cfg.URL, "http://127.0.0.1:9123"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if got := ContractURL(""); got != "http://127.0.0.1:8080" {
		t.Errorf("ContractURL(\"\") = %q", got)
	}
}

func TestSecretsCannotBeFedToAURL(t *testing.T) {
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: closedURL(t)})
	if _, err := u.FeedSecrets(testCtx(t), map[string]string{"A": "b"}); !errors.Is(err, ErrNoProgram) {
		t.Errorf("err = %v, want ErrNoProgram", err)
	}
}

func TestAServerInACrashLoopIsReportedAtOnce(t *testing.T) {
	ctx := testCtx(t)
	cmd, env := crashingCommand()
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: cmd, Env: env, Restart: upstream.Backoff{Base: time.Minute}})

	var unreachable *UnreachableError
	_, _, err := u.Exchange(ctx, "tools/list", nil)
	if !errors.As(err, &unreachable) || !strings.Contains(err.Error(), "exit status 7") {
		t.Fatalf("first exchange: %v; want an UnreachableError with the exit status", err)
	}
	// The restart is a minute away: the next exchange does not wait for it.
	_, _, err = u.Exchange(ctx, "tools/list", nil)
	if !errors.As(err, &unreachable) || !strings.Contains(err.Error(), "exit status 7") || !strings.Contains(err.Error(), "restarting in") {
		t.Fatalf("second exchange: %v; want the exit status and when it restarts", err)
	}
}
