// engine_test.go drives the gate through the real engine (mcp.Server and
// Session.Handle), the way every transport does: for each role, every list
// shows exactly what the role reaches, every gated method refuses the rest
// with -32001 before the handler runs, and a rate refusal arrives as
// -32000. This is the test seed 003 lacked: its lists, tools/call,
// resources/read and prompts/get did not agree.

package policy_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// The catalogue: one entry of each kind at each minimum role. "root" is a
// role nobody configured, so its entries are closed to everyone.
var minRoles = []string{"", "viewer", "editor", "admin", "root"}

func entryName(min string) string {
	if min == "" {
		return "floor"
	}
	return min
}

// reach is which catalogue entries each caller role may use.
var reach = map[string][]string{
	"viewer": {"floor", "viewer"},
	"intern": {"floor", "viewer"},
	"editor": {"floor", "viewer", "editor"},
	"admin":  {"floor", "viewer", "editor", "admin"},
	"sre":    {"floor", "viewer", "editor", "admin"},
	"guest":  nil, // not configured
	"":       nil,
}

// ran counts handler runs by "kind:name".
type ran struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *ran) mark(what string) {
	r.mu.Lock()
	r.n[what]++
	r.mu.Unlock()
}

func (r *ran) count(what string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[what]
}

func catalogue(t *testing.T, gate mcp.Gate) (*mcp.Server, *ran) {
	t.Helper()
	runs := &ran{n: map[string]int{}}
	srv := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "access-test", Version: "0"}, Gate: gate})
	for _, min := range minRoles {
		name := entryName(min)
		must(t, srv.AddTools(&mcp.Tool{
			Name: "tool_" + name, MinRole: min,
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				runs.mark("tool:" + name)
				return json.RawMessage(`{"content":[]}`), nil
			},
		}))
		read := func(kind string) mcp.ResourceHandler {
			return func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
				runs.mark(kind + ":" + name)
				return json.RawMessage(`{"contents":[]}`), nil
			}
		}
		must(t, srv.AddResources(&mcp.Resource{URI: "doc://" + name, Name: name, MinRole: min, Read: read("resource")}))
		must(t, srv.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: "row://" + name + "/{id}", Name: name, MinRole: min, Read: read("template")}))
		must(t, srv.AddPrompts(&mcp.Prompt{
			Name: "prompt_" + name, MinRole: min,
			Arguments: []mcp.PromptArgument{{Name: "topic", Required: true}},
			Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
				runs.mark("prompt:" + name)
				return json.RawMessage(`{"messages":[]}`), nil
			},
		}))
	}
	return srv, runs
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// client is one caller's session, talking to the engine as a transport
// would: the identity in every request's context.
type client struct {
	t   testing.TB
	ss  *mcp.Session
	ctx context.Context
	seq atomic.Int64
}

func connect(t testing.TB, srv *mcp.Server, id mcp.Identity) *client {
	t.Helper()
	ss := srv.NewSession(mcp.SessionOptions{ID: "s-" + id.Subject, Identity: id})
	t.Cleanup(ss.Close)
	c := &client{t: t, ss: ss, ctx: mcp.WithIdentity(context.Background(), id)}
	if m := c.call("initialize", `{"protocolVersion":"`+mcp.LatestVersion+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`); m.Kind() != jsonrpc.KindResult {
		t.Fatalf("initialize: %s", m.Error)
	}
	return c
}

type discard struct{}

func (discard) Send(context.Context, []byte) error { return nil }

func (c *client) call(method, params string) *jsonrpc.Message {
	c.t.Helper()
	id := jsonrpc.ID(strconv.FormatInt(c.seq.Add(1), 10))
	m, err := jsonrpc.Parse(jsonrpc.AppendRequest(nil, id, method, json.RawMessage(params)))
	must(c.t, err)
	answer := c.ss.Handle(c.ctx, m, discard{})
	got, err := jsonrpc.Parse(answer)
	if err != nil {
		c.t.Fatalf("%s: unparseable answer %s: %v", method, answer, err)
	}
	return got
}

// names lists the value of key in every element of the list field of a
// list result.
func (c *client) names(method, field, key string) []string {
	c.t.Helper()
	m := c.call(method, `{}`)
	if m.Kind() != jsonrpc.KindResult {
		c.t.Fatalf("%s: %s", method, m.Error)
	}
	var res map[string][]map[string]any
	must(c.t, json.Unmarshal(m.Result, &res))
	var out []string
	for _, e := range res[field] {
		out = append(out, e[key].(string))
	}
	return out
}

func prefixed(prefix string, names []string, suffix string) []string {
	out := []string{}
	for _, n := range names {
		out = append(out, prefix+n+suffix)
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestEngineListsAndCallsAgreeForEveryRole(t *testing.T) {
	roles := mustRoles(t, map[string]string{"intern": "viewer", "sre": "admin"})
	srv, runs := catalogue(t, policy.NewGate(roles, nil))
	for role, allowed := range reach {
		t.Run("role "+strconv.Quote(role), func(t *testing.T) {
			c := connect(t, srv, mcp.Identity{Subject: "u-" + role, Role: role, TokenID: "tok-" + role})
			lists := []struct {
				method, field, key string
				want               []string
			}{
				{"tools/list", "tools", "name", prefixed("tool_", allowed, "")},
				{"resources/list", "resources", "uri", prefixed("doc://", allowed, "")},
				{"resources/templates/list", "resourceTemplates", "uriTemplate", prefixed("row://", allowed, "/{id}")},
				{"prompts/list", "prompts", "name", prefixed("prompt_", allowed, "")},
			}
			for _, l := range lists {
				if got := orEmpty(c.names(l.method, l.field, l.key)); !slices.Equal(got, l.want) {
					t.Errorf("%s shows %v, want %v", l.method, got, l.want)
				}
			}
			for _, min := range minRoles {
				name := entryName(min)
				calls := []struct {
					method, params, ran string
				}{
					{"tools/call", `{"name":"tool_` + name + `","arguments":{}}`, "tool:" + name},
					{"resources/read", `{"uri":"doc://` + name + `"}`, "resource:" + name},
					{"resources/read", `{"uri":"row://` + name + `/7"}`, "template:" + name},
					// Without its required argument: a hidden prompt must
					// say forbidden, not reveal what it takes.
					{"prompts/get", `{"name":"prompt_` + name + `"}`, "prompt:" + name},
				}
				for _, cl := range calls {
					before := runs.count(cl.ran)
					m := c.call(cl.method, cl.params)
					after := runs.count(cl.ran)
					if slices.Contains(allowed, name) {
						if cl.method == "prompts/get" {
							// Admitted, so the argument check speaks next.
							expectCode(t, m, jsonrpc.CodeInvalidParams, cl.method+" "+name)
							continue
						}
						if m.Kind() != jsonrpc.KindResult || after != before+1 {
							t.Errorf("%s %s: refused (%s) or handler not run (%d→%d)", cl.method, name, m.Error, before, after)
						}
						continue
					}
					e := expectCode(t, m, jsonrpc.CodeForbidden, cl.method+" "+name)
					if after != before {
						t.Errorf("%s %s: refused but the handler ran", cl.method, name)
					}
					required := min
					if required == "" {
						required = "viewer"
					}
					if e != nil && !strings.Contains(e.Message, strconv.Quote(required)) {
						t.Errorf("%s %s: message %q does not name role %q", cl.method, name, e.Message, required)
					}
				}
			}
		})
	}
}

func expectCode(t testing.TB, m *jsonrpc.Message, code int64, what string) *jsonrpc.Error {
	t.Helper()
	if m.Kind() != jsonrpc.KindError {
		t.Errorf("%s: result %s, want error %d", what, m.Result, code)
		return nil
	}
	e, err := m.ErrorObject()
	must(t, err)
	if e.Code != code {
		t.Errorf("%s: error %s, want code %d", what, m.Error, code)
	}
	return e
}

func TestEngineRateLimitsWithTheGate(t *testing.T) {
	c0 := newClock()
	limiter := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 0.1, Burst: 2}}, c0.Now)
	srv, runs := catalogue(t, policy.NewGate(mustRoles(t, nil), limiter))
	c := connect(t, srv, mcp.Identity{Subject: "v", Role: "viewer", TokenID: "t"})

	// Role denials first: they spend nothing.
	for range 5 {
		expectCode(t, c.call("tools/call", `{"name":"tool_admin"}`), jsonrpc.CodeForbidden, "tools/call tool_admin")
	}
	for _, call := range [][2]string{
		{"tools/call", `{"name":"tool_viewer"}`},
		{"resources/read", `{"uri":"doc://viewer"}`},
	} {
		if m := c.call(call[0], call[1]); m.Kind() != jsonrpc.KindResult {
			t.Fatalf("%s within the burst refused: %s", call[0], m.Error)
		}
	}
	before := runs.count("prompt:viewer")
	m := c.call("prompts/get", `{"name":"prompt_viewer","arguments":{"topic":"x"}}`)
	e := expectCode(t, m, jsonrpc.CodeRateLimited, "prompts/get over the burst")
	if runs.count("prompt:viewer") != before {
		t.Fatal("a rate-limited call reached its handler")
	}
	var data struct {
		Kind              string          `json:"kind"`
		RetryAfterSeconds json.RawMessage `json:"retryAfterSeconds"`
	}
	must(t, json.Unmarshal(e.Data, &data))
	if data.Kind != "rate_limited" || string(data.RetryAfterSeconds) != "10" {
		t.Fatalf("data %s, want kind rate_limited and retryAfterSeconds 10", e.Data)
	}
	// Lists are never gated by rate.
	if got := c.names("tools/list", "tools", "name"); len(got) != 2 {
		t.Fatalf("tools/list under a spent budget: %v", got)
	}
}
