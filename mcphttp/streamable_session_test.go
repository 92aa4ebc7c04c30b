// streamable_session_test.go pins the life of a Streamable HTTP session:
// initialize and the revision it answers, the binding of a session to the
// identity that opened it, DELETE, stateless mode (no sessions at all),
// the idle reaper, the session cap, and Handler.Close ending everything.

package mcphttp

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestStreamableInitialize(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	for _, tc := range []struct{ name, asked, answered string }{
		{"a supported revision is answered as asked", mcp.Version20251125, mcp.Version20251125},
		{"an older supported revision is answered as asked", mcp.Version20250326, mcp.Version20250326},
		{"an unknown revision is answered with the newest", "2099-01-01", mcp.LatestVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.h.Sessions()
			r := e.post("", stInitBody(tc.asked))
			if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("initialize = %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			sid := r.header.Get(HeaderSessionID)
			if len(sid) < 32 || strings.Trim(sid, "0123456789abcdef") != "" {
				t.Errorf("Mcp-Session-Id = %q, want an unguessable visible-ASCII id", sid)
			}
			if v, _ := jsonrpc.LookupString(stMessage(t, r.body).Result, "protocolVersion"); v != tc.answered {
				t.Errorf("protocolVersion = %q, want %q", v, tc.answered)
			}
			if e.h.Sessions() != before+1 {
				t.Errorf("Sessions = %d, want %d", e.h.Sessions(), before+1)
			}
		})
	}
	t.Run("each initialize opens a session of its own", func(t *testing.T) {
		a, b := e.initialize("", mcp.Version20251125), e.initialize("", mcp.Version20251125)
		if a == b {
			t.Fatalf("two sessions share the id %s", a)
		}
	})
	t.Run("a refused initialize opens no session", func(t *testing.T) {
		before := e.h.Sessions()
		r := e.post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
		if r.header.Get(HeaderSessionID) != "" {
			t.Errorf("a refused initialize issued session %s", r.header.Get(HeaderSessionID))
		}
		if code := stErrorCode(t, stMessage(t, r.body)); code != jsonrpc.CodeInvalidParams {
			t.Errorf("code = %d, want -32602: %s", code, r.body)
		}
		if e.h.Sessions() != before || s.Sessions() != before {
			t.Errorf("Sessions = %d (server %d), want %d", e.h.Sessions(), s.Sessions(), before)
		}
	})
}

func TestStreamableSessionBoundToIdentity(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sidA := e.initialize("alice", mcp.Version20251125)
	const unknown = "ffffffffffffffffffffffffffffffff"
	for _, tc := range []struct {
		name   string
		method string
		header func(sid, who string) http.Header
		body   string
	}{
		{"POST", http.MethodPost, func(sid, who string) http.Header { return stHeaders(sid, "X-Test-Identity", who) }, stPing},
		{"GET", http.MethodGet, func(sid, who string) http.Header {
			return stHeaders(sid, "X-Test-Identity", who, "Accept", "text/event-stream")
		}, ""},
		{"DELETE", http.MethodDelete, func(sid, who string) http.Header { return stHeaders(sid, "X-Test-Identity", who) }, ""},
	} {
		for _, who := range []string{"bob", ""} {
			t.Run(tc.name+" by another identity ("+who+") is 404 like an unknown id", func(t *testing.T) {
				stolen := e.do(tc.method, tc.header(sidA, who), tc.body)
				missing := e.do(tc.method, tc.header(unknown, who), tc.body)
				if stolen.status != http.StatusNotFound {
					t.Fatalf("status = %d, want 404: %s", stolen.status, stolen.body)
				}
				if stolen.status != missing.status || !bytes.Equal(stolen.body, missing.body) ||
					stolen.header.Get("Content-Type") != missing.header.Get("Content-Type") {
					t.Errorf("another's session answered %d %q, an unknown one %d %q", stolen.status, stolen.body, missing.status, missing.body)
				}
			})
		}
	}
	t.Run("the owner still has the session", func(t *testing.T) {
		if r := e.post(sidA, stPing, "X-Test-Identity", "alice"); r.status != 200 {
			t.Fatalf("owner's ping = %d: %s", r.status, r.body)
		}
	})
}

func TestStreamableDeleteEndsSession(t *testing.T) {
	testkit.LeakCheck(t)
	s, probe := stNewServer(t)
	e := newStEnv(t, s, Options{})
	ctx := testkit.Context(t)
	sid := e.initialize("", mcp.Version20251125)
	stream, _ := e.openGet(sid)

	call := make(chan stReply, 1)
	go func() { call <- e.post(sid, stCallBody(5, "block", `{}`)) }()
	stReceive(t, ctx, probe.started, "the blocking call to start")

	if r := e.do(http.MethodDelete, stHeaders(sid), ""); r.status != http.StatusOK {
		t.Fatalf("DELETE = %d: %s", r.status, r.body)
	}
	if got := stReceive(t, ctx, probe.cancelled, "the in-flight call to be cancelled"); got != "block" {
		t.Fatalf("cancelled %q", got)
	}
	stReceive(t, ctx, call, "the cancelled call's POST to end")
	if _, err := io.Copy(io.Discard, stream.Body); err != nil {
		t.Errorf("the GET stream ended with %v, want a clean end", err)
	}
	for _, tc := range []struct {
		name   string
		method string
		header http.Header
		body   string
	}{
		{"POST to an ended session is 404", http.MethodPost, stHeaders(sid), stPing},
		{"GET of an ended session is 404", http.MethodGet, stHeaders(sid, "Accept", "text/event-stream"), ""},
		{"DELETE of an ended session is 404", http.MethodDelete, stHeaders(sid), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := e.do(tc.method, tc.header, tc.body); r.status != http.StatusNotFound {
				t.Errorf("status = %d, want 404: %s", r.status, r.body)
			}
		})
	}
	if e.h.Sessions() != 0 || s.Sessions() != 0 {
		t.Errorf("Sessions = %d (server %d) after DELETE", e.h.Sessions(), s.Sessions())
	}
}

func TestStreamableStateless(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{Stateless: true})
	t.Run("initialize works without a session and issues none", func(t *testing.T) {
		r := e.post("", stInitBody(mcp.Version20251125))
		if r.status != 200 || r.header.Get(HeaderSessionID) != "" {
			t.Fatalf("initialize = %d, session %q: %s", r.status, r.header.Get(HeaderSessionID), r.body)
		}
		if v, _ := jsonrpc.LookupString(stMessage(t, r.body).Result, "protocolVersion"); v != mcp.Version20251125 {
			t.Errorf("protocolVersion = %q", v)
		}
	})
	t.Run("tools/call works with no session", func(t *testing.T) {
		r := e.post("", stCallBody(3, "echo", `{"text":"x"}`), HeaderProtocolVersion, mcp.Version20251125)
		if r.status != 200 || r.header.Get(HeaderSessionID) != "" {
			t.Fatalf("tools/call = %d, session %q: %s", r.status, r.header.Get(HeaderSessionID), r.body)
		}
		if got := stText(t, stMessage(t, r.body)); got != "echo: x" {
			t.Errorf("text = %q", got)
		}
	})
	t.Run("a notification is 202", func(t *testing.T) {
		if r := e.post("", stInitialized); r.status != 202 || len(r.body) != 0 {
			t.Errorf("notification = %d %q", r.status, r.body)
		}
	})
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		t.Run(m+" is 405 with Allow POST", func(t *testing.T) {
			r := e.do(m, stHeaders("", "Accept", "text/event-stream, application/json"), "")
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
				t.Errorf("%s = %d, Allow %q", m, r.status, r.header.Get("Allow"))
			}
		})
	}
	if e.h.Sessions() != 0 || s.Sessions() != 0 {
		t.Errorf("stateless mode keeps %d sessions (server %d)", e.h.Sessions(), s.Sessions())
	}
}

func TestStreamableIdleReaper(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{IdleTimeout: 50 * time.Millisecond})
	idle := e.initialize("", mcp.Version20251125)
	streaming := e.initialize("", mcp.Version20251125)
	e.openGet(streaming) // an open stream keeps its session busy

	testkit.WaitFor(t, "the idle session to be reaped", func() bool { return e.h.Sessions() == 1 })
	if r := e.post(idle, stPing); r.status != http.StatusNotFound {
		t.Errorf("reaped session answered %d, want 404", r.status)
	}
	if r := e.post(streaming, stPing); r.status != http.StatusOK {
		t.Errorf("session with an open stream answered %d, want 200: it was reaped although busy", r.status)
	}
	if s.Sessions() != 1 {
		t.Errorf("server sessions = %d: a reaped session was not closed", s.Sessions())
	}
}

func TestStreamableMaxSessions(t *testing.T) {
	testkit.LeakCheck(t)
	t.Run("beyond the cap with no idle session is 503", func(t *testing.T) {
		s, _ := stNewServer(t)
		e := newStEnv(t, s, Options{MaxSessions: 1})
		busy := e.initialize("", mcp.Version20251125)
		e.openGet(busy)
		r := e.post("", stInitBody(mcp.Version20251125))
		if r.status != http.StatusServiceUnavailable || r.header.Get(HeaderSessionID) != "" {
			t.Fatalf("initialize beyond the cap = %d, session %q", r.status, r.header.Get(HeaderSessionID))
		}
		if e.h.Sessions() != 1 {
			t.Errorf("Sessions = %d", e.h.Sessions())
		}
	})
	t.Run("beyond the cap the least recently used idle session makes room, and only it", func(t *testing.T) {
		s, _ := stNewServer(t)
		e := newStEnv(t, s, Options{MaxSessions: 2})
		older := e.initialize("", mcp.Version20251125)
		newer := e.initialize("", mcp.Version20251125)
		e.post(newer, stPing) // newer is the more recently used
		third := e.initialize("", mcp.Version20251125)
		if r := e.post(older, stPing); r.status != http.StatusNotFound {
			t.Errorf("least recently used session answered %d, want 404 (evicted)", r.status)
		}
		for _, sid := range []string{newer, third} {
			if r := e.post(sid, stPing); r.status != http.StatusOK {
				t.Errorf("session %s answered %d, want 200: more was evicted than needed", sid, r.status)
			}
		}
	})
}

func TestStreamableCloseEndsEverything(t *testing.T) {
	testkit.LeakCheck(t)
	s, probe := stNewServer(t)
	e := newStEnv(t, s, Options{})
	ctx := testkit.Context(t)
	sid := e.initialize("", mcp.Version20251125)
	e.initialize("", mcp.Version20250618)
	stream, _ := e.openGet(sid)
	call := make(chan stReply, 1)
	go func() { call <- e.post(sid, stCallBody(5, "block", `{}`)) }()
	stReceive(t, ctx, probe.started, "the blocking call to start")

	e.h.Close()
	stReceive(t, ctx, probe.cancelled, "the in-flight call to be cancelled")
	stReceive(t, ctx, call, "the cancelled call's POST to end")
	if _, err := io.Copy(io.Discard, stream.Body); err != nil {
		t.Errorf("GET stream ended with %v", err)
	}
	if e.h.Sessions() != 0 || s.Sessions() != 0 {
		t.Errorf("after Close: Sessions = %d, server sessions = %d", e.h.Sessions(), s.Sessions())
	}
	if r := e.post(sid, stPing); r.status != http.StatusNotFound {
		t.Errorf("a closed session answered %d", r.status)
	}
	e.h.Close() // twice is fine
}
