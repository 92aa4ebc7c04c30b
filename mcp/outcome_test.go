// outcome_test.go pins how an answer becomes an outcome: by a tools/call
// result's isError member and the error's code and data.kind — never by
// searching the text — and that no other method's result is read.

package mcp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		rule    string
		result  string
		err     error
		outcome mcp.Outcome
		code    int64
	}{
		{"a result is ok", `{"content":[]}`, nil, "ok", 0},
		{"isError true is a tool error", `{"content":[],"isError":true}`, nil, "tool_error", 0},
		{"isError false is ok", `{"content":[],"isError":false}`, nil, "ok", 0},
		{"isError in the content text is ok", `{"content":[{"type":"text","text":"\"isError\":true"}]}`, nil, "ok", 0},
		{"isError nested deeper is ok", `{"structuredContent":{"isError":true},"content":[]}`, nil, "ok", 0},
		{"isError as a string is ok", `{"isError":"true"}`, nil, "ok", 0},
		{"a result that is not an object is ok", `[]`, nil, "ok", 0},
		// A client in Go reads a key without case, the last of twins; one
		// in JavaScript reads the exact key. What any reader takes for an
		// error result is one.
		{"an isError twin that is true is a tool error", `{"content":[],"isError":false,"IsError":true}`, nil, "tool_error", 0},
		{"an isError twin first is a tool error", `{"ISERROR":true,"content":[],"isError":false}`, nil, "tool_error", 0},
		{"isError twice, true first, is a tool error", `{"isError":true,"content":[],"isError":false}`, nil, "tool_error", 0},
		{"isError twice, true last, is a tool error", `{"isError":false,"content":[],"isError":true}`, nil, "tool_error", 0},
		{"an escaped isError is a tool error", `{"content":[],"is\u0045rror":true}`, nil, "tool_error", 0},
		{"isError twins all false are ok", `{"isError":false,"IsError":false}`, nil, "ok", 0},
		{"isError true among spaces is a tool error", `{ "content" : [ ] , "isError" : true }`, nil, "tool_error", 0},
		{"-32001 with kind forbidden is forbidden", "", jsonrpc.NewError(-32001, "forbidden", map[string]string{"kind": "forbidden"}), "forbidden", -32001},
		{"-32001 without kind is an error", "", jsonrpc.NewError(-32001, "request timed out", nil), "error", -32001},
		{"-32001 with another kind is an error", "", jsonrpc.NewError(-32001, "x", map[string]string{"kind": "timeout"}), "error", -32001},
		{"-32000 with kind rate_limited is rate_limited", "", jsonrpc.NewError(-32000, "rate limited", map[string]any{"kind": "rate_limited", "retryAfterSeconds": 3}), "rate_limited", -32000},
		{"-32000 without kind is an error", "", jsonrpc.NewError(-32000, "server error", nil), "error", -32000},
		{"kind forbidden on another code is an error", "", jsonrpc.NewError(-32603, "x", map[string]string{"kind": "forbidden"}), "error", -32603},
		{"a relayed raw refusal is forbidden", "", jsonrpc.RawError(json.RawMessage(`{"code":-32001,"message":"no","data":{"kind":"forbidden"}}`)), "forbidden", -32001},
		{"-32602 is invalid", "", jsonrpc.NewError(-32602, "unknown tool: x", nil), "invalid", -32602},
		{"another code is an error with that code", "", jsonrpc.NewError(-32002, "resource not found", nil), "error", -32002},
		{"a wrapped jsonrpc error keeps its code", "", fmt.Errorf("relay: %w", jsonrpc.NewError(-32602, "bad", nil)), "invalid", -32602},
		{"a plain Go error is an internal error", "", errors.New("boom"), "error", -32603},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var res json.RawMessage
			if tt.result != "" {
				res = json.RawMessage(tt.result)
			}
			outcome, code := mcp.Classify("tools/call", res, tt.err)
			if outcome != tt.outcome || code != tt.code {
				t.Fatalf("Classify = %s, %d; want %s, %d", outcome, code, tt.outcome, tt.code)
			}
		})
	}
}

// Only a tools/call result can be a tool error: another method's result is
// not scanned for isError.
func TestOnlyAToolResultIsReadForIsError(t *testing.T) {
	for _, method := range []string{"resources/read", "prompts/get", "tools/list"} {
		if o, _ := mcp.Classify(method, json.RawMessage(`{"isError":true}`), nil); o != mcp.OutcomeOK {
			t.Errorf("%s with isError true: %s, want ok", method, o)
		}
	}
}
