package intercept_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/intercept"
	"github.com/mcpgate/mcpgate/mcp"
)

// The redactor replaces every known secret in a result's text, and the
// operator's own patterns, counting each; a result with none comes back
// byte for byte.
func TestTheRedactorReplacesSecretsAndCountsThem(t *testing.T) {
	secrets := map[string]string{
		"private_key":       "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----",
		"aws_access_key_id": "AKIAIOSFODNN7EXAMPLE",
		"github_token":      "ghp_" + strings.Repeat("a1B2", 9),
		"slack_token":       "xoxb-1234567890-abcdefghij",
		"google_api_key":    "AIza" + strings.Repeat("x", 35),
		"jwt":               "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
		"bearer_token":      "Bearer abcdefghijklmnopqrstuvwxyz0123",
		"mcpgate_token":     "mcpg_" + strings.Repeat("Z", 43),
		"ticket_id":         "TICKET-4242",
	}
	var redacted []string
	c, err := intercept.New([]intercept.HookSpec{{Name: "secrets", Builtin: intercept.BuiltinRedact,
		Patterns: []intercept.Pattern{{Name: "ticket_id", Regexp: `TICKET-[0-9]+`}}}},
		intercept.Options{Redacted: func(p string, n int) { redacted = append(redacted, p) }})
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(mcp.Options{})
	var answer string
	_ = s.AddTools(&mcp.Tool{Name: "echo", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(answer)}})
	}})
	s.UseAdmitted(c.Middleware)
	ctx := mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "a", Role: "admin"})
	for name, secret := range secrets {
		answer = "before " + secret + " after"
		res, err := s.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		var r mcp.CallToolResult
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatalf("%s: the redacted result is not JSON: %s", name, res)
		}
		if got := r.Content[0].Text; got != "before [REDACTED:"+name+"] after" {
			t.Errorf("%s: %q", name, got)
		}
	}
	if len(redacted) != len(secrets) {
		t.Errorf("counted %v", redacted)
	}
	answer = `nothing to see: "quoted" \ and ünïcode`
	res, _ := s.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{}}`))
	want, _ := mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(answer)}})
	if string(res) != string(want) {
		t.Errorf("a clean result changed:\n%s\n%s", res, want)
	}
	if _, err := intercept.New([]intercept.HookSpec{{Name: "r", Builtin: intercept.BuiltinRedact, Patterns: []intercept.Pattern{{Name: "bad", Regexp: "(a"}}}}, intercept.Options{}); err == nil {
		t.Error("a pattern that does not compile: accepted")
	}
}

// FuzzRedactStrings: whatever the JSON, what the redactor writes is JSON
// again, and the same as what it read when it found nothing.
func FuzzRedactStrings(f *testing.F) {
	for _, s := range []string{`{"a":"AKIAIOSFODNN7EXAMPLE"}`, `["x","y"]`, `{"k":"v\"AKIA"}`, `"plain"`, `{"a":{"b":["AKIAIOSFODNN7EXAMPLE",1,null]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		out, changed := intercept.RedactForTest(json.RawMessage(raw))
		if !json.Valid(out) {
			t.Fatalf("%q redacted to %q: not JSON", raw, out)
		}
		if !changed && string(out) != raw {
			t.Fatalf("%q came back as %q with nothing redacted", raw, out)
		}
	})
}
