package policy_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// docsAndOncall are the two rules.
var docsAndOncall = []policy.RuleSpec{
	{Name: "docs-only-for-viewers", Match: `request.backend == "files" && principal.role == "viewer"`,
		DenyUnless: `request.arguments.path.startsWith("/srv/docs/")`, Message: "Viewers may read only under /srv/docs."},
	{Name: "oncall-restart", Match: `request.entry == "ops__restart_service"`, DenyUnless: `"oncall" in principal.groups`},
}

// jwtWith is a token presented with claims (the rules read it; its
// signature was checked at authentication).
func jwtWith(claims map[string]any) mcp.Secret {
	b, _ := json.Marshal(claims)
	return mcp.Secret("eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(b) + ".sig")
}

// call is a tools/call request of entry with args.
func call(t testing.TB, args string) *mcp.Request {
	t.Helper()
	return &mcp.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"x","arguments":` + args + `}`)}
}

func TestRulesDenyWhatTheySayAndNothingElse(t *testing.T) {
	rs, err := policy.CompileRules(docsAndOncall, nil)
	if err != nil {
		t.Fatal(err)
	}
	viewer, admin := mcp.Identity{Subject: "v", Role: "viewer"}, mcp.Identity{Subject: "a", Role: "admin"}
	read := mcp.Entry{Kind: mcp.KindTool, Name: "files__read", Owner: "files", Origin: "read"}
	restart := mcp.Entry{Kind: mcp.KindTool, Name: "ops__restart_service", Owner: "ops"}
	oncall := mcp.Identity{Subject: "o", Role: "editor", Presented: jwtWith(map[string]any{"groups": []string{"oncall", "dev"}})}
	for _, c := range []struct {
		name string
		id   mcp.Identity
		e    mcp.Entry
		args string
		rule string // the rule that denies ("": allowed)
	}{
		{"a viewer under /srv/docs", viewer, read, `{"path":"/srv/docs/a.md"}`, ""},
		{"a viewer elsewhere", viewer, read, `{"path":"/etc/passwd"}`, "docs-only-for-viewers"},
		{"a viewer with no path (the rule fails, and denies)", viewer, read, `{}`, "docs-only-for-viewers"},
		{"an admin anywhere", admin, read, `{"path":"/etc/passwd"}`, ""},
		// Twin keys: a backend decoding with Go's encoding/json reads the
		// PATH; one keeping the first of two equal keys, /etc/passwd.
		{"a viewer's path beside its upper-case twin", viewer, read, `{"path":"/srv/docs/a.md","PATH":"/etc/passwd"}`, "docs-only-for-viewers"},
		{"a viewer's path twice", viewer, read, `{"path":"/etc/passwd","path":"/srv/docs/a.md"}`, "docs-only-for-viewers"},
		{"twins deep in a viewer's arguments", viewer, read, `{"path":"/srv/docs/a.md","o":[{"k":1,"\u212a":2}]}`, "docs-only-for-viewers"},
		{"an admin's twins (the rule does not match, and reads no arguments)", admin, read, `{"path":"/a","PATH":"/b"}`, ""},
		{"the on-call group restarts", oncall, restart, `{}`, ""},
		{"anyone else does not", admin, restart, `{}`, "oncall-restart"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, c.args)
			err := rs.Check(context.Background(), c.id, c.e, r)
			var je *jsonrpc.Error
			switch {
			case c.rule == "" && err != nil:
				t.Fatalf("denied: %v", err)
			case c.rule == "":
			case !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden || r.DeniedBy() != c.rule:
				t.Fatalf("%v (denied by %q), want -32001 by %s", err, r.DeniedBy(), c.rule)
			case c.rule == "docs-only-for-viewers" && je.Message != "Viewers may read only under /srv/docs.":
				t.Errorf("message %q", je.Message)
			case c.rule == "oncall-restart" && je.Message != "denied by policy rule oncall-restart":
				t.Errorf("message %q", je.Message)
			}
		})
	}
}

// An expression that does not compile, or is not a bool, is refused when
// the configuration loads, naming the rule, the key and the position.
func TestARuleThatDoesNotCompileIsRefusedNamingWhere(t *testing.T) {
	for _, c := range []struct {
		name string
		spec policy.RuleSpec
		want []string
	}{
		{"a syntax error", policy.RuleSpec{Name: "bad", DenyUnless: `principal.role ==`}, []string{"policy.rules[0].deny_unless: rule bad", "1:18"}},
		{"an unknown variable", policy.RuleSpec{Name: "who", Match: `user.role == "x"`, DenyUnless: "true"}, []string{"policy.rules[0].match: rule who", "undeclared reference to 'user'", "1:1"}},
		{"not a bool", policy.RuleSpec{Name: "str", DenyUnless: `principal.subject + "x"`}, []string{"deny_unless: rule str", "not a bool"}},
		{"no name", policy.RuleSpec{DenyUnless: "true"}, []string{"policy.rules[0].name"}},
		{"no deny_unless", policy.RuleSpec{Name: "n"}, []string{"policy.rules[0].deny_unless", "required"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := policy.CompileRules([]policy.RuleSpec{c.spec}, nil)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%v, want it to say %q", err, w)
				}
			}
		})
	}
	if _, err := policy.CompileRules([]policy.RuleSpec{{Name: "a", DenyUnless: "true"}, {Name: "a", DenyUnless: "true"}}, nil); err == nil {
		t.Error("two rules of one name: accepted")
	}
}

// No expression can stall a call: one whose cost passes the limit (a
// comprehension over a huge argument) stops, and denies.
func TestARuleOverItsCostLimitDenies(t *testing.T) {
	rs, err := policy.CompileRules([]policy.RuleSpec{{Name: "each", DenyUnless: `request.arguments.items.all(x, x.size() < 10 && x.startsWith("a"))`}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	small := call(t, `{"items":["ab","ac"]}`)
	if err := rs.Check(context.Background(), mcp.Identity{}, mcp.Entry{Name: "t"}, small); err != nil {
		t.Fatalf("two items: %v", err)
	}
	items := make([]string, 200_000)
	for i := range items {
		items[i] = "ab"
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	huge := call(t, string(b))
	if err := rs.Check(context.Background(), mcp.Identity{}, mcp.Entry{Name: "t"}, huge); err == nil || huge.DeniedBy() != "each" {
		t.Errorf("a rule past its cost limit: %v", err)
	}
}

// A rule decided without the arguments hides the entry from the callers it
// denies; one that needs them leaves it listed, for the call to decide.
func TestARuleThatNeedsNoArgumentsHidesTheEntry(t *testing.T) {
	rs, err := policy.CompileRules(docsAndOncall, nil)
	if err != nil {
		t.Fatal(err)
	}
	restart := mcp.Entry{Kind: mcp.KindTool, Name: "ops__restart_service", Owner: "ops"}
	read := mcp.Entry{Kind: mcp.KindTool, Name: "files__read", Owner: "files"}
	oncall := mcp.Identity{Role: "editor", Presented: jwtWith(map[string]any{"groups": []string{"oncall"}})}
	for _, c := range []struct {
		name string
		id   mcp.Identity
		e    mcp.Entry
		want bool
	}{
		{"restart, to the on-call group", oncall, restart, true},
		{"restart, to others", mcp.Identity{Role: "admin"}, restart, false},
		{"read, to a viewer (it depends on the path)", mcp.Identity{Role: "viewer"}, read, true},
		{"read, to an admin", mcp.Identity{Role: "admin"}, read, true},
	} {
		if got := rs.Visible(c.id, c.e); got != c.want {
			t.Errorf("%s: visible %v, want %v", c.name, got, c.want)
		}
	}
}

// The request's variables are what the rules document: the method, the
// entry as callers see it and the backend's own name, the era, the client
// name; and now.
func TestTheRequestsVariables(t *testing.T) {
	e := mcp.Entry{Kind: mcp.KindTool, Name: "gh__search", Owner: "gh", Origin: "search_issues"}
	for _, expr := range []string{
		`request.method == "tools/call"`, `request.entry == "gh__search"`, `request.origin == "search_issues"`,
		`request.backend == "gh"`, `request.kind == "tool"`, `principal.subject == "s" && principal.role == "editor" && principal.token == "tok_1"`,
		`now > timestamp("2026-01-01T00:00:00Z")`, `now.getHours("UTC") >= 0`, `request.arguments.q == "bug"`, `principal.groups == []`,
	} {
		rs, err := policy.CompileRules([]policy.RuleSpec{{Name: "r", DenyUnless: expr}}, nil)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if err := rs.Check(context.Background(), mcp.Identity{Subject: "s", Role: "editor", TokenID: "tok_1"}, e, call(t, `{"q":"bug"}`)); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}

// An interceptor's condition that reads arguments with twin keys fails,
// saying which keys (the interceptor then runs, on the safe side).
func TestAConditionDoesNotReadArgumentsWithTwinKeys(t *testing.T) {
	c, err := policy.CompileCondition(`request.arguments.path.startsWith("/srv/")`)
	if err != nil {
		t.Fatal(err)
	}
	e := mcp.Entry{Kind: mcp.KindTool, Name: "files__read", Owner: "files"}
	if ok, err := c.Holds(mcp.Identity{}, e, call(t, `{"path":"/srv/a"}`)); !ok || err != nil {
		t.Fatalf("plain arguments: %v %v", ok, err)
	}
	ok, err := c.Holds(mcp.Identity{}, e, call(t, `{"path":"/srv/a","Path":"/etc"}`))
	var twins *policy.TwinKeysError
	if ok || !errors.As(err, &twins) || twins.Key != "path" || twins.Other != "Path" {
		t.Fatalf("twin keys: %v %v, want a *TwinKeysError naming path and Path", ok, err)
	}
}

// BenchmarkTenRules is what ten rules cost a call: the arguments decoded
// once, each rule a match and a deny_unless.
func BenchmarkTenRules(b *testing.B) {
	var specs []policy.RuleSpec
	for i := range 10 {
		specs = append(specs, policy.RuleSpec{Name: fmt.Sprint("r", i), Match: fmt.Sprintf(`request.backend == "b%d" || principal.role == "viewer"`, i),
			DenyUnless: `request.arguments.path.startsWith("/srv/")`})
	}
	rs, err := policy.CompileRules(specs, nil)
	if err != nil {
		b.Fatal(err)
	}
	id := mcp.Identity{Subject: "v", Role: "viewer", TokenID: "tok_1"}
	e := mcp.Entry{Kind: mcp.KindTool, Name: "files__read", Owner: "files"}
	r := call(b, `{"path":"/srv/docs/a.md","limit":10}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := rs.Check(context.Background(), id, e, r); err != nil {
			b.Fatal(err)
		}
	}
}
