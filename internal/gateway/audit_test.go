// audit_test.go pins the audit log through the real gateway (issue 3):
// under concurrent load from several identities, every gated call —
// admitted, failed, refused by role or rate, invalid — leaves exactly one
// record naming who called what and how it ended, no other method leaves
// any, no argument value is ever written, and the records survive a clean
// restart.

package gateway_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// gwAuditKey is what one record must say about one call.
type gwAuditKey struct {
	Subject, TokenID, Role, Kind, Name, Outcome string
	Code                                        int64
}

const gwKindTool = string(mcp.KindTool)

func gwKeyOf(r store.AuditRecord) gwAuditKey {
	return gwAuditKey{r.Subject, r.TokenID, r.Role, r.Kind, r.Name, r.Outcome, r.Code}
}

// gwAuditCall is one gated call of the load, with the outcome the plan
// expects for a caller of each role.
type gwAuditCall struct {
	method, kind, name string
	params             func(secret string) map[string]any
	want               func(role string) string // "" for "ok or rate_limited"
}

func gwAlways(outcome string) func(string) string { return func(string) string { return outcome } }

func gwAdminOnly(role string) string {
	if role == "admin" {
		return string(mcp.OutcomeOK)
	}
	return string(mcp.OutcomeForbidden)
}

// gwAuditPlan mixes every outcome, each call carrying a secret-looking
// argument value that must never reach the log.
var gwAuditPlan = []gwAuditCall{
	{"tools/call", gwKindTool, gwToolEcho, func(s string) map[string]any {
		return map[string]any{"name": gwToolEcho, "arguments": map[string]any{"text": s}}
	}, gwAlways(string(mcp.OutcomeOK))},
	{"tools/call", gwKindTool, gwToolFail, func(s string) map[string]any {
		return map[string]any{"name": gwToolFail, "arguments": map[string]any{"password": s}}
	}, gwAlways(string(mcp.OutcomeToolError))},
	{"tools/call", gwKindTool, gwToolAdmin, func(s string) map[string]any {
		return map[string]any{"name": gwToolAdmin, "arguments": map[string]any{"token": s}}
	}, gwAdminOnly},
	{"tools/call", gwKindTool, gwToolExpensive, func(s string) map[string]any {
		return map[string]any{"name": gwToolExpensive, "arguments": map[string]any{"key": s}}
	}, nil},
	{"tools/call", gwKindTool, gwToolEcho, func(s string) map[string]any { // text must be a string
		return map[string]any{"name": gwToolEcho, "arguments": map[string]any{"text": 42, "apiKey": s}}
	}, gwAlways(string(mcp.OutcomeInvalid))},
	{"tools/call", gwKindTool, "no_such_tool", func(s string) map[string]any {
		return map[string]any{"name": "no_such_tool", "arguments": map[string]any{"x": s}}
	}, gwAlways(string(mcp.OutcomeInvalid))},
	{"resources/read", string(mcp.KindResource), gwResVault, func(string) map[string]any {
		return map[string]any{"uri": gwResVault}
	}, gwAdminOnly},
	{"prompts/get", string(mcp.KindPrompt), gwPromptGreet, func(s string) map[string]any {
		return map[string]any{"name": gwPromptGreet, "arguments": map[string]any{"who": s}}
	}, gwAlways(string(mcp.OutcomeOK))},
}

// gwObserved names the outcome of a call from the answer the client got.
func gwObserved(res json.RawMessage, err error) (string, int64) {
	if err == nil {
		if gwIsToolError(res) {
			return string(mcp.OutcomeToolError), 0
		}
		return string(mcp.OutcomeOK), 0
	}
	je, d := gwRPCError(err)
	switch {
	case je == nil:
		return "transport failure: " + err.Error(), 0
	case je.Code == jsonrpc.CodeForbidden && d.Kind == "forbidden":
		return string(mcp.OutcomeForbidden), je.Code
	case je.Code == jsonrpc.CodeRateLimited && d.Kind == "rate_limited":
		return string(mcp.OutcomeRateLimited), je.Code
	case je.Code == jsonrpc.CodeInvalidParams:
		return string(mcp.OutcomeInvalid), je.Code
	}
	return string(mcp.OutcomeError), je.Code
}

// Eight callers of four identities, on both transports, 25 gated calls
// each, with lists and pings in between: one record per gated call, as the
// caller saw it, none for anything else, no argument value anywhere in the
// store, and all of it still there after a clean restart.
func TestAuditOneRecordPerGatedCallUnderLoad(t *testing.T) {
	e := gwStart(t, `rate_limits:
  entries:
    - {kind: tool, name: "expensive_*", rate: 0.001, burst: 2}
`)
	ctx := testkit.Context(t)
	argSecret := "sk-live-" + rand.Text()
	begin := time.Now().UTC()

	type caller struct{ subject, role, secret, tokenID string }
	var callers []caller
	for _, who := range []struct{ subject, role string }{
		{"ann", "viewer"}, {"ben", "editor"}, {"cat", "admin"}, {"dan", "viewer"},
	} {
		secret, id := e.token(who.subject, who.role)
		callers = append(callers, caller{who.subject, who.role, secret, id})
	}

	const perCaller = 25
	var (
		mu       sync.Mutex
		observed = map[gwAuditKey]int{}
		gated    int
		wg       sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range 8 {
		who := callers[i%len(callers)]
		transport := []string{gwStreamable, gwSSE}[i/len(callers)]
		c := e.dial(transport, gwBearer(who.secret))
		wg.Go(func() {
			<-start
			for j := range perCaller {
				if j%5 == 0 {
					if _, err := gwCall(ctx, c, "ping", map[string]any{}); err != nil {
						t.Errorf("ping: %v", err)
					}
				}
				if _, err := gwCall(ctx, c, "tools/list", map[string]any{}); err != nil {
					t.Errorf("tools/list: %v", err)
				}
				call := gwAuditPlan[(i+j)%len(gwAuditPlan)]
				res, err := gwCall(ctx, c, call.method, call.params(argSecret))
				outcome, code := gwObserved(res, err)
				want := ""
				if call.want != nil {
					want = call.want(who.role)
				}
				if want != "" && outcome != want || want == "" && outcome != string(mcp.OutcomeOK) && outcome != string(mcp.OutcomeRateLimited) {
					t.Errorf("%s (%s) %s %s: outcome %q (%v), want %q", who.subject, who.role, call.method, call.name, outcome, err, want)
				}
				mu.Lock()
				observed[gwAuditKey{who.subject, who.tokenID, who.role, call.kind, call.name, outcome, code}]++
				gated++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	// The rate rule admitted exactly its burst per identity.
	for _, who := range callers {
		k := gwAuditKey{who.subject, who.tokenID, who.role, gwKindTool, gwToolExpensive, string(mcp.OutcomeOK), 0}
		if observed[k] != 2 {
			t.Errorf("%s: %s admitted %d times, want the burst of 2", who.subject, gwToolExpensive, observed[k])
		}
	}

	if err := e.closeGateway(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	records := gwTail(t, e.store)
	if len(records) != gated || gated != 8*perCaller {
		t.Errorf("%d records for %d gated calls (want %d)", len(records), gated, 8*perCaller)
	}
	recorded := map[gwAuditKey]int{}
	end := time.Now().UTC()
	for _, r := range records {
		recorded[gwKeyOf(r)]++
		if r.Time.Before(begin.Add(-time.Second)) || r.Time.After(end) || r.Duration < 0 || r.Backend != "" {
			t.Errorf("record %+v: time, duration or backend out of place", r)
		}
		if line := fmt.Sprintf("%+v", r); strings.Contains(line, argSecret) {
			t.Errorf("record holds an argument value: %s", line)
		}
	}
	if !maps.Equal(recorded, observed) {
		for k, n := range observed {
			if recorded[k] != n {
				t.Errorf("%+v: %d records, %d calls", k, recorded[k], n)
			}
		}
		for k, n := range recorded {
			if _, ok := observed[k]; !ok {
				t.Errorf("%+v: %d records of calls never made", k, n)
			}
		}
	}
	if bytes.Contains(gwFileBytes(t, e.dbPath), []byte(argSecret)) {
		t.Error("the database holds an argument value")
	}

	// A clean restart: the store closed and opened again keeps every record.
	e.closeStore()
	reopened, err := sqlite.Open(ctx, e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	again := gwTail(t, reopened)
	if !slices.EqualFunc(again, records, func(a, b store.AuditRecord) bool {
		return gwKeyOf(a) == gwKeyOf(b) && a.Time.Equal(b.Time) && a.Duration == b.Duration
	}) {
		t.Errorf("after a restart %d records, before %d, or they differ", len(again), len(records))
	}
}

// Methods that are not gated leave no record, and neither does a request
// refused before MCP (401): the audit log is of calls that reached the
// gate.
func TestAuditNothingForUngatedMethods(t *testing.T) {
	e := gwStart(t, "")
	ctx := testkit.Context(t)
	secret, _ := e.token("alice", "admin")
	c := e.dial(gwStreamable, gwBearer(secret))
	for _, m := range []string{"ping", "tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
		if _, err := gwCall(ctx, c, m, map[string]any{}); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	_ = e.do(gwRequest{method: http.MethodPost, path: "/mcp", body: gwToolCallBody(1, gwToolAdmin)}) // 401
	if _, err := gwCallTool(ctx, c, gwToolAdmin, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.closeGateway(ctx); err != nil {
		t.Fatal(err)
	}
	records := gwTail(t, e.store)
	if len(records) != 1 || records[0].Name != gwToolAdmin || records[0].Outcome != string(mcp.OutcomeOK) {
		t.Errorf("records = %+v, want the one tools/call", records)
	}
}
