package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// The authorization matrix again, over relayed entries: a backend server
// (with no gate of its own) lists, for each minimum role, a tool, a
// resource, a resource template and a prompt named after that role; the
// gateway relays it with min_roles patterns giving each entry its role.
// Every caller role × transport × entry is allowed or refused exactly as
// for native entries, the lists show exactly the allowed (prefixed)
// entries, a refused call never reaches the backend, and every audit
// record of a relayed call names the backend.

const rmBackend = "rel"

// rmRules give each backend entry the minimum role its name carries;
// entries named "any" match no rule and keep the backend's min_role ("").
// "root" is not a configured role: validation refuses it in a file, so the
// test sets the rules after parsing, to show the gateway fails closed.
func rmRules() []config.MinRoleRule {
	var rules []config.MinRoleRule
	for _, min := range mxMinRoles {
		if min == "" {
			continue
		}
		rules = append(rules,
			config.MinRoleRule{Name: "*_" + min, Role: min}, // tools and prompts
			config.MinRoleRule{Kind: config.EntryResource, Name: "test://res/" + min, Role: min},
			config.MinRoleRule{Kind: config.EntryResource, Name: "test://tpl/" + min + "/*", Role: min},
		)
	}
	// A rule of another kind does not apply: tool_any stays open.
	return append(rules, config.MinRoleRule{Kind: config.EntryPrompt, Name: "tool_*", Role: "admin"})
}

// rmEnv is a gateway relaying one backend, with authentication on.
type rmEnv struct {
	base   string
	tokens map[string]string
	cat    *mxCatalogue // the backend's catalogue, counting calls reached
	st     store.Store
	stop   func() // ends the gateway and flushes its audit log, once
}

func rmStart(t *testing.T) *rmEnv {
	t.Helper()
	ctx := context.Background()
	e := &rmEnv{cat: &mxCatalogue{}}

	front := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "rm-backend", Version: "1"}})
	e.cat.register(front)
	bh := mcphttp.NewHandler(front, mcphttp.Options{})
	bs := httptest.NewServer(bh)
	t.Cleanup(func() { bs.CloseClientConnections(); bs.Close(); bh.Close() })

	cfg, err := config.Parse([]byte(fmt.Sprintf("listen: 127.0.0.1:0\nroles: {analyst: viewer, ops: editor}\nhttp: {sessionless: true}\n"+
		"backends: [{name: %s, kind: http, url: %q}]\n", rmBackend, bs.URL)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Backends[0].MinRoles = rmRules()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	native := func(s *mcp.Server) {
		if err := s.AddTools(&mcp.Tool{Name: "native_tool", Description: "the gateway's own",
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("native")}})
			}}); err != nil {
			panic(err)
		}
	}
	gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st, Catalogue: native, Backend: bkFast,
		Info: mcp.Implementation{Name: "gateway-test", Version: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); gw.Run(runCtx) }()
	ts := httptest.NewServer(gw.Handler())
	e.base = ts.URL
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			ts.CloseClientConnections()
			ts.Close()
			cancel()
			<-done
			if err := gw.Close(context.Background()); err != nil {
				t.Errorf("gateway close: %v", err)
			}
		})
	}
	t.Cleanup(func() { e.stop(); _ = st.Close() })

	e.tokens = map[string]string{}
	for _, role := range mxCallers {
		secret, _, err := gw.Tokens().Create(ctx, "relayed matrix "+role, role, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		e.tokens[role] = secret
	}
	bkWaitReady(t, e.base, http.StatusOK)
	return e
}

// rmCells are mxCells as the gateway shows them: tool and prompt names
// prefixed, the counter still the backend's own name.
func rmCells(min string) []mxCell {
	cells := mxCells(min)
	sfx := mxSuffix(min)
	for i := range cells {
		switch cells[i].method {
		case "tools/call":
			cells[i].params = `{"name":"` + rmBackend + `__tool_` + sfx + `","arguments":{"n":1}}`
		case "prompts/get":
			cells[i].params = `{"name":"` + rmBackend + `__prompt_` + sfx + `","arguments":{"topic":"x"}}`
		}
	}
	return cells
}

func TestAuthorizationMatrixOverRelayedEntries(t *testing.T) {
	e := rmStart(t)
	relayedCalls := 0
	transports := []string{"streamable", "legacy-sse", "sessionless-2026"}
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			for _, caller := range mxCallers {
				t.Run(caller, func(t *testing.T) {
					c := mxConnect(t, transport, e.base, e.tokens[caller])
					rmCheckLists(t, c, caller)
					for _, min := range mxMinRoles {
						for _, cell := range rmCells(min) {
							mxCheckCell(t, c, e.cat, caller, min, cell)
							relayedCalls++
						}
					}
					if _, err := c.Call(context.Background(), "tools/call", json.RawMessage(`{"name":"native_tool","arguments":{}}`)); err != nil {
						t.Errorf("native_tool as %s: %v", caller, err)
					}
				})
			}
		})
	}

	// Every call, allowed or refused, is audited; relayed ones name the
	// backend, native ones none.
	e.stop()
	recs := gwTail(t, e.st)
	relayed, native := 0, 0
	for _, r := range recs {
		switch r.Name {
		case "native_tool":
			native++
			if r.Backend != "" {
				t.Errorf("native call audited with backend %q", r.Backend)
			}
		default:
			relayed++
			if r.Backend != rmBackend {
				t.Errorf("relayed %s %s (%s, %s) audited with backend %q, want %q", r.Kind, r.Name, r.Role, r.Outcome, r.Backend, rmBackend)
			}
		}
	}
	if relayed != relayedCalls || native != len(transports)*len(mxCallers) {
		t.Errorf("audit holds %d relayed and %d native records, want %d and %d", relayed, native, relayedCalls, len(transports)*len(mxCallers))
	}
}

// rmCheckLists: each list shows exactly the relayed entries the caller may
// use, tools and prompts under the backend's prefix.
func rmCheckLists(t *testing.T, c mxCaller, caller string) {
	t.Helper()
	tools := []string{"native_tool"}
	var resources, templates, prompts []string
	for _, min := range mxMinRoles {
		if mxAllowed(caller, min) {
			sfx := mxSuffix(min)
			tools = append(tools, rmBackend+"__tool_"+sfx)
			resources = append(resources, "test://res/"+sfx)
			templates = append(templates, "test://tpl/"+sfx+"/{id}")
			prompts = append(prompts, rmBackend+"__prompt_"+sfx)
		}
	}
	for _, l := range []struct {
		method, field, key string
		want               []string
	}{
		{"tools/list", "tools", "name", tools},
		{"resources/list", "resources", "uri", resources},
		{"resources/templates/list", "resourceTemplates", "uriTemplate", templates},
		{"prompts/list", "prompts", "name", prompts},
	} {
		got := mxListed(t, c, l.method, l.field, l.key)
		slices.Sort(got)
		slices.Sort(l.want)
		if !slices.Equal(got, l.want) {
			t.Errorf("%s as %s = %v, want %v", l.method, caller, got, l.want)
		}
	}
}
