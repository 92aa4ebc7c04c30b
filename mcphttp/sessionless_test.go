// sessionless_test.go pins the 2026-07-28 revision on the Streamable HTTP
// endpoint (Options.Sessionless): each request on its own, its revision
// and the client's capabilities in _meta, the HTTP statuses and error
// codes the revision fixes, and the 2025 era beside it on the same URL.

package mcphttp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

// slMeta is the _meta of a well-behaved 2026-07-28 request.
const slMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// slPost sends one sessionless request with the revision's headers,
// changed by key, value pairs (an empty value removes the header).
func (e *stEnv) slPost(method, params string, kv ...string) stReply {
	e.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	base := []string{HeaderProtocolVersion, mcp.Version20260728, HeaderMethod, method}
	if name, ok := jsonrpc.LookupString([]byte(params), "name"); ok {
		base = append(base, HeaderName, name)
	} else if uri, ok := jsonrpc.LookupString([]byte(params), "uri"); ok {
		base = append(base, HeaderName, uri)
	} else if id, ok := jsonrpc.LookupString([]byte(params), "taskId"); ok {
		base = append(base, HeaderName, id)
	}
	return e.post("", body, append(base, kv...)...)
}

func slAnswer(t *testing.T, r stReply) *jsonrpc.Message {
	t.Helper()
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		evs := stEvents(t, r.body)
		return stMessage(t, evs[len(evs)-1].Data)
	}
	return stMessage(t, r.body)
}

func TestSessionlessRequestsAreServedOnTheirOwn(t *testing.T) {
	testkit.LeakCheck(t)
	e := newStEnv(t, fixture.New(fixture.Options{}), Options{Sessionless: true})
	for _, c := range []struct {
		rule          string
		method        string
		params        string
		kv            []string
		status        int
		code          int64
		resultHas     []string
		resultHasNone []string
	}{
		{"server/discover names the revisions, the capabilities and the server", "server/discover", `{` + slMeta + `}`, nil, 200, 0,
			[]string{`"supportedVersions":["2026-07-28"]`, `"capabilities":{`, `"resultType":"complete"`, `"io.modelcontextprotocol/serverInfo":{"name":"mcpgate-fixture"`}, nil},
		{"a list carries resultType, its caching hints and the server", "tools/list", `{` + slMeta + `}`, nil, 200, 0,
			[]string{`"resultType":"complete"`, `"ttlMs":0`, `"cacheScope":"private"`, `"io.modelcontextprotocol/serverInfo"`, `"tools":[`}, nil},
		{"a tool result carries resultType but no caching hints", "tools/call", `{"name":"test_simple_text","arguments":{},` + slMeta + `}`, nil, 200, 0,
			[]string{`"resultType":"complete"`, `This is a simple text response`}, []string{`"ttlMs"`}},
		{"a revision not served is 400 and -32022 with the supported ones", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`,
			[]string{HeaderProtocolVersion, "2099-01-01"}, 400, mcp.CodeUnsupportedProtocolVersion, nil, nil},
		{"_meta without the client's capabilities is 400 and -32602", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
			nil, 400, jsonrpc.CodeInvalidParams, nil, nil},
		{"a 2026-07-28 header with no revision in _meta is 400 and -32602", "tools/list", `{}`, nil, 400, jsonrpc.CodeInvalidParams, nil, nil},
		{"a header naming another revision is 400 and -32020", "tools/list", `{` + slMeta + `}`, []string{HeaderProtocolVersion, "2025-11-25"}, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"Mcp-Method is required", "tools/list", `{` + slMeta + `}`, []string{HeaderMethod, ""}, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"Mcp-Method must be the body's method, case and all", "tools/list", `{` + slMeta + `}`, []string{HeaderMethod, "TOOLS/LIST"}, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"Mcp-Name is required for a call", "tools/call", `{"name":"test_simple_text",` + slMeta + `}`, []string{HeaderName, ""}, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"Mcp-Name must be the body's name", "tools/call", `{"name":"test_simple_text",` + slMeta + `}`, []string{HeaderName, "test_error_handling"}, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"a Base64 Mcp-Name is compared decoded", "tools/call", `{"name":"test_simple_text",` + slMeta + `}`,
			[]string{HeaderName, "=?base64?" + base64.StdEncoding.EncodeToString([]byte("test_simple_text")) + "?="}, 200, 0, []string{"simple text"}, nil},
		{"an Mcp-Param header that says what the arguments say is served", "tools/call", `{"name":"test_header_params","arguments":{"region":"us-west1","query":"q"},` + slMeta + `}`,
			[]string{"Mcp-Param-Region", "us-west1"}, 200, 0, []string{"header params"}, nil},
		{"an Mcp-Param header that differs from the arguments is 400 and -32020", "tools/call", `{"name":"test_header_params","arguments":{"region":"us-west1","query":"q"},` + slMeta + `}`,
			[]string{"Mcp-Param-Region", "eu-west1"}, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"an annotated argument without its Mcp-Param header is 400 and -32020", "tools/call", `{"name":"test_header_params","arguments":{"region":"us-west1","query":"q"},` + slMeta + `}`,
			nil, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"an Mcp-Param header for an argument not given is 400 and -32020", "tools/call", `{"name":"test_header_params","arguments":{"query":"q"},` + slMeta + `}`,
			[]string{"Mcp-Param-Region", "us-west1"}, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"an unknown resource is -32602 in this revision (SEP-2164), not -32002", "resources/read", `{"uri":"test://no-such-resource",` + slMeta + `}`,
			nil, 200, jsonrpc.CodeInvalidParams, nil, nil},
		{"Mcp-Name must be the task's id on tasks/get", "tasks/get", `{"taskId":"task-x",` + slMeta + `}`, []string{HeaderName, "task-y"}, 400, mcp.CodeHeaderMismatch, nil, nil},
		{"initialize is no method of the revision: 404 and -32601", "initialize", `{` + slMeta + `}`, nil, 404, jsonrpc.CodeMethodNotFound, nil, nil},
		{"ping is no method of the revision either", "ping", `{` + slMeta + `}`, nil, 404, jsonrpc.CodeMethodNotFound, nil, nil},
		{"an unknown method is 404 and -32601", "no/such", `{` + slMeta + `}`, nil, 404, jsonrpc.CodeMethodNotFound, nil, nil},
	} {
		t.Run(c.rule, func(t *testing.T) {
			r := e.slPost(c.method, c.params, c.kv...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if r.header.Get(HeaderSessionID) != "" {
				t.Errorf("a sessionless answer carries a session id")
			}
			m := slAnswer(t, r)
			if got := stErrorCode(t, m); got != c.code {
				t.Fatalf("code %d, want %d: %s", got, c.code, r.body)
			}
			for _, want := range c.resultHas {
				if !strings.Contains(string(m.Result), want) {
					t.Errorf("result lacks %s: %s", want, m.Result)
				}
			}
			for _, not := range c.resultHasNone {
				if strings.Contains(string(m.Result), not) {
					t.Errorf("result has %s: %s", not, m.Result)
				}
			}
		})
	}
	// The unsupported-version error lists what is.
	r := e.slPost("tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`, HeaderProtocolVersion, "2099-01-01")
	if e, _ := stMessage(t, r.body).ErrorObject(); e == nil || !strings.Contains(string(e.Data), `"supported":["2026-07-28"]`) {
		t.Errorf("unsupported version error %s, want data.supported", r.body)
	}
	// GET and DELETE have no 2026-07-28 meaning.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		if r := e.do(method, stHeaders("", HeaderProtocolVersion, mcp.Version20260728), ""); r.status != http.StatusMethodNotAllowed {
			t.Errorf("%s with a 2026-07-28 header: %d, want 405", method, r.status)
		}
	}
}

// A sessionless request gets log messages only when its _meta asks for a
// level, and then only at or above it.
func TestSessionlessLogMessagesFollowTheRequestsLogLevel(t *testing.T) {
	testkit.LeakCheck(t)
	e := newStEnv(t, fixture.New(fixture.Options{}), Options{Sessionless: true})
	count := func(meta string) int {
		r := e.slPost("tools/call", `{"name":"test_tool_with_logging","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`+meta+`}}`)
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		n := 0
		if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
			for _, ev := range stEvents(t, r.body) {
				if stMessage(t, ev.Data).Method == "notifications/message" {
					n++
				}
			}
		}
		return n
	}
	if n := count(""); n != 0 {
		t.Errorf("%d log messages without a log level, want none", n)
	}
	if n := count(`,"io.modelcontextprotocol/logLevel":"debug"`); n == 0 {
		t.Error("no log message at debug")
	}
	if n := count(`,"io.modelcontextprotocol/logLevel":"emergency"`); n != 0 {
		t.Errorf("%d log messages at emergency, want none (the tool logs at info)", n)
	}
}

// The 2025 era goes on beside it on the same endpoint; with the option off,
// a 2026-07-28 request is refused as an unknown revision, as before.
func TestTheSessionlessEraIsBesideThe2025OneAndOffByDefault(t *testing.T) {
	testkit.LeakCheck(t)
	on := newStEnv(t, fixture.New(fixture.Options{}), Options{Sessionless: true})
	if r := on.post("", stInitBody(mcp.Version20251125)); r.status != 200 || r.header.Get(HeaderSessionID) == "" {
		t.Fatalf("initialize beside the sessionless era: %d %s", r.status, r.body)
	}
	off := newStEnv(t, fixture.New(fixture.Options{}), Options{})
	if r := off.slPost("tools/list", `{`+slMeta+`}`); r.status != http.StatusBadRequest {
		t.Errorf("a 2026-07-28 request with the era off: %d %s, want 400", r.status, r.body)
	}
}

// subscriptions/listen opens a stream that says first what it will carry,
// then carries exactly that, each notification tagged with the
// subscription's id; ending the handler ends it with its result.
func TestSessionlessListenCarriesWhatItAcknowledged(t *testing.T) {
	testkit.LeakCheck(t)
	srv := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "l", Version: "1"}})
	read := func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
		return json.RawMessage(`{"contents":[]}`), nil
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(srv.AddResources(&mcp.Resource{URI: "mem://watched", Name: "w", Read: read}))
	e := newStEnv(t, srv, Options{Sessionless: true})
	body := `{"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen","params":{` + slMeta +
		`,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["mem://watched","mem://nobody"]}}}`
	resp := e.open(http.MethodPost, stHeaders("", HeaderProtocolVersion, mcp.Version20260728, HeaderMethod, "subscriptions/listen"), body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	r := sse.NewReader(resp.Body, 0)
	_, ack := stNextMessage(t, r)
	if ack.Method != "notifications/subscriptions/acknowledged" ||
		!strings.Contains(string(ack.Params), `"io.modelcontextprotocol/subscriptionId":"sub-1"`) ||
		!strings.Contains(string(ack.Params), `"toolsListChanged":true`) ||
		!strings.Contains(string(ack.Params), `"resourceSubscriptions":["mem://watched"]`) {
		t.Fatalf("first message %s %s, want the acknowledgement of what is honoured (no unknown URI)", ack.Method, ack.Params)
	}
	// A prompt list change was not asked for; a tool list change and the
	// watched resource's update were.
	must(srv.AddPrompts(&mcp.Prompt{Name: "p", Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
		return json.RawMessage(`{"messages":[]}`), nil
	}}))
	must(srv.AddTools(&mcp.Tool{Name: "t", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[]}`), nil
	}}))
	srv.ResourceUpdated("mem://watched")
	for _, want := range []string{"notifications/tools/list_changed", "notifications/resources/updated"} {
		_, m := stNextMessage(t, r)
		if m.Method != want || !strings.Contains(string(m.Params), `"io.modelcontextprotocol/subscriptionId":"sub-1"`) {
			t.Fatalf("got %s %s, want %s tagged with the subscription", m.Method, m.Params, want)
		}
	}
	// The handler closing ends the subscription with its result.
	e.h.Close()
	_, end := stNextMessage(t, r)
	if string(end.ID) != `"sub-1"` || !strings.Contains(string(end.Result), `"resultType":"complete"`) {
		t.Fatalf("last message %s %s, want the listen's result", end.ID, end.Result)
	}
}
