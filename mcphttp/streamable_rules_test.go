// streamable_rules_test.go pins the HTTP-level rules of the Streamable HTTP
// server transport (docs/spec §3) with raw requests over a loopback socket:
// the status codes for a wrong Accept or Content-Type, a method not
// allowed, an unknown or missing session, an unsupported revision and
// malformed JSON (406, 415, 405, 404, 400); the body limit (413); batches,
// only where the revision allows them; and result bytes kept as they are.

package mcphttp

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestStreamableHTTPRules(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	const unknown = "00000000000000000000000000000000"

	type row struct {
		name   string
		method string
		header http.Header
		body   string
		status int
		code   int64  // JSON-RPC error code in the body; 0: none expected
		allow  string // Allow header expected
		empty  bool   // the body must be empty
	}
	rows := []row{
		{name: "POST with only application/json in Accept is 406", method: "POST", header: stHeaders(sid, "Accept", "application/json"), body: stPing, status: 406, code: -32600},
		{name: "POST with only text/event-stream in Accept is 406", method: "POST", header: stHeaders(sid, "Accept", "text/event-stream"), body: stPing, status: 406, code: -32600},
		{name: "POST with */* alone in Accept is 406", method: "POST", header: stHeaders(sid, "Accept", "*/*"), body: stPing, status: 406, code: -32600},
		{name: "POST with wildcards for both types is 406", method: "POST", header: stHeaders(sid, "Accept", "application/*, text/*"), body: stPing, status: 406, code: -32600},
		{name: "POST without Accept is 406", method: "POST", header: stHeaders(sid, "Accept", ""), body: stPing, status: 406, code: -32600},
		{name: "POST with both types in reverse order is served", method: "POST", header: stHeaders(sid, "Accept", "text/event-stream, application/json"), body: stPing, status: 200},
		{name: "POST with both types and parameters is served", method: "POST", header: stHeaders(sid, "Accept", "application/json;q=0.9, text/event-stream;q=0.8"), body: stPing, status: 200},
		{name: "Content-Type text/plain is 415", method: "POST", header: stHeaders(sid, "Content-Type", "text/plain"), body: stPing, status: 415, code: -32600},
		{name: "Content-Type application/jsonx is 415", method: "POST", header: stHeaders(sid, "Content-Type", "application/jsonx"), body: stPing, status: 415, code: -32600},
		{name: "missing Content-Type is 415", method: "POST", header: stHeaders(sid, "Content-Type", ""), body: stPing, status: 415, code: -32600},
		{name: "Content-Type with a charset parameter is served", method: "POST", header: stHeaders(sid, "Content-Type", "application/json; charset=utf-8"), body: stPing, status: 200},
		{name: "PUT is 405 with Allow", method: "PUT", header: stHeaders(sid), body: stPing, status: 405, allow: "GET, POST, DELETE"},
		{name: "PATCH is 405 with Allow", method: "PATCH", header: stHeaders(sid), body: stPing, status: 405, allow: "GET, POST, DELETE"},
		{name: "unknown session id on POST is 404", method: "POST", header: stHeaders(unknown), body: stPing, status: 404, code: -32600},
		{name: "unknown session id on GET is 404", method: "GET", header: stHeaders(unknown, "Accept", "text/event-stream"), status: 404},
		{name: "unknown session id on DELETE is 404", method: "DELETE", header: stHeaders(unknown), status: 404},
		{name: "missing session id on a request is 400", method: "POST", header: stHeaders(""), body: stPing, status: 400, code: -32600},
		{name: "missing session id on a notification is 400", method: "POST", header: stHeaders(""), body: stInitialized, status: 400},
		{name: "missing session id on GET is 400", method: "GET", header: stHeaders("", "Accept", "text/event-stream"), status: 400},
		{name: "missing session id on DELETE is 400", method: "DELETE", header: stHeaders(""), status: 400},
		{name: "tools/call before any initialize is 400", method: "POST", header: stHeaders(""), body: stCallBody(2, "echo", `{"text":"x"}`), status: 400},
		{name: "tools/call on an unknown session path is 404", method: "POST", header: stHeaders(unknown), body: stCallBody(2, "echo", `{"text":"x"}`), status: 404},
		{name: "unsupported MCP-Protocol-Version is 400", method: "POST", header: stHeaders(sid, HeaderProtocolVersion, "1999-01-01"), body: stPing, status: 400, code: -32600},
		{name: "unsupported MCP-Protocol-Version on GET is 400", method: "GET", header: stHeaders(sid, "Accept", "text/event-stream", HeaderProtocolVersion, "2026-13-01"), status: 400},
		{name: "invalid JSON is 400 with -32700 and id null", method: "POST", header: stHeaders(sid), body: `{"jsonrpc":"2.0","id":1,"method":`, status: 400, code: -32700},
		{name: "a notification is 202 with an empty body", method: "POST", header: stHeaders(sid), body: `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, status: 202, empty: true},
		{name: "a response is 202 with an empty body", method: "POST", header: stHeaders(sid), body: `{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`, status: 202, empty: true},
		{name: "an error response is 202 with an empty body", method: "POST", header: stHeaders(sid), body: `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}`, status: 202, empty: true},
		{name: "a second initialize on a session is 400", method: "POST", header: stHeaders(sid), body: stInitBody(mcp.Version20251125), status: 400, code: -32600},
		{name: "GET without text/event-stream in Accept is 406", method: "GET", header: stHeaders(sid, "Accept", "application/json"), status: 406},
		{name: "GET with */* alone is 406", method: "GET", header: stHeaders(sid, "Accept", "*/*"), status: 406},
	}
	for _, v := range mcp.SupportedVersions() {
		rows = append(rows, row{name: "MCP-Protocol-Version " + v + " is accepted whatever was negotiated",
			method: "POST", header: stHeaders(sid, HeaderProtocolVersion, v), body: stPing, status: 200})
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.header, tc.body)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.allow != "" && r.header.Get("Allow") != tc.allow {
				t.Errorf("Allow = %q, want %q", r.header.Get("Allow"), tc.allow)
			}
			if tc.empty && len(r.body) != 0 {
				t.Errorf("body = %q, want none", r.body)
			}
			if tc.code != 0 {
				m := stMessage(t, r.body)
				if got := stErrorCode(t, m); got != tc.code {
					t.Errorf("error code = %d, want %d: %s", got, tc.code, r.body)
				}
				if m.ID != nil {
					t.Errorf("error id = %s, want null", m.ID)
				}
			}
		})
	}
	if e.h.Sessions() != 1 {
		t.Errorf("Sessions = %d after the refusals, want 1", e.h.Sessions())
	}
}

func TestStreamableBodyLimit(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	const limit = 1 << 10
	e := newStEnv(t, s, Options{MaxBodyBytes: limit})
	sid := e.initialize("", mcp.Version20251125)
	// pad makes a ping of exactly n bytes. A server that truncated it would
	// see invalid JSON (400), not a ping (200).
	pad := func(n int) string {
		const head, tail = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`, `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	if len(pad(limit)) != limit {
		t.Fatalf("pad is %d bytes", len(pad(limit)))
	}
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool
		status  int
	}{
		{"a body at the limit is served", pad(limit), false, 200},
		{"a chunked body at the limit is served", pad(limit), true, 200},
		{"a body over the limit with Content-Length is 413", pad(limit + 1), false, 413},
		{"a chunked body over the limit is 413, never truncated", pad(limit + 1), true, 413},
		{"a chunked body far over the limit is 413", pad(64 * limit), true, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // unknown length: sent chunked
			}
			req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, e.url, body)
			req.Header = stHeaders(sid)
			if tc.chunked && req.ContentLength != 0 {
				t.Fatal("the request would not be chunked")
			}
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status == 200 {
				if m := stMessage(t, b); string(m.ID) != "1" || m.Result == nil {
					t.Errorf("answer = %s", b)
				}
			}
		})
	}
}

func TestStreamableBatch(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	old := e.initialize("", mcp.Version20250326)
	current := e.initialize("", mcp.Version20251125)
	for _, tc := range []struct {
		name   string
		sid    string
		body   string
		status int
		code   int64    // of the single error answer
		ids    []string // of the array answer
	}{
		{name: "a batch under 2025-11-25 is 400 with -32600", sid: current, body: `[` + stPing + `]`, status: 400, code: -32600},
		{name: "a batch under 2025-03-26 is answered as an array", sid: old,
			body:   `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` + stCallBody(2, "echo", `{"text":"b"}`) + `]`,
			status: 200, ids: []string{"1", "2"}},
		{name: "a bad element gets its own error in the array", sid: old,
			body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":3,"method":"ping"}]`, status: 200, ids: []string{"1", "3"}},
		{name: "an empty batch is -32600", sid: old, body: `[]`, status: 400, code: -32600},
		{name: "initialize inside a batch is refused", sid: old, body: `[` + stInitBody(mcp.Version20250326) + `]`, status: 400, code: -32600},
		{name: "a batch of notifications only is 202", sid: old, body: `[` + stInitialized + `]`, status: 202},
		{name: "a malformed batch is -32700", sid: old, body: `[{"jsonrpc":"2.0",`, status: 400, code: -32700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(tc.sid, tc.body)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.code != 0 {
				if got := stErrorCode(t, stMessage(t, r.body)); got != tc.code {
					t.Errorf("code = %d, want %d: %s", got, tc.code, r.body)
				}
			}
			if tc.ids != nil {
				var answers []json.RawMessage
				if err := json.Unmarshal(r.body, &answers); err != nil {
					t.Fatalf("not an array: %s", r.body)
				}
				var ids []string
				for _, a := range answers {
					ids = append(ids, string(stMessage(t, a).ID))
				}
				if strings.Join(ids, ",") != strings.Join(tc.ids, ",") {
					t.Errorf("answer ids = %v, want %v: %s", ids, tc.ids, r.body)
				}
			}
		})
	}
}

func TestStreamableResultBytesAreKept(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	if !json.Valid([]byte(stRawResult)) {
		t.Fatal("stRawResult is not JSON")
	}
	t.Run("JSON answer", func(t *testing.T) {
		r := e.post(sid, stCallBody(6, "raw", `{}`))
		if r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("Content-Type = %q", r.header.Get("Content-Type"))
		}
		if got := stMessage(t, r.body).Result; string(got) != stRawResult {
			t.Errorf("result bytes changed:\n got %s\nwant %s", got, stRawResult)
		}
	})
	t.Run("event-stream answer", func(t *testing.T) {
		r := e.post(sid, stCallBody(6, "raw", `{}`), "Accept", "text/event-stream, application/json")
		evs := stEvents(t, r.body)
		if len(evs) != 1 {
			t.Fatalf("%d events: %q", len(evs), r.body)
		}
		if got := stMessage(t, evs[0].Data).Result; string(got) != stRawResult {
			t.Errorf("result bytes changed:\n got %s\nwant %s", got, stRawResult)
		}
	})
}

// An answer sent as plain JSON says its length, small or large: past
// net/http's own buffer it would otherwise go chunked, and a client would
// read it into a buffer grown step by step.
func TestAJSONAnswerSaysItsLength(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	for _, n := range []int{1, chunkedPast - 100, chunkedPast, chunkedPast + 1, 64 << 10} {
		resp := e.open(http.MethodPost, stHeaders(sid), stCallBody(2, "echo", `{"text":"`+strings.Repeat("x", n)+`"}`))
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("echo of %d bytes: %d %v", n, resp.StatusCode, err)
		}
		if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
			t.Errorf("echo of %d bytes: Content-Length %d, Transfer-Encoding %v, for a body of %d", n, resp.ContentLength, resp.TransferEncoding, len(body))
		}
		if got := stText(t, stMessage(t, body)); got != "echo: "+strings.Repeat("x", n) {
			t.Errorf("echo of %d bytes came back as %d", n, len(got))
		}
	}
}
