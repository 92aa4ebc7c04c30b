// contract_test.go pins the container contract client against a program
// served over HTTP: an accepted registration returns the program's JSON, a
// refusal is the program's JSON body or the proxy's wrapper around its
// text, an unreachable program is an error, and a refusal of secrets
// quotes none of them.

package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// program is a contract program: it answers /register and /secrets with
// the status and body the test chose, and remembers what it was sent.
type program struct {
	status int
	body   string
	got    chan string
}

func (p *program) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	select {
	case p.got <- r.Method + " " + r.URL.Path + " " + string(b):
	default:
	}
	w.WriteHeader(p.status)
	_, _ = io.WriteString(w, p.body)
}

func serveProgram(t *testing.T, status int, body string) (*Contract, *program) {
	p := &program{status: status, body: body, got: make(chan string, 1)}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return NewContract(srv.URL, srv.Client()), p
}

func TestRegister(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, c := range []struct {
		name            string
		status          int
		body            string
		answer, refusal string
	}{
		{"accepted with JSON", 200, ` {"runId": 123456789012345678901234567890, "x": [1]} `, `{"runId": 123456789012345678901234567890, "x": [1]}`, ""},
		{"accepted with nothing", 204, ``, "", ""},
		{"refused with JSON", 409, `{"kind":"already_registered","detail":{"n":1}}`, "", `{"kind":"already_registered","detail":{"n":1}}`},
		{"refused with text", 500, "boom: <database> is down\n", "", `{"kind":"program","status":500,"error":"boom: <database> is down"}`},
		{"refused with nothing", 403, "", "", `{"kind":"program","status":403,"error":"Forbidden"}`},
		{"refused with a long text", 400, long, "", `{"kind":"program","status":400,"error":"` + long[:maxErrorText] + `…"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			contract, p := serveProgram(t, c.status, c.body)
			answer, refusal, err := contract.Register(testCtx(t), json.RawMessage(`{"a": 1}`))
			if err != nil {
				t.Fatal(err)
			}
			if string(answer) != c.answer || string(refusal) != c.refusal {
				t.Errorf("answer %s, refusal %s\nwant answer %s, refusal %s", answer, refusal, c.answer, c.refusal)
			}
			if got := <-p.got; got != `POST /register {"arguments":{"a": 1}}` {
				t.Errorf("the program got %q", got)
			}
		})
	}
}

func TestRegisterFailures(t *testing.T) {
	ctx := testCtx(t)
	contract := NewContract(closedURL(t), nil)
	if _, _, err := contract.Register(ctx, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("unreachable: %v", err)
	}
	contract, _ = serveProgram(t, 200, "ok, registered")
	if _, _, err := contract.Register(ctx, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("a 2xx answer that is not JSON: %v", err)
	}
	contract, p := serveProgram(t, 200, "{}")
	if _, _, err := contract.Register(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := <-p.got; got != `POST /register {"arguments":null}` {
		t.Errorf("no arguments: the program got %q", got)
	}
}

func TestFeedSecrets(t *testing.T) {
	values := map[string]string{"API_KEY": "k-31f9c0", "DB_PASSWORD": "pw\"<7>"}
	for _, c := range []struct {
		name    string
		status  int
		body    string
		refusal string
	}{
		{"fed", 204, "", ""},
		{"fed with a body", 200, `{"ok":true}`, ""},
		{"refused with JSON", 422, `{"kind":"bad_secret","name":"API_KEY"}`, `{"kind":"bad_secret","name":"API_KEY"}`},
		{"refused, echoing a value", 422, `{"error":"key k-31f9c0 rejected","pw":"pw\"\u003c7>"}`, `{"error":"key [redacted] rejected","pw":"[redacted]"}`},
		{"refused with text echoing a value", 500, `no: pw"<7>`, `{"kind":"program","status":500,"error":"no: [redacted]"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			contract, p := serveProgram(t, c.status, c.body)
			refusal, err := contract.FeedSecrets(testCtx(t), values)
			if err != nil {
				t.Fatal(err)
			}
			if string(refusal) != c.refusal {
				t.Errorf("refusal %s, want %s", refusal, c.refusal)
			}
			if got := <-p.got; got != `POST /secrets {"API_KEY":"k-31f9c0","DB_PASSWORD":"pw\"\u003c7\u003e"}` {
				t.Errorf("the program got %q", got)
			}
		})
	}
	_, err := NewContract(closedURL(t), nil).FeedSecrets(testCtx(t), values)
	if err == nil || strings.Contains(err.Error(), "k-31f9c0") {
		t.Errorf("unreachable: %v", err)
	}
}

// A contract upstream is the program's /mcp, and its secrets go to
// /secrets.
func TestTheContractUpstream(t *testing.T) {
	ctx := testCtx(t)
	h := mcphttp.NewHandler(testServer(false), mcphttp.Options{})
	p := &program{status: 200, got: make(chan string, 1)}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/register", p)
	mux.Handle("/secrets", p)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)

	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindContract, URL: srv.URL, HTTPClient: srv.Client()})
	if got := toolText(t, call(t, ctx, u, "test_simple_text", "{}")); !strings.Contains(got, "simple text") {
		t.Errorf("tools/call through /mcp: %q", got)
	}
	if refusal, err := u.FeedSecrets(ctx, map[string]string{"A": "b"}); err != nil || refusal != nil {
		t.Errorf("FeedSecrets: %s, %v", refusal, err)
	}
	if got := <-p.got; got != `POST /secrets {"A":"b"}` {
		t.Errorf("the program got %q", got)
	}
	if u.Contract() == nil {
		t.Error("Contract() is nil for a contract upstream")
	}
}
