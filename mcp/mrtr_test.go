package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// mrtrServer has a tool that asks two things in two rounds.
func mrtrServer(t *testing.T) *mcp.Server { return mrtrServerWith(t, mcp.Options{}) }

func mrtrServerWith(t *testing.T, opts mcp.Options) *mcp.Server {
	s := newServer(t, opts)
	must(t, s.AddTools(&mcp.Tool{Name: "two_rounds", SkipValidation: true,
		Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			a, err := r.Ask(ctx, mcp.Input{Key: "name", Method: "elicitation/create", Params: map[string]string{"message": "name?"}})
			if err != nil {
				return nil, err
			}
			b, err := r.Ask(ctx, mcp.Input{Key: "color", Method: "elicitation/create", Params: map[string]string{"message": "color?"}},
				mcp.Input{Key: "roots", Method: "roots/list"})
			if err != nil {
				return nil, err
			}
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(a[0]) + " " + string(b[0]) + " " + string(b[1]))}})
		}}))
	return s
}

// slCall serves one sessionless tools/call of two_rounds as who, with the
// extra params given (inputResponses, requestState).
func slCall(t *testing.T, s *mcp.Server, who, caps, extra string) *jsonrpc.Message {
	t.Helper()
	return mcptest.Sessionless(t, s, who, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"two_rounds"`+extra+
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":`+caps+`}}}`)
}

const allCaps = `{"elicitation":{},"roots":{}}`

func inputRequired(t *testing.T, a *jsonrpc.Message) (keys []string, state string) {
	t.Helper()
	reqs, state := mcptest.InputRequired(t, a)
	for k := range reqs {
		keys = append(keys, k)
	}
	return keys, state
}

// A sessionless request's handler asks; the client answers on retries;
// the answers of earlier rounds come back sealed in requestState.
func TestAskGathersAnswersOverRounds(t *testing.T) {
	s := mrtrServer(t)
	keys, st1 := inputRequired(t, slCall(t, s, "alice", allCaps, ""))
	if len(keys) != 1 || keys[0] != "name" {
		t.Fatalf("round 1 asked %v, want name", keys)
	}
	keys, st2 := inputRequired(t, slCall(t, s, "alice", allCaps, `,"inputResponses":{"name":{"action":"accept","content":{"n":"A"}}},"requestState":"`+st1+`"`))
	if len(keys) != 2 || st2 == st1 {
		t.Fatalf("round 2 asked %v with state changed %v, want color and roots at once and a new state", keys, st2 != st1)
	}
	a := slCall(t, s, "alice", allCaps, `,"inputResponses":{"color":{"action":"accept","content":{"c":"blue"}},"roots":{"roots":[]},"extra":{"x":1}},"requestState":"`+st2+`"`)
	if a.Error != nil || !strings.Contains(string(a.Result), `"resultType":"complete"`) || !strings.Contains(string(a.Result), `\"n\":\"A\"`) {
		t.Fatalf("round 3: %s %s, want the complete result with round 1's answer", a.Result, a.Error)
	}
}

// A state opens on every server of its key: replicas sharing a StateKey
// resume each other's rounds, and during a rotation one whose
// PreviousStateKey sealed it. A server of another key, or of none (a
// random key of its own), refuses it.
func TestAStateOpensOnEveryServerOfItsKey(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	_, st := inputRequired(t, slCall(t, mrtrServerWith(t, mcp.Options{StateKey: a}), "alice", allCaps, ""))
	retry := `,"inputResponses":{"name":{"action":"accept","content":{"n":"A"}}},"requestState":"` + st + `"`
	for _, c := range []struct {
		name string
		opts mcp.Options
		ok   bool
	}{
		{"another replica of the key", mcp.Options{StateKey: a}, true},
		{"a replica whose previous key it is", mcp.Options{StateKey: b, PreviousStateKey: a}, true},
		{"a server of another key", mcp.Options{StateKey: b}, false},
		{"a server of no key", mcp.Options{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := slCall(t, mrtrServerWith(t, c.opts), "alice", allCaps, retry)
			if c.ok {
				if keys, _ := inputRequired(t, m); len(keys) != 2 {
					t.Errorf("round 2 asked %v, want color and roots", keys)
				}
				return
			}
			if e, _ := m.ErrorObject(); e == nil || e.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("%s %s, want -32602", m.Result, m.Error)
			}
		})
	}
}

// What the client may not give is not asked for; a state that was
// altered, or comes from another caller, is refused; an answer that is
// not an object is refused.
func TestAskRefusesWhatCannotBeTrusted(t *testing.T) {
	s := mrtrServer(t)
	code := func(a *jsonrpc.Message) int64 {
		t.Helper()
		e, err := a.ErrorObject()
		if err != nil || e == nil {
			t.Fatalf("want an error, got %s", a.Result)
		}
		return e.Code
	}
	if c := code(slCall(t, s, "alice", `{}`, "")); c != mcp.CodeMissingRequiredCapability {
		t.Errorf("asking a client without elicitation: %d, want -32021", c)
	}
	_, st := inputRequired(t, slCall(t, s, "alice", allCaps, ""))
	tampered := testkit.Tamper(st)
	if c := code(slCall(t, s, "alice", allCaps, `,"requestState":"`+tampered+`"`)); c != jsonrpc.CodeInvalidParams {
		t.Errorf("a tampered state: %d, want -32602", c)
	}
	if c := code(slCall(t, s, "mallory", allCaps, `,"requestState":"`+st+`"`)); c != jsonrpc.CodeInvalidParams {
		t.Errorf("another caller's state: %d, want -32602", c)
	}
	if c := code(slCall(t, s, "alice", allCaps, `,"inputResponses":{"name":12345}`)); c != jsonrpc.CodeInvalidParams {
		t.Errorf("an answer that is not an object: %d, want -32602", c)
	}
	keys, _ := inputRequired(t, slCall(t, s, "alice", allCaps, `,"inputResponses":{"wrong":{"action":"accept"}}`))
	if len(keys) != 1 || keys[0] != "name" {
		t.Errorf("answers to the wrong key: asked %v again, want name", keys)
	}
}

// The client's half: InputsOf reads what a round asks, in the server's
// order, and RetryParams builds the retry from it, so that a client that
// answers each input gets the complete result; every other member of the
// first params (arguments, _meta) goes on every retry unchanged.
func TestRetryParamsAnswerEachRound(t *testing.T) {
	s := mrtrServer(t)
	params := json.RawMessage(`{"name":"two_rounds","arguments":{"n":18446744073709551617},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + allCaps + `}}`)
	var asked []string
	for round := 1; ; round++ {
		a := mcptest.Sessionless(t, s, "alice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+string(params)+`}`)
		if a.Error != nil {
			t.Fatalf("round %d: %s", round, a.Error)
		}
		if !mcp.IsInputRequired(a.Result) {
			if round != 3 || !strings.Contains(string(a.Result), `"resultType":"complete"`) {
				t.Fatalf("round %d: %s, want the complete result at round 3", round, a.Result)
			}
			break
		}
		inputs := mcp.InputsOf(a.Result)
		answers := make([]json.RawMessage, len(inputs))
		for i, in := range inputs {
			asked = append(asked, in.Key+"="+in.Method)
			answers[i] = json.RawMessage(`{"action":"accept","content":{"k":"` + in.Key + `"}}`)
			if in.Method == "roots/list" {
				answers[i] = json.RawMessage(`{"roots":[]}`)
			}
		}
		next, err := mcp.RetryParams(params, a.Result, inputs, answers)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(next), `"arguments":{"n":18446744073709551617}`) || !strings.Contains(string(next), `clientCapabilities":`+allCaps) {
			t.Fatalf("round %d's retry lost a member: %s", round, next)
		}
		params = next
	}
	if want := "name=elicitation/create color=elicitation/create roots=roots/list"; strings.Join(asked, " ") != want {
		t.Errorf("asked %q, want %q in the server's order", strings.Join(asked, " "), want)
	}
}
