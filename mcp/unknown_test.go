// unknown_test.go pins Options.Unknown: a call naming no entry is answered
// with what the hook says only for a caller the gate would show the entry
// to; anyone else gets the usual unknown-entry answer, byte for byte.

package mcp_test

import (
	"bytes"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestUnknownHookAnswersOnlyCallersThatMaySeeTheEntry(t *testing.T) {
	down := jsonrpc.NewError(jsonrpc.CodeInternalError, "backend b is unavailable", map[string]string{"backend": "b"})
	known := map[mcp.EntryKind]string{mcp.KindTool: "gone_tool", mcp.KindPrompt: "gone_prompt", mcp.KindResource: "x://gone"}
	unknown := func(kind mcp.EntryKind, name string) (mcp.Entry, error) {
		if known[kind] != name {
			return mcp.Entry{}, nil
		}
		return mcp.Entry{Kind: kind, Name: name, MinRole: "admin"}, down
	}
	calls := []struct{ method, params, other, gone, never string }{
		{"tools/call", `{"name":"gone_tool","arguments":{}}`, `{"name":"never_tool","arguments":{}}`, "gone_tool", "never_tool"},
		{"prompts/get", `{"name":"gone_prompt"}`, `{"name":"never_prompt"}`, "gone_prompt", "never_prompt"},
		{"resources/read", `{"uri":"x://gone"}`, `{"uri":"x://never"}`, "x://gone", "x://never"},
	}
	for _, c := range calls {
		t.Run(c.method, func(t *testing.T) {
			// A caller the gate shows admin entries to gets the hook's error.
			srv := newServer(t, mcp.Options{Gate: &spyGate{}, Unknown: unknown})
			ss, _ := readySession(t, srv)
			e := rpcError(t, call(t, ss, c.method, c.params), jsonrpc.CodeInternalError)
			if e.Message != down.Message || string(e.Data) != `{"backend":"b"}` {
				t.Errorf("visible entry: got %d %q %s, want the hook's error", e.Code, e.Message, e.Data)
			}

			// A caller it hides them from gets what a name that never existed
			// gets, with the name put in its place.
			hidden := newServer(t, mcp.Options{Gate: &spyGate{hide: map[string]bool{"admin": true}}, Unknown: unknown})
			ss, _ = readySession(t, hidden)
			got := call(t, ss, c.method, c.params)
			never := call(t, ss, c.method, c.other)
			if got.Error == nil || never.Error == nil {
				t.Fatalf("hidden entry: got %s, never-existing: %s; want errors", got.Result, never.Result)
			}
			if want := bytes.ReplaceAll(never.Error, []byte(c.never), []byte(c.gone)); !bytes.Equal(got.Error, want) {
				t.Errorf("hidden entry answered %s, a never-existing one %s", got.Error, never.Error)
			}
		})
	}
}
