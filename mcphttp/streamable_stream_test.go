// streamable_stream_test.go pins the Streamable HTTP transport's streams:
// when a POST is answered as an event stream rather than JSON, the
// standalone GET stream and its resumption with Last-Event-ID, a stalled
// GET stream that must block no POST, and concurrency within one session
// (parallel calls, a slow call beside a fast one, a sampling answer posted
// while its call is open).

package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

func TestStreamableAnswerMediaType(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	const (
		jsonFirst = "application/json, text/event-stream"
		sseFirst  = "text/event-stream, application/json"
	)
	progressCall := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"tok"}}}`
	for _, tc := range []struct {
		name     string
		accept   string
		body     string
		stream   bool
		progress int // progress events before the answer
		text     string
	}{
		{"Accept ranking text/event-stream first is answered as a stream", sseFirst, stCallBody(9, "echo", `{"text":"a"}`), true, 0, "echo: a"},
		{"Accept ranking application/json first is answered as JSON", jsonFirst, stCallBody(9, "echo", `{"text":"a"}`), false, 0, "echo: a"},
		{"q-values outrank the order", "application/json;q=0.5, text/event-stream", stCallBody(9, "echo", `{"text":"a"}`), true, 0, "echo: a"},
		{"JSON first turns into a stream when progress comes first", jsonFirst, progressCall, true, 3, "progressed"},
		{"a stream carries progress before the answer", sseFirst, progressCall, true, 3, "progressed"},
		{"without a progress token, JSON stays JSON", jsonFirst, stCallBody(9, "progress", `{}`), false, 0, "progressed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(sid, tc.body, "Accept", tc.accept)
			if r.status != 200 {
				t.Fatalf("status = %d: %s", r.status, r.body)
			}
			if r.header.Get(HeaderSessionID) != sid {
				t.Errorf("Mcp-Session-Id = %q, want %q", r.header.Get(HeaderSessionID), sid)
			}
			ct := r.header.Get("Content-Type")
			if !tc.stream {
				if ct != "application/json" {
					t.Fatalf("Content-Type = %q, want application/json", ct)
				}
				if got := stText(t, stMessage(t, r.body)); got != tc.text {
					t.Errorf("text = %q", got)
				}
				return
			}
			if ct != "text/event-stream" {
				t.Fatalf("Content-Type = %q, want text/event-stream", ct)
			}
			evs := stEvents(t, r.body)
			if len(evs) != tc.progress+1 {
				t.Fatalf("%d events, want %d progress and the answer: %q", len(evs), tc.progress, r.body)
			}
			seen := map[string]bool{}
			for i, ev := range evs {
				if ev.ID == "" || seen[ev.ID] {
					t.Errorf("event %d has id %q (ids must be present and distinct)", i, ev.ID)
				}
				seen[ev.ID] = true
				m := stMessage(t, ev.Data)
				if i < tc.progress {
					tok, _ := jsonrpc.Lookup(m.Params, "progressToken")
					if m.Method != "notifications/progress" || string(tok) != `"tok"` {
						t.Errorf("event %d = %s, want progress for tok", i, ev.Data)
					}
					continue
				}
				if string(m.ID) != "9" || stText(t, m) != tc.text {
					t.Errorf("last event = %s, want the answer", ev.Data)
				}
			}
		})
	}
}

func TestStreamableGetStream(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	if r := e.post(sid, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://watched"}}`); r.status != 200 {
		t.Fatalf("subscribe = %d: %s", r.status, r.body)
	}
	first, events := e.openGet(sid)
	if first.Header.Get(HeaderSessionID) != sid {
		t.Errorf("GET's Mcp-Session-Id = %q", first.Header.Get(HeaderSessionID))
	}

	t.Run("a second concurrent GET is 409", func(t *testing.T) {
		r := e.do(http.MethodGet, stHeaders(sid, "Accept", "text/event-stream"), "")
		if r.status != http.StatusConflict {
			t.Fatalf("second GET = %d, want 409: %s", r.status, r.body)
		}
	})
	t.Run("a resource update after subscribe arrives with an id", func(t *testing.T) {
		s.ResourceUpdated("mem://other") // not subscribed: not sent
		s.ResourceUpdated("mem://watched")
		ev, m := stNextMessage(t, events)
		uri, _ := jsonrpc.LookupString(m.Params, "uri")
		if m.Method != "notifications/resources/updated" || uri != "mem://watched" {
			t.Fatalf("event = %s", ev.Data)
		}
		if ev.ID == "" {
			t.Error("the event has no id, so it cannot be resumed from")
		}
	})
	t.Run("a GET after the first one ends is accepted", func(t *testing.T) {
		_ = first.Body.Close()
		var status int
		testkit.WaitFor(t, "the server to let go of the first stream", func() bool {
			resp := e.open(http.MethodGet, stHeaders(sid, "Accept", "text/event-stream"), "")
			status = resp.StatusCode
			_ = resp.Body.Close()
			return status != http.StatusConflict
		})
		if status != http.StatusOK {
			t.Errorf("GET = %d", status)
		}
	})
}

func TestStreamableResumption(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	if r := e.post(sid, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://watched"}}`); r.status != 200 {
		t.Fatalf("subscribe = %d: %s", r.status, r.body)
	}
	stream, events := e.openGet(sid)
	s.ResourceUpdated("mem://watched")
	seen, _ := stNextMessage(t, events)

	// The stream breaks; what is sent meanwhile is kept for the client.
	_ = stream.Body.Close()
	s.ResourceUpdated("mem://watched")
	s.ResourceUpdated("mem://watched")

	var resumed *sse.Reader
	testkit.WaitFor(t, "the server to let go of the broken stream", func() bool {
		resp := e.open(http.MethodGet, stHeaders(sid, "Accept", "text/event-stream", "Last-Event-ID", seen.ID), "")
		if resp.StatusCode == http.StatusConflict {
			_ = resp.Body.Close()
			return false
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("resuming GET = %d", resp.StatusCode)
		}
		resumed = sse.NewReader(resp.Body, 0)
		return true
	})
	var ids []string
	for range 2 {
		ev, m := stNextMessage(t, resumed)
		if m.Method != "notifications/resources/updated" {
			t.Errorf("replayed %s", ev.Data)
		}
		ids = append(ids, ev.ID)
	}
	if ids[0] == seen.ID || ids[0] == ids[1] || ids[0] == "" || ids[1] == "" {
		t.Errorf("replayed ids %v after %q: want the two events after it, in order", ids, seen.ID)
	}
	// Live events follow the replay on the same stream.
	s.ResourceUpdated("mem://watched")
	if ev, _ := stNextMessage(t, resumed); ev.ID == ids[1] || ev.ID == "" {
		t.Errorf("live event id %q after replayed %v", ev.ID, ids)
	}
}

func TestStreamableResumptionFromAnUnknownIDReplaysNothing(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	e.post(sid, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://watched"}}`)
	s.ResourceUpdated("mem://watched") // kept in the log, sent nowhere
	_, events := e.openGet(sid, "Last-Event-ID", "no-such-event")
	s.ResourceUpdated("mem://watched")
	ev, _ := stNextMessage(t, events)
	if ev.ID != "0-2" {
		t.Errorf("first event on the stream is %q, want only the live one (0-2)", ev.ID)
	}
}

// stStaller stands in for a client that stops reading its GET stream:
// once the stream is open, writes to it block until release.
type stStaller struct {
	entered chan struct{} // a write is stalled
	release chan struct{}
	once    sync.Once
}

func (s *stStaller) unstall() { s.once.Do(func() { close(s.release) }) }

func (s *stStaller) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("X-Test-Stall") != "" {
			w = &stStalledWriter{ResponseWriter: w, s: s}
		}
		next.ServeHTTP(w, r)
	})
}

type stStalledWriter struct {
	http.ResponseWriter
	s *stStaller
}

func (w *stStalledWriter) Write(p []byte) (int, error) {
	select {
	case w.s.entered <- struct{}{}:
	default:
	}
	<-w.s.release
	return w.ResponseWriter.Write(p)
}

func (w *stStalledWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestStreamableStalledStreamBlocksNoPost(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	stall := &stStaller{entered: make(chan struct{}, 1), release: make(chan struct{})}
	e := newStEnv(t, s, Options{}, stall.wrap)
	t.Cleanup(stall.unstall) // runs before the handler closes
	ctx := testkit.Context(t)
	sid := e.initialize("", mcp.Version20251125)
	e.post(sid, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://watched"}}`)
	e.openGet(sid, "X-Test-Stall", "1")
	notified := make(chan struct{})
	go func() {
		defer close(notified)
		s.ResourceUpdated("mem://watched")
	}()
	stReceive(t, ctx, stall.entered, "the stream's write to stall")

	for _, accept := range []string{"application/json, text/event-stream", "text/event-stream, application/json"} {
		r := e.post(sid, stCallBody(2, "echo", `{"text":"still here"}`), "Accept", accept)
		if r.status != 200 || !bytes.Contains(r.body, []byte("echo: still here")) {
			t.Errorf("POST (%s) while the GET stream is stalled = %d %s", accept, r.status, r.body)
		}
	}
	stall.unstall()
	stReceive(t, ctx, notified, "the notification to be written once the client reads again")
}

func TestStreamableConcurrentCallsOnOneSession(t *testing.T) {
	testkit.LeakCheck(t)
	const n = 32
	s, _ := stNewServer(t)
	var arrived atomic.Int32
	all := make(chan struct{})
	// barrier answers only once all n calls are inside it: served one at a
	// time, the first would wait forever.
	err := s.AddTools(&mcp.Tool{Name: "barrier", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("through")}})
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	var wg sync.WaitGroup
	replies := make([]stReply, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = e.post(sid, stCallBody(100+i, "barrier", `{}`))
		}()
	}
	wg.Wait()
	for i, r := range replies {
		m := stMessage(t, r.body)
		if r.status != 200 || string(m.ID) != fmt.Sprint(100+i) || stText(t, m) != "through" {
			t.Errorf("call %d = %d %s", i, r.status, r.body)
		}
	}
}

func TestStreamableSlowCallDoesNotBlockAFastOne(t *testing.T) {
	testkit.LeakCheck(t)
	s, probe := stNewServer(t)
	e := newStEnv(t, s, Options{})
	ctx := testkit.Context(t)
	sid := e.initialize("", mcp.Version20251125)
	slow := make(chan stReply, 1)
	go func() { slow <- e.post(sid, stCallBody(1, "slow", `{}`)) }()
	stReceive(t, ctx, probe.started, "the slow call to start")

	fast := e.post(sid, stCallBody(2, "echo", `{"text":"fast"}`))
	if got := stText(t, stMessage(t, fast.body)); got != "echo: fast" {
		t.Fatalf("fast call = %s", fast.body)
	}
	select {
	case r := <-slow:
		t.Fatalf("the slow call finished before it was released: %s", r.body)
	default:
	}
	close(probe.release)
	if got := stText(t, stMessage(t, stReceive(t, ctx, slow, "the slow call").body)); got != "slow done" {
		t.Errorf("slow call = %q", got)
	}
}

func TestStreamableSamplingAnswerWhileTheCallIsOpen(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	resp := e.open(http.MethodPost, stHeaders(sid), stCallBody(4, "sample", `{}`))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tools/call = %d %s, want a stream carrying the server's request", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := sse.NewReader(resp.Body, 0)
	_, req := stNextMessage(t, events)
	if req.Method != "sampling/createMessage" || !req.IsRequest() {
		t.Fatalf("first event = %s %s, want a sampling request", req.Method, req.Params)
	}
	answer := `{"jsonrpc":"2.0","id":` + string(req.ID) +
		`,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"from the client"}}}`
	if r := e.post(sid, answer); r.status != http.StatusAccepted || len(r.body) != 0 {
		t.Fatalf("the client's answer = %d %q, want 202 while the call is open", r.status, r.body)
	}
	_, res := stNextMessage(t, events)
	if string(res.ID) != "4" || stText(t, res) != "sampled: from the client" {
		t.Fatalf("answer = %s %s", res.ID, res.Result)
	}
}

// A POST's event stream opens with a priming event (SEP-1699): an id to
// resume from, a retry field, and empty data — for 2025-11-25 sessions;
// older clients get none.
func TestStreamablePOSTStreamsOpenWithAPrimingEvent(t *testing.T) {
	testkit.LeakCheck(t)
	for _, tt := range []struct {
		version string
		priming bool
	}{{mcp.Version20251125, true}, {mcp.Version20250618, false}} {
		s, _ := stNewServer(t)
		e := newStEnv(t, s, Options{})
		sid := e.initialize("", tt.version)
		r := e.post(sid, stCallBody(9, "echo", `{"text":"a"}`), "Accept", "text/event-stream, application/json", HeaderProtocolVersion, tt.version)
		rd := sse.NewReader(bytes.NewReader(r.body), 0)
		first, err := rd.Next()
		if err != nil {
			t.Fatalf("%s: %v in %q", tt.version, err, r.body)
		}
		isPriming := first.ID != "" && len(first.Data) == 0 && first.Retry == 1000
		if isPriming != tt.priming {
			t.Errorf("%s: first event %+v (priming %v), want priming %v", tt.version, first, isPriming, tt.priming)
		}
		if got := stEvents(t, r.body); len(got) != 1 {
			t.Errorf("%s: %d messages, want the answer alone", tt.version, len(got))
		}
	}
}
