// tools_test.go pins the tools/call contract (spec §5, seed 004): the
// caller's mistakes are -32602, never -32603; a tool that ran and failed is
// an isError result; a handler's *jsonrpc.Error and raw result bytes pass
// through untouched.

package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// rawTool answers with fixed raw result bytes or a fixed error.
func rawTool(name string, res json.RawMessage, err error) *mcp.Tool {
	return &mcp.Tool{Name: name, Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return res, err
	}}
}

// echoTool returns its arguments as text, behind a small schema.
func echoTool() *mcp.Tool {
	return &mcp.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer"}},"required":["text"]}`),
		Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(args))}})
		},
	}
}

type violationsData struct {
	Tool       string          `json:"tool"`
	Violations []mcp.Violation `json:"violations"`
}

func TestToolsCallSuccessReturnsContent(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(echoTool()))
	ss, _ := readySession(t, srv)
	raw := result(t, call(t, ss, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`))
	res := decode[toolResult](t, raw)
	if res.IsError || res.text(t) != `{"text":"hi"}` {
		t.Fatalf("result %s", raw)
	}
}

func TestToolsCallCallerMistakesAreInvalidParams(t *testing.T) {
	tests := []struct {
		name     string
		params   string
		wantData map[string]any // members data must carry
	}{
		{"unknown tool, with data.name", `{"name":"nope"}`, map[string]any{"name": "nope"}},
		{"missing name", `{"arguments":{}}`, nil},
		{"missing params", ``, nil},
		{"params not an object", `[{"name":"echo"}]`, nil},
		{"name not a string", `{"name":42}`, nil},
		{"name null", `{"name":null}`, nil},
		{"empty name", `{"name":""}`, nil},
		{"arguments not an object: array", `{"name":"echo","arguments":["hi"]}`, nil},
		{"arguments not an object: string", `{"name":"echo","arguments":"{\"text\":\"hi\"}"}`, nil},
		{"arguments not an object: number", `{"name":"echo","arguments":1}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			ran := false
			tool := echoTool()
			inner := tool.Handler
			tool.Handler = func(ctx context.Context, r *mcp.Request, a json.RawMessage) (json.RawMessage, error) {
				ran = true
				return inner(ctx, r, a)
			}
			mustAdd(t, srv.AddTools(tool))
			ss, _ := readySession(t, srv)
			e := rpcError(t, call(t, ss, "tools/call", tt.params), jsonrpc.CodeInvalidParams)
			if ran {
				t.Fatal("the handler ran")
			}
			if tt.wantData != nil {
				data := decode[map[string]any](t, e.Data)
				for k, v := range tt.wantData {
					if data[k] != v {
						t.Fatalf("data %s, want %s=%v", e.Data, k, v)
					}
				}
			}
		})
	}
}

// A schema's properties that differ only by case are each its own: both
// sent, neither is taken for the other.
func TestPropertiesThatDifferOnlyByCaseAreEachTheirOwn(t *testing.T) {
	vs, err := mcp.Violations(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"ID":{"type":"string"}}}`),
		json.RawMessage(`{"id":"a","ID":"b"}`))
	if err != nil || len(vs) != 0 {
		t.Errorf("violations %+v, %v; want none", vs, err)
	}
}

func TestToolsCallSchemaViolations(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		args   string
		want   []mcp.Violation // Reason is matched as a substring
	}{
		{
			"missing required and wrong type are two violations",
			`{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer"}},"required":["text"]}`,
			`{"times":"three"}`,
			[]mcp.Violation{{Path: "", Reason: "text"}, {Path: "/times", Reason: "integer"}},
		},
		{
			"absent arguments are checked as {}",
			`{"type":"object","required":["text"]}`,
			``,
			[]mcp.Violation{{Path: "", Reason: "text"}},
		},
		{
			"$defs and $ref are enforced (2020-12 by default)",
			`{"type":"object","$defs":{"pos":{"type":"integer","minimum":1}},"properties":{"n":{"$ref":"#/$defs/pos"}}}`,
			`{"n":0}`,
			[]mcp.Violation{{Path: "/n", Reason: "minimum"}},
		},
		{
			"additionalProperties false is enforced",
			`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
			`{"a":"x","extra":1}`,
			[]mcp.Violation{{Path: "", Reason: "extra"}},
		},
		{
			"prefixItems is enforced (a 2020-12 keyword)",
			`{"type":"object","properties":{"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]}}}`,
			`{"pair":[1,"x"]}`,
			[]mcp.Violation{{Path: "/pair/0", Reason: "string"}, {Path: "/pair/1", Reason: "integer"}},
		},
		// A case-insensitive decoder (Go's encoding/json) reads PATH as the
		// property path: the validator, which matches keys exactly, would
		// have passed a value it never checked.
		{
			"a key a case-insensitive decoder reads as a property is refused",
			`{"type":"object","properties":{"path":{"type":"string","pattern":"^/srv/"}}}`,
			`{"path":"/srv/a","PATH":"/etc/passwd"}`,
			[]mcp.Violation{{Path: "/PATH", Reason: `read as "path" by a decoder`}},
		},
		{
			"a lone key of another case is refused too",
			`{"type":"object","properties":{"path":{"type":"string","pattern":"^/srv/"}}}`,
			`{"Path":"/etc/passwd"}`,
			[]mcp.Violation{{Path: "/Path", Reason: `read as "path" by a decoder`}},
		},
		{
			"a key twice is refused (readers differ on which one wins)",
			`{"type":"object","properties":{"path":{"type":"string","pattern":"^/srv/"}}}`,
			`{"path":"/etc/passwd","path":"/srv/a"}`,
			[]mcp.Violation{{Path: "/path", Reason: "more than once"}},
		},
		{
			"paths are JSON pointers with escapes",
			`{"type":"object","properties":{"a/b":{"type":"object","properties":{"c~d":{"type":"boolean"}}}}}`,
			`{"a/b":{"c~d":"yes"}}`,
			[]mcp.Violation{{Path: "/a~1b/c~0d", Reason: "boolean"}},
		},
	}
	check := func(t *testing.T, got, want []mcp.Violation) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("violations %+v, want %d like %+v", got, len(want), want)
		}
		for _, w := range want {
			found := false
			for _, g := range got {
				if g.Path == w.Path && strings.Contains(g.Reason, w.Reason) {
					found = true
				}
			}
			if !found {
				t.Fatalf("violations %+v lack path %q with a reason naming %q", got, w.Path, w.Reason)
			}
		}
	}
	for _, tt := range tests {
		params := `{"name":"strict"}`
		if tt.args != "" {
			params = `{"name":"strict","arguments":` + tt.args + `}`
		}
		tool := func(ran *bool) *mcp.Tool {
			return &mcp.Tool{Name: "strict", InputSchema: json.RawMessage(tt.schema),
				Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
					*ran = true
					return json.RawMessage(`{"content":[]}`), nil
				}}
		}
		t.Run("as -32602/"+tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			var ran bool
			mustAdd(t, srv.AddTools(tool(&ran)))
			ss, _ := readySession(t, srv)
			e := rpcError(t, call(t, ss, "tools/call", params), jsonrpc.CodeInvalidParams)
			data := decode[violationsData](t, e.Data)
			if data.Tool != "strict" {
				t.Errorf("data.tool %q", data.Tool)
			}
			check(t, data.Violations, tt.want)
			if ran {
				t.Fatal("the handler ran on invalid arguments")
			}
		})
		t.Run("as isError result/"+tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{ValidationErrorsAsResults: true})
			var ran bool
			mustAdd(t, srv.AddTools(tool(&ran)))
			ss, _ := readySession(t, srv)
			res := decode[toolResult](t, result(t, call(t, ss, "tools/call", params)))
			if !res.IsError {
				t.Fatal("isError is false")
			}
			body := decode[struct {
				Error      string          `json:"error"`
				Violations []mcp.Violation `json:"violations"`
			}](t, json.RawMessage(res.text(t)))
			if body.Error == "" {
				t.Error("no error text")
			}
			check(t, body.Violations, tt.want)
			if ran {
				t.Fatal("the handler ran on invalid arguments")
			}
		})
	}
}

func TestToolsCallValidArgumentsPass(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{
		Name:        "strict",
		InputSchema: json.RawMessage(`{"type":"object","$defs":{"pos":{"type":"integer","minimum":1}},"properties":{"n":{"$ref":"#/$defs/pos"},"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]}},"additionalProperties":false}`),
		Handler:     rawTool("", json.RawMessage(`{"content":[]}`), nil).Handler,
	}))
	ss, _ := readySession(t, srv)
	result(t, call(t, ss, "tools/call", `{"name":"strict","arguments":{"n":12345678901234567890123,"pair":["a",2]}}`))
}

func TestSkipValidationLeavesArgumentsToHandler(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	tool := echoTool()
	tool.SkipValidation = true
	mustAdd(t, srv.AddTools(tool))
	ss, _ := readySession(t, srv)
	res := decode[toolResult](t, result(t, call(t, ss, "tools/call", `{"name":"echo","arguments":{"times":"x"}}`)))
	if res.text(t) != `{"times":"x"}` {
		t.Fatalf("handler saw %q", res.text(t))
	}
	// The envelope is still checked.
	rpcError(t, call(t, ss, "tools/call", `{"name":"echo","arguments":[]}`), jsonrpc.CodeInvalidParams)
}

func TestToolFailuresAreResults(t *testing.T) {
	soft := json.RawMessage(`{"content":[{"type":"text","text":"no typology matches this case"}],"isError":false}`)
	tests := []struct {
		name      string
		err       error
		wantClass string
	}{
		{"a plain error", errors.New("boom"), mcp.ToolErrInternal},
		{"a timeout", context.DeadlineExceeded, mcp.ToolErrTimeout},
		{"a wrapped sentinel", fmt.Errorf("user 7: %w", mcp.ErrNotFound), mcp.ToolErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is an isError result with the five-class JSON", func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			mustAdd(t, srv.AddTools(rawTool("fail", nil, tt.err)))
			ss, _ := readySession(t, srv)
			res := decode[toolResult](t, result(t, call(t, ss, "tools/call", `{"name":"fail"}`)))
			if !res.IsError {
				t.Fatal("isError false")
			}
			text := res.text(t)
			if text != mcp.ToolErrorJSON(tt.err) {
				t.Fatalf("text %s, want %s", text, mcp.ToolErrorJSON(tt.err))
			}
			te := decode[mcp.ToolError](t, json.RawMessage(text))
			if te.Class != tt.wantClass || te.Hint == "" {
				t.Fatalf("tool error %+v, want class %s", te, tt.wantClass)
			}
		})
	}
	t.Run("a business soft failure passes through unchanged", func(t *testing.T) {
		srv := newServer(t, mcp.Options{})
		mustAdd(t, srv.AddTools(rawTool("assess", soft, nil)))
		ss, _ := readySession(t, srv)
		if got := result(t, call(t, ss, "tools/call", `{"name":"assess"}`)); !bytes.Equal(got, soft) {
			t.Fatalf("result %s, want %s", got, soft)
		}
	})
}

func TestToolJSONRPCErrorIsAnsweredVerbatim(t *testing.T) {
	raw := `{"code":-32099,"message":"backend says no","data":{"n":123456789012345678901234567890,"why":"quota"},"extra":[1, 2]}`
	tests := []struct {
		name string
		err  error
	}{
		{"a raw error", jsonrpc.RawError(json.RawMessage(raw))},
		{"a wrapped raw error", errors.Join(errors.New("relay"), jsonrpc.RawError(json.RawMessage(raw)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			mustAdd(t, srv.AddTools(rawTool("relay", nil, tt.err)))
			ss, _ := readySession(t, srv)
			id := nextID()
			answer := ss.Handle(context.Background(), request(t, id, "tools/call", `{"name":"relay"}`), nil)
			if want := `{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + raw + `}`; string(answer) != want {
				t.Fatalf("answer\n%s\nwant\n%s", answer, want)
			}
		})
	}
	t.Run("a built error keeps its code and data", func(t *testing.T) {
		srv := newServer(t, mcp.Options{})
		mustAdd(t, srv.AddTools(rawTool("relay", nil, jsonrpc.NewError(-32042, "custom", map[string]int{"k": 1}))))
		ss, _ := readySession(t, srv)
		e := rpcError(t, call(t, ss, "tools/call", `{"name":"relay"}`), -32042)
		if e.Message != "custom" || string(e.Data) != `{"k":1}` {
			t.Fatalf("error %+v", e)
		}
	})
}

func TestToolRawResultIsByteIdentical(t *testing.T) {
	raw := json.RawMessage(`{
  "content" : [ { "type": "text", "text": "h\u00e9llo" } ],
  "structuredContent": { "big": 123456789012345678901234567890, "f": 1.10 },
  "unknownField": { "nested": [true, null] },
  "_meta": { "x": "y" }
}`)
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(rawTool("raw", raw, nil)))
	ss, _ := readySession(t, srv)
	id := nextID()
	answer := ss.Handle(context.Background(), request(t, id, "tools/call", `{"name":"raw"}`), nil)
	if !bytes.Contains(answer, raw) {
		t.Fatalf("answer %s does not hold the handler's bytes", answer)
	}
	if got := result(t, mustParse(t, answer)); !bytes.Equal(got, raw) {
		t.Fatalf("result\n%s\nwant\n%s", got, raw)
	}
}

func TestToolHandlerSeesArgumentsRaw(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	tool := echoTool()
	mustAdd(t, srv.AddTools(tool))
	ss, _ := readySession(t, srv)
	args := `{ "text" : "x", "times": 123456789012345678901234567890, "unknown": {"a":[1]} }`
	res := decode[toolResult](t, result(t, call(t, ss, "tools/call", `{"name":"echo","arguments":`+args+`}`)))
	if res.text(t) != args {
		t.Fatalf("handler saw %s, want %s", res.text(t), args)
	}
}

func TestToolsListDefinitions(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	relayed := json.RawMessage(`{"name":"relayed","inputSchema":{"type":"object"},"x-unknown":123456789012345678901234567890}`)
	mustAdd(t, srv.AddTools(
		&mcp.Tool{Name: "plain", Handler: textTool("", "").Handler},
		&mcp.Tool{Name: "relayed", Definition: relayed, Handler: textTool("", "").Handler, SkipValidation: true},
	))
	ss, _ := readySession(t, srv)
	got := result(t, call(t, ss, "tools/list", ""))
	want := `{"tools":[{"name":"plain","inputSchema":{"type":"object"}},` + string(relayed) + `]}`
	if string(got) != want {
		t.Fatalf("tools/list\n%s\nwant\n%s", got, want)
	}
}
