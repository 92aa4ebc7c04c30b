// registry_test.go pins the spec's §4 for all four catalogues: lists in
// registration order every time, replacement in place, removal, opaque
// cursor pagination, and list_changed notifications to initialized
// sessions only.

package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// catalogue describes one registry the way a test drives it.
type catalogue struct {
	name    string
	list    string // list method
	field   string // array member of the list result
	key     string // member naming an entry
	changed string // list_changed notification
	keyOf   func(word string) string
	add     func(s *mcp.Server, minRole string, keys ...string) error
	remove  func(s *mcp.Server, keys ...string)
}

func noRead(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
	return json.RawMessage(`{"contents":[]}`), nil
}

func noPrompt(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
	return json.RawMessage(`{"messages":[]}`), nil
}

var catalogues = []catalogue{
	{
		name: "tools", list: "tools/list", field: "tools", key: "name", changed: "notifications/tools/list_changed",
		keyOf: func(w string) string { return w },
		add: func(s *mcp.Server, role string, keys ...string) error {
			var ts []*mcp.Tool
			for _, k := range keys {
				tool := textTool(k, k)
				tool.MinRole = role
				ts = append(ts, tool)
			}
			return s.AddTools(ts...)
		},
		remove: func(s *mcp.Server, keys ...string) { s.RemoveTools(keys...) },
	},
	{
		name: "resources", list: "resources/list", field: "resources", key: "uri", changed: "notifications/resources/list_changed",
		keyOf: func(w string) string { return "res://" + w },
		add: func(s *mcp.Server, role string, keys ...string) error {
			var rs []*mcp.Resource
			for _, k := range keys {
				rs = append(rs, &mcp.Resource{URI: k, Name: k, MinRole: role, Read: noRead})
			}
			return s.AddResources(rs...)
		},
		remove: func(s *mcp.Server, keys ...string) { s.RemoveResources(keys...) },
	},
	{
		name: "resource templates", list: "resources/templates/list", field: "resourceTemplates", key: "uriTemplate",
		changed: "notifications/resources/list_changed",
		keyOf:   func(w string) string { return "tmpl://" + w + "/{id}" },
		add: func(s *mcp.Server, role string, keys ...string) error {
			var ts []*mcp.ResourceTemplate
			for _, k := range keys {
				ts = append(ts, &mcp.ResourceTemplate{URITemplate: k, Name: k, MinRole: role, Read: noRead})
			}
			return s.AddResourceTemplates(ts...)
		},
		remove: func(s *mcp.Server, keys ...string) { s.RemoveResourceTemplates(keys...) },
	},
	{
		name: "prompts", list: "prompts/list", field: "prompts", key: "name", changed: "notifications/prompts/list_changed",
		keyOf: func(w string) string { return w },
		add: func(s *mcp.Server, role string, keys ...string) error {
			var ps []*mcp.Prompt
			for _, k := range keys {
				ps = append(ps, &mcp.Prompt{Name: k, MinRole: role, Get: noPrompt})
			}
			return s.AddPrompts(ps...)
		},
		remove: func(s *mcp.Server, keys ...string) { s.RemovePrompts(keys...) },
	},
}

// randomKeys returns n distinct keys in an order unrelated to their
// sorting, so that a list built from a map or sorted would differ.
func randomKeys(c catalogue, n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		w := fmt.Sprintf("%c%x_%d", 'a'+rng.IntN(26), rng.Uint32(), rng.IntN(1000))
		if !seen[w] {
			seen[w] = true
			out = append(out, c.keyOf(w))
		}
	}
	return out
}

type page struct {
	keys       []string
	nextCursor *string
}

// listPage sends one list request and returns the keys it lists.
func listPage(t testing.TB, ss *mcp.Session, c catalogue, params string) page {
	t.Helper()
	raw := result(t, call(t, ss, c.list, params))
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	entries := decode[[]map[string]any](t, res[c.field])
	var p page
	for _, e := range entries {
		k, _ := e[c.key].(string)
		p.keys = append(p.keys, k)
	}
	if nc, ok := res["nextCursor"]; ok {
		s := decode[string](t, nc)
		p.nextCursor = &s
	}
	return p
}

// listAll walks every page and returns the keys and the number of pages.
func listAll(t testing.TB, ss *mcp.Session, c catalogue) ([]string, int) {
	t.Helper()
	var keys []string
	params := ""
	for pages := 1; ; pages++ {
		p := listPage(t, ss, c, params)
		keys = append(keys, p.keys...)
		if p.nextCursor == nil {
			return keys, pages
		}
		if pages > 1000 {
			t.Fatal("pagination does not end")
		}
		params = `{"cursor":` + string(jsonrpc.AppendString(nil, *p.nextCursor)) + `}`
	}
}

func TestListsKeepRegistrationOrder(t *testing.T) {
	for _, c := range catalogues {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			keys := randomKeys(c, 50)
			// Half at once, the rest one by one: order is registration
			// order however the entries arrive.
			mustAdd(t, c.add(srv, "", keys[:25]...))
			for _, k := range keys[25:] {
				mustAdd(t, c.add(srv, "", k))
			}
			ss, _ := readySession(t, srv)
			for i := range 5 {
				got, pages := listAll(t, ss, c)
				if pages != 1 {
					t.Fatalf("%d pages for 50 entries with the default page size", pages)
				}
				if !slices.Equal(got, keys) {
					t.Fatalf("call %d listed\n%v\nwant registration order\n%v", i, got, keys)
				}
			}
		})
	}
}

func TestReplacementKeepsPosition(t *testing.T) {
	for _, c := range catalogues {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			keys := []string{c.keyOf("one"), c.keyOf("two"), c.keyOf("three")}
			mustAdd(t, c.add(srv, "", keys...))
			mustAdd(t, c.add(srv, "admin", keys[1])) // replace the middle one
			ss, _ := readySession(t, srv)
			got, _ := listAll(t, ss, c)
			if !slices.Equal(got, keys) {
				t.Fatalf("listed %v, want %v", got, keys)
			}
		})
	}
	t.Run("the replacement is what is served", func(t *testing.T) {
		srv := newServer(t, mcp.Options{})
		mustAdd(t, srv.AddTools(textTool("a", "first"), textTool("b", "b")))
		mustAdd(t, srv.AddTools(textTool("a", "second")))
		ss, _ := readySession(t, srv)
		res := decode[toolResult](t, result(t, call(t, ss, "tools/call", `{"name":"a"}`)))
		if got := res.text(t); got != "second" {
			t.Fatalf("served %q after replacement", got)
		}
	})
}

func TestRemoval(t *testing.T) {
	for _, c := range catalogues {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			keys := randomKeys(c, 6)
			mustAdd(t, c.add(srv, "", keys...))
			c.remove(srv, keys[0], keys[3], c.keyOf("never-registered"))
			ss, _ := readySession(t, srv)
			want := []string{keys[1], keys[2], keys[4], keys[5]}
			got, _ := listAll(t, ss, c)
			if !slices.Equal(got, want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
			// Re-adding a removed entry appends it.
			mustAdd(t, c.add(srv, "", keys[0]))
			got, _ = listAll(t, ss, c)
			if want := append(want, keys[0]); !slices.Equal(got, want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
		})
	}
	t.Run("a removed tool is unknown", func(t *testing.T) {
		srv := newServer(t, mcp.Options{})
		mustAdd(t, srv.AddTools(textTool("gone", "x")))
		srv.RemoveTools("gone")
		ss, _ := readySession(t, srv)
		rpcError(t, call(t, ss, "tools/call", `{"name":"gone"}`), jsonrpc.CodeInvalidParams)
	})
}

func TestPaginationWalksEveryEntryOnce(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 10} {
		for _, c := range catalogues {
			t.Run(c.name+"/"+strconv.Itoa(n)+" entries", func(t *testing.T) {
				srv := newServer(t, mcp.Options{PageSize: 3})
				keys := randomKeys(c, n)
				if n > 0 {
					mustAdd(t, c.add(srv, "", keys...))
				}
				ss, _ := readySession(t, srv)
				var got []string
				params := ""
				pages := 0
				for {
					p := listPage(t, ss, c, params)
					pages++
					if len(p.keys) > 3 {
						t.Fatalf("page of %d entries with PageSize 3", len(p.keys))
					}
					got = append(got, p.keys...)
					if p.nextCursor == nil {
						break
					}
					if len(p.keys) != 3 {
						t.Fatalf("a page of %d entries before the last", len(p.keys))
					}
					cur := *p.nextCursor
					if _, err := strconv.Atoi(cur); err == nil || cur == "" {
						t.Fatalf("cursor %q is not opaque", cur)
					}
					params = `{"cursor":"` + cur + `"}`
				}
				if !slices.Equal(got, keys) {
					t.Fatalf("walked %v, want %v", got, keys)
				}
				if want := max(1, (n+2)/3); pages != want {
					t.Fatalf("%d pages, want %d", pages, want)
				}
			})
		}
	}
}

func base64URL(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestGarbageCursorIsInvalidParams(t *testing.T) {
	b64 := func(s string) string {
		return string(jsonrpc.AppendString(nil, base64URL(s)))
	}
	tests := []struct {
		name, params string
	}{
		{"not base64", `{"cursor":"!!garbage!!"}`},
		{"empty string", `{"cursor":""}`},
		{"a number", `{"cursor":3}`},
		{"an object", `{"cursor":{}}`},
		{"unknown version", `{"cursor":` + b64("v2:1") + `}`},
		{"negative position", `{"cursor":` + b64("v1:-1") + `}`},
		{"not a position", `{"cursor":` + b64("v1:abc") + `}`},
		{"beyond the end", `{"cursor":` + b64("v1:999") + `}`},
		{"params not an object", `["cursor"]`},
	}
	for _, c := range catalogues {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				srv := newServer(t, mcp.Options{PageSize: 3})
				mustAdd(t, c.add(srv, "", randomKeys(c, 5)...))
				ss, _ := readySession(t, srv)
				rpcError(t, call(t, ss, c.list, tt.params), jsonrpc.CodeInvalidParams)
			})
		}
	}
}

func TestListChangedReachesInitializedSessions(t *testing.T) {
	for _, c := range catalogues {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			_, readyOut := readySession(t, srv)
			freshOut := newRecorder()
			newSession(t, srv, mcp.SessionOptions{ID: "fresh", Out: freshOut})

			k := c.keyOf("late")
			mustAdd(t, c.add(srv, "", k))
			if got := readyOut.methods(t); !slices.Equal(got, []string{c.changed}) {
				t.Fatalf("initialized session got %v after add, want [%s]", got, c.changed)
			}
			c.remove(srv, k)
			if got := readyOut.methods(t); !slices.Equal(got, []string{c.changed, c.changed}) {
				t.Fatalf("initialized session got %v after remove", got)
			}
			c.remove(srv, k) // nothing removed, nothing changed
			if got := readyOut.methods(t); len(got) != 2 {
				t.Fatalf("removing nothing notified: %v", got)
			}
			if got := freshOut.methods(t); len(got) != 0 {
				t.Fatalf("uninitialized session got %v", got)
			}
			for _, m := range readyOut.messages(t) {
				if m.Kind() != jsonrpc.KindNotification {
					t.Fatalf("list_changed is a %v, want a notification", m.Kind())
				}
			}
		})
	}
	t.Run("a closed session gets nothing", func(t *testing.T) {
		srv := newServer(t, mcp.Options{})
		ss, out := readySession(t, srv)
		ss.Close()
		mustAdd(t, srv.AddTools(textTool("x", "x")))
		if got := out.methods(t); len(got) != 0 {
			t.Fatalf("closed session got %v", got)
		}
		if srv.Sessions() != 0 {
			t.Fatalf("%d sessions live after Close", srv.Sessions())
		}
	})
}

func TestInvalidEntriesAreRejected(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	handler := textTool("h", "h").Handler
	tests := []struct {
		name string
		err  error
	}{
		{"a tool without a name", srv.AddTools(&mcp.Tool{Handler: handler})},
		{"a tool without a handler", srv.AddTools(&mcp.Tool{Name: "t"})},
		{"a tool whose schema does not compile", srv.AddTools(&mcp.Tool{Name: "t", Handler: handler, InputSchema: json.RawMessage(`{"type":12}`)})},
		{"a resource without a URI", srv.AddResources(&mcp.Resource{Read: noRead})},
		{"a resource without a reader", srv.AddResources(&mcp.Resource{URI: "x://y"})},
		{"a template without a reader", srv.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: "x://{y}"})},
		{"a prompt without a name", srv.AddPrompts(&mcp.Prompt{Get: noPrompt})},
		{"a prompt without a handler", srv.AddPrompts(&mcp.Prompt{Name: "p"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("accepted")
			}
		})
	}
	t.Run("a bad entry in a batch adds nothing", func(t *testing.T) {
		srv := newServer(t, mcp.Options{})
		err := srv.AddTools(textTool("good", "g"), &mcp.Tool{Name: "bad", Handler: handler, InputSchema: json.RawMessage(`{"type":12}`)})
		if err == nil {
			t.Fatal("accepted")
		}
		ss, _ := readySession(t, srv)
		if got, _ := listAll(t, ss, catalogues[0]); len(got) != 0 {
			t.Fatalf("listed %v", got)
		}
	})
}
