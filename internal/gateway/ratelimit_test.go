// ratelimit_test.go pins the call gate's rate limits over HTTP (spec §6):
// concurrent callers are admitted exactly up to the burst, a refusal is
// -32000 with kind "rate_limited" and an honest whole retryAfterSeconds,
// a role denial spends no budget, and entry and role rules take precedence
// over the default.

package gateway_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// gwRetryAfter fails unless d carries a whole number of seconds of at
// least one, and returns it.
func gwRetryAfter(t *testing.T, what string, d gwErrData) int64 {
	t.Helper()
	n, err := d.RetryAfterSeconds.Int64()
	if err != nil || strings.ContainsAny(d.RetryAfterSeconds.String(), ".eE") || n < 1 {
		t.Errorf("%s: retryAfterSeconds = %q, want an integer ≥ 1", what, d.RetryAfterSeconds)
	}
	return n
}

// gwCallN calls tool n times in turn and counts the admitted calls, failing
// on any answer but success or a rate-limit refusal.
func gwCallN(t *testing.T, c *mcp.Client, tool string, n int) (admitted int) {
	t.Helper()
	ctx := testkit.Context(t)
	for i := range n {
		_, err := gwCallTool(ctx, c, tool, nil)
		if err == nil {
			admitted++
			continue
		}
		d := gwWantRefusal(t, fmt.Sprintf("%s call %d", tool, i+1), err, jsonrpc.CodeRateLimited, "rate_limited")
		gwRetryAfter(t, tool, d)
	}
	return admitted
}

// Twenty calls released at once from one identity: exactly the burst is
// admitted, and every other call is told, honestly, how long to wait.
func TestRateLimitConcurrentCallsAdmitExactlyTheBurst(t *testing.T) {
	e := gwStart(t, "rate_limits:\n  default: {rate: 0.001, burst: 3}\n")
	secret, _ := e.token("alice", "viewer")
	// Two sessions of the same identity on two transports share one
	// budget: the bucket is the identity's, not the session's.
	clients := []*mcp.Client{e.dial(gwStreamable, gwBearer(secret)), e.dial(gwSSE, gwBearer(secret))}
	ctx := testkit.Context(t)

	const callers = 20
	answers := make(chan error, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			_, err := gwCallTool(ctx, clients[i%len(clients)], gwToolExpensive, nil)
			answers <- err
		})
	}
	close(start)
	wg.Wait()
	close(answers)

	admitted, limited := 0, 0
	for err := range answers {
		if err == nil {
			admitted++
			continue
		}
		d := gwWantRefusal(t, "concurrent call", err, jsonrpc.CodeRateLimited, "rate_limited")
		if d.Kind != "rate_limited" {
			continue
		}
		limited++
		// One token refills in 1/0.001 s = 1000 s; the wait cannot be less
		// than that minus the test's running time, nor more.
		if n := gwRetryAfter(t, "concurrent call", d); n < 990 || n > 1000 {
			t.Errorf("retryAfterSeconds = %d, want about 1000 (one token at 0.001/s)", n)
		}
	}
	if admitted != 3 || limited != callers-3 {
		t.Errorf("admitted %d, rate limited %d; want 3 and %d", admitted, limited, callers-3)
	}
	if n := e.probe.count(gwToolExpensive); n != 3 {
		t.Errorf("handler ran %d times, want 3", n)
	}
}

// Role first, then rate: a caller knocking on a door its role never opens
// spends nothing of the budget it needs for the doors it may use.
func TestRateLimitRoleDenialSpendsNoBudget(t *testing.T) {
	e := gwStart(t, "rate_limits:\n  default: {rate: 0.001, burst: 3}\n")
	secret, _ := e.token("reader", "viewer")
	c := e.dial(gwStreamable, gwBearer(secret))
	ctx := testkit.Context(t)
	for range 5 {
		_, err := gwCallTool(ctx, c, gwToolAdmin, nil)
		gwWantRefusal(t, "viewer calling the admin tool", err, jsonrpc.CodeForbidden, "forbidden")
		_, err = gwCall(ctx, c, "resources/read", map[string]any{"uri": gwResVault})
		gwWantRefusal(t, "viewer reading the admin resource", err, jsonrpc.CodeForbidden, "forbidden")
	}
	if got := gwCallN(t, c, gwToolExpensive, 4); got != 3 {
		t.Errorf("after 10 role denials, %d of 4 calls admitted; want the whole burst of 3", got)
	}
}

// An entry rule throttles the entries its glob matches — together, as
// one bucket — and nothing else.
func TestRateLimitEntryRuleAppliesToMatchingEntriesOnly(t *testing.T) {
	e := gwStart(t, `rate_limits:
  default: {rate: 0}
  entries:
    - {kind: tool, name: "expensive_*", rate: 0.001, burst: 2}
`)
	secret, _ := e.token("alice", "admin")
	c := e.dial(gwStreamable, gwBearer(secret))
	if got := gwCallN(t, c, gwToolExpensive, 1) + gwCallN(t, c, gwToolExpensive2, 3); got != 2 {
		t.Errorf("expensive_* admitted %d of 4 calls, want the burst of 2", got)
	}
	for _, tool := range []string{gwToolEdit, gwToolAdmin} {
		if got := gwCallN(t, c, tool, 10); got != 10 {
			t.Errorf("%s (no rule matches) admitted %d of 10", tool, got)
		}
	}
	// The rule names tools: a resource is not throttled by it.
	ctx := testkit.Context(t)
	for range 5 {
		if _, err := gwCall(ctx, c, "resources/read", map[string]any{"uri": gwResPublic}); err != nil {
			t.Errorf("resource read: %v", err)
		}
	}
	// The budget is the identity's: another caller has a full one.
	other, _ := e.token("bob", "viewer")
	if got := gwCallN(t, e.dial(gwStreamable, gwBearer(other)), gwToolExpensive, 3); got != 2 {
		t.Errorf("another identity: expensive_* admitted %d of 3, want 2", got)
	}
}

// A role's rule beats the default, for a base role and for a custom role
// mapped onto it.
func TestRateLimitRoleRuleOverridesDefault(t *testing.T) {
	e := gwStart(t, `roles:
  intern: editor
rate_limits:
  default: {rate: 0.001, burst: 1}
  roles:
    editor: {rate: 0.001, burst: 4}
    admin: {rate: 0}
`)
	for _, tc := range []struct {
		role       string
		calls, ok  int
		whatIsUsed string
	}{
		{"viewer", 3, 1, "the default"},
		{"editor", 6, 4, "the editor rule"},
		{"intern", 6, 4, "the editor rule, through the base role"},
		{"admin", 20, 20, "the admin rule: unlimited"},
	} {
		secret, _ := e.token(tc.role+"-caller", tc.role)
		c := e.dial(gwStreamable, gwBearer(secret))
		if got := gwCallN(t, c, gwToolExpensive, tc.calls); got != tc.ok {
			t.Errorf("%s: %d of %d admitted, want %d (%s)", tc.role, got, tc.calls, tc.ok, tc.whatIsUsed)
		}
	}
}
