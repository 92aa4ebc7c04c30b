package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// The matrix: every gated method × every caller role × every HTTP
// transport and era (the 2026-07-28 sessionless requests included),
// against entries at every minimum role, including one that is
// not configured (refused even for admin). Each cell is allowed or refused
// exactly as configured, the lists show exactly the cells that are
// allowed, and a refused cell never reaches its handler.

// mxMinRoles are the minimum roles the catalogue's entries carry; "root"
// is not a configured role.
var mxMinRoles = []string{"", "viewer", "editor", "admin", "root"}

// mxCallers are the callers' roles; analyst is a custom role mapped onto
// viewer, ops onto editor.
var mxCallers = []string{"viewer", "analyst", "editor", "ops", "admin"}

var mxLevel = map[string]int{"": 1, "viewer": 1, "analyst": 1, "editor": 2, "ops": 2, "admin": 3}

func mxAllowed(caller, min string) bool {
	need, known := mxLevel[min]
	return known && min != "analyst" && min != "ops" && mxLevel[caller] >= need
}

// mxSuffix names an entry after its minimum role.
func mxSuffix(min string) string {
	if min == "" {
		return "any"
	}
	return min
}

// mxCatalogue registers, for each minimum role, a tool, a resource, a
// resource template and a prompt, each counting the calls that reach it.
type mxCatalogue struct{ reached map[string]*atomic.Int64 }

func (c *mxCatalogue) hit(name string) { c.reached[name].Add(1) }

func (c *mxCatalogue) register(s *mcp.Server) {
	c.reached = map[string]*atomic.Int64{}
	for _, min := range mxMinRoles {
		sfx := mxSuffix(min)
		tool, res, tpl, prompt := "tool_"+sfx, "test://res/"+sfx, "test://tpl/"+sfx+"/{id}", "prompt_"+sfx
		for _, n := range []string{tool, res, tpl, prompt} {
			c.reached[n] = new(atomic.Int64)
		}
		err := errors.Join(
			s.AddTools(&mcp.Tool{Name: tool, Description: "min role " + sfx, MinRole: min,
				InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
				Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
					c.hit(tool)
					return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ran " + tool)}})
				}}),
			s.AddResources(&mcp.Resource{URI: res, Name: res, MinRole: min,
				Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
					c.hit(res)
					return mcp.Result(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "r")}})
				}}),
			s.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: tpl, Name: tpl, MinRole: min,
				Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
					c.hit(tpl)
					return mcp.Result(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "t")}})
				}}),
			s.AddPrompts(&mcp.Prompt{Name: prompt, Description: "min role " + sfx, MinRole: min,
				Arguments: []mcp.PromptArgument{{Name: "topic", Required: true}},
				Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
					c.hit(prompt)
					return mcp.Result(mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("p")}}})
				}}),
		)
		if err != nil {
			panic(err)
		}
	}
}

// mxGateway starts a gateway with authentication on and a token per caller
// role; it returns the base URL and the tokens by role.
func mxGateway(t *testing.T, stateless bool, cat *mxCatalogue) (string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Parse([]byte(fmt.Sprintf("listen: 127.0.0.1:0\nroles: {analyst: viewer, ops: editor}\nhttp: {stateless: %v, sessionless: true}\n", stateless)))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st, Catalogue: cat.register})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gw.Handler())
	t.Cleanup(func() {
		ts.Close()
		_ = gw.Close(context.Background())
		_ = st.Close()
	})
	tokens := map[string]string{}
	for _, role := range mxCallers {
		secret, _, err := gw.Tokens().Create(ctx, "matrix "+role, role, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[role] = secret
	}
	return ts.URL, tokens
}

// mxCaller makes one call and returns its result or its JSON-RPC error:
// an mcp.Client of the 2025 era, or mxSessionless.
type mxCaller interface {
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// mxSessionless calls as a 2026-07-28 client does: each request on its
// own POST, its revision and capabilities in _meta, the revision's
// headers.
type mxSessionless struct{ url, token string }

func (c mxSessionless) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	p := "{" + meta + "}"
	if len(params) > 2 {
		p = "{" + meta + "," + string(params[1:])
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + p + `}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcphttp.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(mcphttp.HeaderMethod, method)
	if name, ok := jsonrpc.LookupString(params, "name"); ok {
		req.Header.Set(mcphttp.HeaderName, name)
	} else if uri, ok := jsonrpc.LookupString(params, "uri"); ok {
		req.Header.Set(mcphttp.HeaderName, uri)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The answer is the last event's data.
		i := strings.LastIndex(string(b), "data: ")
		if i < 0 {
			return nil, fmt.Errorf("no event in %s", b)
		}
		b = []byte(strings.TrimSpace(strings.SplitN(string(b[i+6:]), "\n", 2)[0]))
	}
	m, err := jsonrpc.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	if m.Error != nil {
		return nil, jsonrpc.RawError(m.Error)
	}
	return m.Result, nil
}

func mxConnect(t *testing.T, transport, base, token string) mxCaller {
	t.Helper()
	if transport == "sessionless-2026" {
		return mxSessionless{url: base + "/mcp", token: token}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := mcphttp.ClientOptions{Header: http.Header{"Authorization": {"Bearer " + token}}}
	var conn mcp.Conn
	var err error
	if transport == "legacy-sse" {
		conn, err = mcphttp.DialSSE(ctx, base+"/sse", o)
	} else {
		conn, err = mcphttp.DialStreamable(ctx, base+"/mcp", o)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "matrix", Version: "1"}})
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// mxListed returns the names a list method shows, following every cursor.
func mxListed(t *testing.T, c mxCaller, method, field, key string) []string {
	t.Helper()
	var names []string
	cursor := ""
	for {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params = json.RawMessage(`{"cursor":` + string(jsonrpc.AppendString(nil, cursor)) + `}`)
		}
		res, err := c.Call(context.Background(), method, params)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var page struct {
			Items      []map[string]any `json:"-"`
			NextCursor string           `json:"nextCursor"`
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(res, &raw)
		_ = json.Unmarshal(res, &page)
		_ = json.Unmarshal(raw[field], &page.Items)
		for _, it := range page.Items {
			names = append(names, it[key].(string))
		}
		if page.NextCursor == "" {
			return names
		}
		cursor = page.NextCursor
	}
}

// mxCell is one gated call of the matrix.
type mxCell struct {
	method, entry string // entry: the counter the handler bumps
	params        string
}

func mxCells(min string) []mxCell {
	sfx := mxSuffix(min)
	return []mxCell{
		{"tools/call", "tool_" + sfx, `{"name":"tool_` + sfx + `","arguments":{"n":1}}`},
		{"resources/read", "test://res/" + sfx, `{"uri":"test://res/` + sfx + `"}`},
		{"resources/read", "test://tpl/" + sfx + "/{id}", `{"uri":"test://tpl/` + sfx + `/7"}`},
		{"prompts/get", "prompt_" + sfx, `{"name":"prompt_` + sfx + `","arguments":{"topic":"x"}}`},
	}
}

func TestAuthorizationMatrix(t *testing.T) {
	for _, transport := range []string{"streamable", "streamable-stateless", "legacy-sse", "sessionless-2026"} {
		t.Run(transport, func(t *testing.T) {
			cat := &mxCatalogue{}
			base, tokens := mxGateway(t, transport == "streamable-stateless", cat)
			for _, caller := range mxCallers {
				t.Run(caller, func(t *testing.T) {
					c := mxConnect(t, transport, base, tokens[caller])
					mxCheckLists(t, c, caller)
					for _, min := range mxMinRoles {
						for _, cell := range mxCells(min) {
							mxCheckCell(t, c, cat, caller, min, cell)
						}
					}
				})
			}
		})
	}
}

// mxCheckLists: each list shows exactly the entries the caller may use.
func mxCheckLists(t *testing.T, c mxCaller, caller string) {
	t.Helper()
	var tools, resources, templates, prompts []string
	for _, min := range mxMinRoles {
		if mxAllowed(caller, min) {
			sfx := mxSuffix(min)
			tools = append(tools, "tool_"+sfx)
			resources = append(resources, "test://res/"+sfx)
			templates = append(templates, "test://tpl/"+sfx+"/{id}")
			prompts = append(prompts, "prompt_"+sfx)
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
		if got := mxListed(t, c, l.method, l.field, l.key); !slices.Equal(got, l.want) {
			t.Errorf("%s as %s = %v, want %v", l.method, caller, got, l.want)
		}
	}
}

// mxCheckCell: an allowed cell runs its handler once; a refused one is
// -32001 naming the role required and never reaches the handler.
func mxCheckCell(t *testing.T, c mxCaller, cat *mxCatalogue, caller, min string, cell mxCell) {
	t.Helper()
	before := cat.reached[cell.entry].Load()
	res, err := c.Call(context.Background(), cell.method, json.RawMessage(cell.params))
	reached := cat.reached[cell.entry].Load() - before
	if mxAllowed(caller, min) {
		if err != nil || reached != 1 {
			t.Errorf("%s %s as %s: allowed cell got err=%v, handler reached %d times", cell.method, cell.entry, caller, err, reached)
		}
		if strings.Contains(string(res), `"isError":true`) {
			t.Errorf("%s %s as %s: %s", cell.method, cell.entry, caller, res)
		}
		return
	}
	if reached != 0 {
		t.Errorf("LEAK: %s %s reached its handler as %s", cell.method, cell.entry, caller)
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden {
		t.Errorf("%s %s as %s: err = %v, want -32001", cell.method, cell.entry, caller, err)
		return
	}
	var data struct{ Kind, Required string }
	_ = json.Unmarshal(je.Data, &data)
	if data.Kind != "forbidden" || data.Required != min && !(min == "" && data.Required == "viewer") {
		t.Errorf("%s %s as %s: data = %s", cell.method, cell.entry, caller, je.Data)
	}
	if want := fmt.Sprintf("%q", data.Required); !strings.Contains(je.Message, want) {
		t.Errorf("%s %s as %s: message %q does not name the role required", cell.method, cell.entry, caller, je.Message)
	}
}
