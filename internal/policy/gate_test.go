// gate_test.go pins the gate's contract (spec §6): lists and calls agree
// (a hidden entry is always refused), a refusal names the role required,
// role comes before rate so that a role denial spends no budget, and the
// two refusals carry data.kind so clients can tell them from other
// -32000/-32001 uses.

package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

var kinds = []mcp.EntryKind{mcp.KindTool, mcp.KindResource, mcp.KindPrompt}

func as(role string) context.Context {
	return mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "u-" + role, Role: role, TokenID: "tok"})
}

// gateError asserts err is a *jsonrpc.Error with code and decodes its data.
func gateError(t testing.TB, err error, code int64) (*jsonrpc.Error, map[string]any) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		t.Fatalf("error %v (%T) is not a *jsonrpc.Error", err, err)
	}
	if je.Code != code {
		t.Fatalf("code %d (%s), want %d", je.Code, je.Message, code)
	}
	dec := json.NewDecoder(bytes.NewReader(je.Data))
	dec.UseNumber()
	var data map[string]any
	if err := dec.Decode(&data); err != nil {
		t.Fatalf("data %s: %v", je.Data, err)
	}
	return je, data
}

func TestVisibleAndAdmitAgreeForEveryRoleAndKind(t *testing.T) {
	g := policy.NewGate(mustRoles(t, nil), nil)
	level := map[string]int{"": 1, "viewer": 1, "editor": 2, "admin": 3}
	for _, caller := range []string{"viewer", "editor", "admin"} {
		for _, min := range []string{"", "viewer", "editor", "admin", "superuser"} {
			for _, kind := range kinds {
				name := fmt.Sprintf("%s calls a %s at %q", caller, kind, min)
				t.Run(name, func(t *testing.T) {
					e := mcp.Entry{Kind: kind, Name: "deploy", MinRole: min}
					need, known := level[min]
					want := known && level[caller] >= need
					visible := g.Visible(as(caller), e)
					err := g.Admit(as(caller), e)
					if visible != want || (err == nil) != want {
						t.Fatalf("visible %v, admitted %v (%v); want %v", visible, err == nil, err, want)
					}
					if want {
						return
					}
					required := min
					if required == "" {
						required = "viewer"
					}
					je, data := gateError(t, err, jsonrpc.CodeForbidden)
					if data["kind"] != "forbidden" || data["required"] != required || data["role"] != caller {
						t.Errorf("data %s", je.Data)
					}
					if !strings.Contains(je.Message, fmt.Sprintf("requires role %q", required)) ||
						!strings.Contains(je.Message, fmt.Sprintf("%s %q", kind, "deploy")) {
						t.Errorf("message %q does not name the entry and the role required", je.Message)
					}
					if !known && !strings.Contains(je.Message, "not configured") {
						t.Errorf("message %q does not say the entry's role is not configured", je.Message)
					}
				})
			}
		}
	}
}

func TestForbiddenMessage(t *testing.T) {
	g := policy.NewGate(mustRoles(t, map[string]string{"intern": "viewer"}), nil)
	tests := []struct {
		name string
		ctx  context.Context
		e    mcp.Entry
		want string
	}{
		{"names the role required and the caller's", as("viewer"), mcp.Entry{Kind: mcp.KindTool, Name: "deploy", MinRole: "admin"},
			`forbidden: tool "deploy" requires role "admin" (you have "viewer")`},
		{"a custom caller role by its own name", as("intern"), mcp.Entry{Kind: mcp.KindPrompt, Name: "review", MinRole: "editor"},
			`forbidden: prompt "review" requires role "editor" (you have "intern")`},
		{"an entry role nobody configured", as("admin"), mcp.Entry{Kind: mcp.KindResource, Name: "x://a", MinRole: "root"},
			`forbidden: resource "x://a" requires role "root", which is not configured on this server`},
		{"a caller role nobody configured", as("guest"), mcp.Entry{Kind: mcp.KindTool, Name: "search"},
			`forbidden: tool "search" requires role "viewer" (your role "guest" is not configured on this server)`},
		{"a caller with no role", mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "x"}), mcp.Entry{Kind: mcp.KindTool, Name: "search"},
			`forbidden: tool "search" requires role "viewer" (you have no role)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			je, _ := gateError(t, g.Admit(tt.ctx, tt.e), jsonrpc.CodeForbidden)
			if je.Message != tt.want {
				t.Fatalf("message %q\n want %q", je.Message, tt.want)
			}
		})
	}
}

func TestNoIdentityIsHiddenAndRefused(t *testing.T) {
	g := policy.NewGate(nil, nil)
	for _, kind := range kinds {
		e := mcp.Entry{Kind: kind, Name: "anything"}
		if g.Visible(context.Background(), e) {
			t.Errorf("%s visible without an identity", kind)
		}
		_, data := gateError(t, g.Admit(context.Background(), e), jsonrpc.CodeForbidden)
		if data["kind"] != "forbidden" {
			t.Errorf("%s: data %v", kind, data)
		}
	}
}

func TestRoleDenialSpendsNoBudget(t *testing.T) {
	c := newClock()
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 0.01, Burst: 1}}, c.Now)
	g := policy.NewGate(mustRoles(t, nil), l)
	viewer := as("viewer")
	for i := range 10 {
		gateError(t, g.Admit(viewer, mcp.Entry{Kind: mcp.KindTool, Name: "deploy", MinRole: "admin"}), jsonrpc.CodeForbidden)
		if i == 0 && l.Len() != 0 {
			t.Fatal("a role denial created a bucket")
		}
	}
	if err := g.Admit(viewer, mcp.Entry{Kind: mcp.KindTool, Name: "search"}); err != nil {
		t.Fatalf("first allowed call refused after role denials: %v", err)
	}
	// The budget was real: the next call is over it.
	gateError(t, g.Admit(viewer, mcp.Entry{Kind: mcp.KindTool, Name: "search"}), jsonrpc.CodeRateLimited)
	// And a role denial still answers forbidden, not rate limited.
	gateError(t, g.Admit(viewer, mcp.Entry{Kind: mcp.KindTool, Name: "deploy", MinRole: "admin"}), jsonrpc.CodeForbidden)
}

func TestRateLimitedErrorCarriesAnHonestWholeSecondRetry(t *testing.T) {
	for _, r := range []float64{0.1, 0.3, 1.0 / 3, 0.9, 20.0 / 977} {
		c := newClock()
		l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: r, Burst: 1}}, c.Now)
		g := policy.NewGate(nil, l)
		ctx, e := as("viewer"), mcp.Entry{Kind: mcp.KindTool, Name: "search"}
		if err := g.Admit(ctx, e); err != nil {
			t.Fatal(err)
		}
		c.Advance(200 * time.Millisecond)
		t0 := c.Now()
		je, data := gateError(t, g.Admit(ctx, e), jsonrpc.CodeRateLimited)
		n, ok := data["retryAfterSeconds"].(json.Number)
		secs, err := n.Int64()
		if data["kind"] != "rate_limited" || !ok || err != nil || secs < 1 {
			t.Fatalf("rate %v: data %s", r, je.Data)
		}
		if want := fmt.Sprintf("rate limited: retry in %d s", secs); je.Message != want {
			t.Fatalf("message %q, want %q", je.Message, want)
		}
		c.Set(t0.Add(time.Duration(secs-1) * time.Second))
		gateError(t, g.Admit(ctx, e), jsonrpc.CodeRateLimited)
		c.Set(t0.Add(time.Duration(secs) * time.Second))
		if err := g.Admit(ctx, e); err != nil {
			t.Fatalf("rate %v: refused after waiting the %d s advertised: %v", r, secs, err)
		}
	}
}

func TestGateLimitsCustomRolesByTheirOwnRuleThenTheirBaseRule(t *testing.T) {
	roles := mustRoles(t, map[string]string{"intern": "viewer", "contractor": "viewer"})
	rules := policy.LimitRules{
		Default: policy.Limit{Rate: 1, Burst: 1},
		Roles: map[string]policy.Limit{
			"viewer":     {Rate: 1, Burst: 2},
			"contractor": {Rate: 1, Burst: 3},
		},
	}
	tests := []struct {
		role string
		want int
	}{
		{"viewer", 2},
		{"intern", 2},     // no rule of its own: its base role's
		{"contractor", 3}, // its own rule beats its base role's
		{"editor", 1},     // no rule: the default
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			g := policy.NewGate(roles, policy.NewLimiter(rules, newClock().Now))
			n := 0
			for range 10 {
				if g.Admit(as(tt.role), mcp.Entry{Kind: mcp.KindTool, Name: "search"}) == nil {
					n++
				}
			}
			if n != tt.want {
				t.Fatalf("%d admitted, want %d", n, tt.want)
			}
		})
	}
}
