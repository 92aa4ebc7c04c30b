// lifecycle_test.go pins the spec's §2: nothing but initialize and ping
// before initialize, version negotiation, truthful capabilities, ping and
// logging/setLevel, and unknown methods.

package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestRequestsBeforeInitialize(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(textTool("echo", "hi")))
	tests := []struct {
		name   string
		method string
		params string
		code   int64 // 0: served
	}{
		{"tools/list is refused with -32600", "tools/list", "", jsonrpc.CodeInvalidRequest},
		{"tools/call is refused with -32600", "tools/call", `{"name":"echo"}`, jsonrpc.CodeInvalidRequest},
		{"resources/read is refused with -32600", "resources/read", `{"uri":"x://y"}`, jsonrpc.CodeInvalidRequest},
		{"logging/setLevel is refused with -32600", "logging/setLevel", `{"level":"info"}`, jsonrpc.CodeInvalidRequest},
		{"an unknown method is refused with -32600", "nope/nope", "", jsonrpc.CodeInvalidRequest},
		{"ping is served", "ping", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss := newSession(t, srv, mcp.SessionOptions{ID: "s"})
			m := call(t, ss, tt.method, tt.params)
			if tt.code == 0 {
				if got := string(result(t, m)); got != `{}` {
					t.Fatalf("result %s", got)
				}
				return
			}
			rpcError(t, m, tt.code)
			if ss.Initialized() {
				t.Fatal("a refused request initialized the session")
			}
		})
	}
}

type initResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	Capabilities    map[string]json.RawMessage
	ServerInfo      mcp.Implementation `json:"serverInfo"`
	Instructions    string             `json:"instructions"`
}

func TestInitializeNegotiatesVersion(t *testing.T) {
	tests := []struct {
		name, asked, want string
	}{
		{"2024-11-05 is echoed", "2024-11-05", "2024-11-05"},
		{"2025-03-26 is echoed", "2025-03-26", "2025-03-26"},
		{"2025-06-18 is echoed", "2025-06-18", "2025-06-18"},
		{"2025-11-25 is echoed", "2025-11-25", "2025-11-25"},
		{"an unknown future version gets the newest", "2099-01-01", "2025-11-25"},
		{"an unknown old version gets the newest", "2023-01-01", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			ss := newSession(t, srv, mcp.SessionOptions{ID: "s"})
			res := decode[initResult](t, initialize(t, ss, tt.asked))
			if res.ProtocolVersion != tt.want {
				t.Fatalf("protocolVersion %q, want %q", res.ProtocolVersion, tt.want)
			}
			if ss.Version() != tt.want || !ss.Initialized() {
				t.Fatalf("session version %q initialized %v", ss.Version(), ss.Initialized())
			}
		})
	}
}

func TestInitializeParams(t *testing.T) {
	tests := []struct {
		name   string
		params string
	}{
		{"missing protocolVersion is -32602", `{"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`},
		{"empty protocolVersion is -32602", `{"protocolVersion":"","capabilities":{}}`},
		{"no params is -32602", ``},
		{"protocolVersion of the wrong type is -32602", `{"protocolVersion":20250618}`},
		{"params as an array is -32602", `["2025-06-18"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			ss := newSession(t, srv, mcp.SessionOptions{ID: "s"})
			rpcError(t, call(t, ss, "initialize", tt.params), jsonrpc.CodeInvalidParams)
			if ss.Initialized() {
				t.Fatal("a refused initialize initialized the session")
			}
		})
	}
}

func TestCapabilitiesAreTruthful(t *testing.T) {
	complete := mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return json.RawMessage(`{"completion":{"values":[]}}`), nil
	})
	tests := []struct {
		name            string
		opts            mcp.Options
		wantCompletions bool
	}{
		{"completions are not declared without Options.Complete", mcp.Options{}, false},
		{"completions are declared with Options.Complete", mcp.Options{Complete: complete}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Info = mcp.Implementation{Name: "gw", Title: "Gateway", Version: "1.2.3"}
			tt.opts.Instructions = "be nice"
			srv := newServer(t, tt.opts)
			ss := newSession(t, srv, mcp.SessionOptions{ID: "s"})
			res := decode[initResult](t, initialize(t, ss, mcp.LatestVersion))

			if res.ServerInfo != tt.opts.Info {
				t.Errorf("serverInfo %+v, want %+v", res.ServerInfo, tt.opts.Info)
			}
			if res.Instructions != "be nice" {
				t.Errorf("instructions %q", res.Instructions)
			}
			caps := res.Capabilities
			if _, ok := caps["completions"]; ok != tt.wantCompletions {
				t.Errorf("completions declared %v, want %v", ok, tt.wantCompletions)
			}
			// completion/complete is served exactly when it is declared.
			m := call(t, ss, "completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`)
			if tt.wantCompletions {
				result(t, m)
			} else {
				rpcError(t, m, jsonrpc.CodeMethodNotFound)
			}
			if string(caps["logging"]) != `{}` {
				t.Errorf("logging %s, want {}", caps["logging"])
			}
			for _, k := range []string{"tools", "prompts"} {
				if got := decode[map[string]bool](t, caps[k]); !got["listChanged"] {
					t.Errorf("%s %s, want listChanged true", k, caps[k])
				}
			}
			if got := decode[map[string]bool](t, caps["resources"]); !got["listChanged"] || !got["subscribe"] {
				t.Errorf("resources %s, want listChanged and subscribe", caps["resources"])
			}
			for k := range caps {
				switch k {
				case "logging", "completions", "tools", "resources", "prompts":
				default:
					t.Errorf("capability %q is declared but not served", k)
				}
			}
		})
	}
}

func TestSecondInitializeOnSessionWithIDIsInvalid(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	ss := newSession(t, srv, mcp.SessionOptions{ID: "s"})
	initialize(t, ss, mcp.Version20250618)
	params := `{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`
	rpcError(t, call(t, ss, "initialize", params), jsonrpc.CodeInvalidRequest)
	if ss.Version() != mcp.Version20250618 {
		t.Fatalf("a refused initialize changed the version to %q", ss.Version())
	}
}

func TestEmptyResults(t *testing.T) {
	tests := []struct {
		name   string
		method string
		params string
	}{
		{"ping answers exactly {}", "ping", ""},
		{"ping with params answers exactly {}", "ping", `{"_meta":{"x":1}}`},
		{"logging/setLevel answers exactly {}", "logging/setLevel", `{"level":"warning"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss, _ := readySession(t, newServer(t, mcp.Options{}))
			if got := string(result(t, call(t, ss, tt.method, tt.params))); got != `{}` {
				t.Fatalf("result %s, want {}", got)
			}
		})
	}
}

func TestSetLevelRejectsInvalidLevel(t *testing.T) {
	for _, params := range []string{`{"level":"verbose"}`, `{"level":"DEBUG"}`, `{"level":""}`, `{}`, `{"level":3}`} {
		t.Run(params, func(t *testing.T) {
			ss, _ := readySession(t, newServer(t, mcp.Options{}))
			rpcError(t, call(t, ss, "logging/setLevel", params), jsonrpc.CodeInvalidParams)
		})
	}
}

func TestLogLevelFiltersRequestLog(t *testing.T) {
	loggingTool := &mcp.Tool{Name: "chatty", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		if err := r.Log(ctx, mcp.LevelDebug, "chatty", "details"); err != nil {
			return nil, err
		}
		if err := r.Log(ctx, mcp.LevelError, "chatty", "trouble"); err != nil {
			return nil, err
		}
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("done")}})
	}}
	tests := []struct {
		name  string
		level string // "" for no setLevel
		want  []mcp.LogLevel
	}{
		{"before any setLevel every level is sent", "", []mcp.LogLevel{mcp.LevelDebug, mcp.LevelError}},
		{"after setLevel debug every level is sent", "debug", []mcp.LogLevel{mcp.LevelDebug, mcp.LevelError}},
		{"after setLevel error only error is sent", "error", []mcp.LogLevel{mcp.LevelError}},
		{"after setLevel emergency nothing is sent", "emergency", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			mustAdd(t, srv.AddTools(loggingTool))
			ss, _ := readySession(t, srv)
			if tt.level != "" {
				result(t, call(t, ss, "logging/setLevel", `{"level":"`+tt.level+`"}`))
			}
			related := newRecorder()
			result(t, callWith(t, ss, related, "tools/call", `{"name":"chatty"}`))
			var got []mcp.LogLevel
			for _, m := range related.messages(t) {
				if m.Method != "notifications/message" {
					t.Fatalf("unexpected message %s", m.Method)
				}
				p := decode[struct {
					Level  mcp.LogLevel `json:"level"`
					Logger string       `json:"logger"`
				}](t, m.Params)
				got = append(got, p.Level)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("levels sent %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("levels sent %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	ss, _ := readySession(t, newServer(t, mcp.Options{}))
	for _, method := range []string{"tools/delete", "sampling/createMessage", "x"} {
		rpcError(t, call(t, ss, method, `{}`), jsonrpc.CodeMethodNotFound)
	}
}

func TestIDsAreEchoedVerbatim(t *testing.T) {
	ss, _ := readySession(t, newServer(t, mcp.Options{}))
	for _, id := range []string{`7`, `"7"`, `"req-é"`, `12345678901234567890123`, `-1`} {
		answer := ss.Handle(context.Background(), request(t, jsonrpc.ID(id), "ping", ""), nil)
		if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`; string(answer) != want {
			t.Fatalf("answer %s, want %s", answer, want)
		}
	}
}
