// resources_test.go pins resources/read (spec §5: unknown is -32002 with
// data.uri), RFC 6570 level-1 templates (spec §4: one percent-decoded
// segment per variable), and subscriptions.

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

type readSeen struct {
	URI  string            `json:"uri"`
	Vars map[string]string `json:"vars"`
}

// seeingReader answers resources/read with the URI and variables it got.
func seeingReader(tag string) mcp.ResourceHandler {
	return func(_ context.Context, _ *mcp.Request, uri string, vars map[string]string) (json.RawMessage, error) {
		b, _ := json.Marshal(struct {
			Tag string `json:"tag"`
			readSeen
		}{tag, readSeen{uri, vars}})
		return b, nil
	}
}

func readParams(uri string) string {
	return `{"uri":` + string(jsonrpc.AppendString(nil, uri)) + `}`
}

func TestTemplateMatching(t *testing.T) {
	const idData = "test://template/{id}/data"
	const schemaTable = "db://{schema}/{table}"
	tests := []struct {
		name, template, uri string
		want                map[string]string // nil: no match
	}{
		{"one placeholder", idData, "test://template/123/data", map[string]string{"id": "123"}},
		{"values are percent-decoded", idData, "test://template/a%20b/data", map[string]string{"id": "a b"}},
		{"an encoded slash stays inside the segment", idData, "test://template/a%2Fb/data", map[string]string{"id": "a/b"}},
		{"several placeholders", schemaTable, "db://public/users", map[string]string{"schema": "public", "table": "users"}},
		{"a placeholder before a suffix", "file:///{name}.txt", "file:///notes.txt", map[string]string{"name": "notes"}},
		{"a literal-only template matches itself", "x://fixed/path", "x://fixed/path", map[string]string{}},
		{"no match across '/'", idData, "test://template/1/2/data", nil},
		{"no match across '/' at the end", schemaTable, "db://public/users/extra", nil},
		{"no match for an empty segment", idData, "test://template//data", nil},
		{"no match for an empty last segment", schemaTable, "db://public/", nil},
		{"no match with trailing text", idData, "test://template/123/data/", nil},
		{"no match with a bad escape", idData, "test://template/12%zz/data", nil},
		{"no match for another scheme", idData, "other://template/123/data", nil},
		{"no match for a prefix", idData, "test://template/123", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			mustAdd(t, srv.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: tt.template, Name: "t", Read: seeingReader("template")}))
			ss, _ := readySession(t, srv)
			m := call(t, ss, "resources/read", readParams(tt.uri))
			if tt.want == nil {
				e := rpcError(t, m, jsonrpc.CodeResourceNotFound)
				if got := decode[map[string]string](t, e.Data)["uri"]; got != tt.uri {
					t.Fatalf("data.uri %q", got)
				}
				return
			}
			seen := decode[readSeen](t, result(t, m))
			if seen.URI != tt.uri {
				t.Fatalf("handler got uri %q", seen.URI)
			}
			if len(seen.Vars) != len(tt.want) || (len(tt.want) > 0 && !maps.Equal(seen.Vars, tt.want)) {
				t.Fatalf("vars %v, want %v", seen.Vars, tt.want)
			}
		})
	}
}

func TestInvalidTemplatesAreRejected(t *testing.T) {
	for _, tmpl := range []string{
		"x://{id",        // unclosed brace
		"x://{+x}",       // level 2 operator
		"x://{#x}",       // level 2 operator
		"x://{a}{b}",     // adjacent variables
		"x://{}",         // empty name
		"x://id}",        // stray closing brace
		"x://{a,b}",      // level 3 list
		"x://{a:3}",      // level 4 prefix
		"x://{a*}",       // level 4 explode
		"x://{a{b}}",     // nested
		"x://{/a}",       // level 3 operator
		"x://{?a}",       // level 3 operator
		"x://{a}/{b}{c}", // adjacent later on
	} {
		t.Run(tmpl, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			if err := srv.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: tmpl, Read: noRead}); err == nil {
				t.Fatal("accepted")
			}
			ss, _ := readySession(t, srv)
			if p := listPage(t, ss, catalogues[2], ""); len(p.keys) != 0 {
				t.Fatalf("listed %v", p.keys)
			}
		})
	}
}

func TestResourceLookupOrder(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddResourceTemplates(
		&mcp.ResourceTemplate{URITemplate: "x://{a}/data", Read: seeingReader("first")},
		&mcp.ResourceTemplate{URITemplate: "x://{b}/{c}", Read: seeingReader("second")},
	))
	mustAdd(t, srv.AddResources(&mcp.Resource{URI: "x://fixed/data", Read: seeingReader("concrete")}))
	ss, _ := readySession(t, srv)
	tag := func(uri string) string {
		return decode[struct{ Tag string }](t, result(t, call(t, ss, "resources/read", readParams(uri)))).Tag
	}
	if got := tag("x://fixed/data"); got != "concrete" {
		t.Errorf("a concrete resource loses to a template: %s", got)
	}
	if got := tag("x://1/data"); got != "first" {
		t.Errorf("templates are not tried in registration order: %s", got)
	}
	if got := tag("x://1/other"); got != "second" {
		t.Errorf("got %s", got)
	}
}

func TestResourcesRead(t *testing.T) {
	contents := json.RawMessage(`{"contents":[{"uri":"x://doc","mimeType":"text/plain","text":"hi","size":123456789012345678901234567890}]}`)
	tests := []struct {
		name     string
		params   string
		read     mcp.ResourceHandler
		code     int64
		wantData map[string]string
	}{
		{"success returns the handler's bytes", readParams("x://doc"), func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
			return contents, nil
		}, 0, nil},
		{"an unknown URI is -32002 with data.uri", readParams("x://missing"), nil, jsonrpc.CodeResourceNotFound, map[string]string{"uri": "x://missing"}},
		{"a handler error wrapping ErrNotFound is -32002", readParams("x://doc"), func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
			return nil, fmt.Errorf("row 7: %w", mcp.ErrNotFound)
		}, jsonrpc.CodeResourceNotFound, map[string]string{"uri": "x://doc"}},
		{"a handler's *jsonrpc.Error is answered as it is", readParams("x://doc"), func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
			return nil, jsonrpc.NewError(-32050, "busy", nil)
		}, -32050, nil},
		{"another handler error is -32603", readParams("x://doc"), func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
			return nil, fmt.Errorf("dial postgres://admin:s3cret@db: refused")
		}, jsonrpc.CodeInternalError, nil},
		{"a missing uri is -32602", `{}`, nil, jsonrpc.CodeInvalidParams, nil},
		{"a uri that is not a string is -32602", `{"uri":5}`, nil, jsonrpc.CodeInvalidParams, nil},
		{"params that are not an object are -32602", `["x://doc"]`, nil, jsonrpc.CodeInvalidParams, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp.Options{})
			read := tt.read
			if read == nil {
				read = noRead
			}
			mustAdd(t, srv.AddResources(&mcp.Resource{URI: "x://doc", Read: read}))
			ss, _ := readySession(t, srv)
			m := call(t, ss, "resources/read", tt.params)
			if tt.code == 0 {
				if got := result(t, m); string(got) != string(contents) {
					t.Fatalf("result %s", got)
				}
				return
			}
			e := rpcError(t, m, tt.code)
			if strings.Contains(string(m.Error), "s3cret") {
				t.Fatalf("the error leaks the handler's detail: %s", m.Error)
			}
			if tt.wantData != nil && !maps.Equal(decode[map[string]string](t, e.Data), tt.wantData) {
				t.Fatalf("data %s, want %v", e.Data, tt.wantData)
			}
		})
	}
}

func TestSubscriptions(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddResources(&mcp.Resource{URI: "x://a", Read: noRead}, &mcp.Resource{URI: "x://b", Read: noRead}))
	subscriber, subOut := readySession(t, srv)
	other, otherOut := readySession(t, srv)

	for _, method := range []string{"resources/subscribe", "resources/unsubscribe"} {
		t.Run(method+" answers exactly {}", func(t *testing.T) {
			ss, _ := readySession(t, srv)
			if got := result(t, call(t, ss, method, readParams("x://a"))); string(got) != `{}` {
				t.Fatalf("result %s", got)
			}
		})
		t.Run(method+" without uri is -32602", func(t *testing.T) {
			ss, _ := readySession(t, srv)
			rpcError(t, call(t, ss, method, `{}`), jsonrpc.CodeInvalidParams)
		})
	}

	result(t, call(t, subscriber, "resources/subscribe", readParams("x://a")))
	result(t, call(t, other, "resources/subscribe", readParams("x://b")))

	srv.ResourceUpdated("x://a")
	msgs := subOut.messages(t)
	if len(msgs) != 1 || msgs[0].Method != "notifications/resources/updated" {
		t.Fatalf("subscriber got %v", subOut.methods(t))
	}
	if p := decode[map[string]string](t, msgs[0].Params); p["uri"] != "x://a" {
		t.Fatalf("params %s", msgs[0].Params)
	}
	if got := otherOut.methods(t); len(got) != 0 {
		t.Fatalf("a session subscribed to another URI got %v", got)
	}

	result(t, call(t, subscriber, "resources/unsubscribe", readParams("x://a")))
	srv.ResourceUpdated("x://a")
	if got := subOut.methods(t); len(got) != 1 {
		t.Fatalf("an unsubscribed session got %v", got)
	}
}

// templateParts splits a valid level-1 template into literals and
// variable names ("{" marks a name).
func templateParts(tmpl string) []string {
	var parts []string
	for tmpl != "" {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			return append(parts, tmpl)
		}
		if open > 0 {
			parts = append(parts, tmpl[:open])
		}
		end := strings.IndexByte(tmpl, '}')
		parts = append(parts, tmpl[open:end])
		tmpl = tmpl[end+1:]
	}
	return parts
}

// FuzzTemplateMatch checks the matcher never panics, and that the
// variables of a match, percent-encoded back into a template whose
// variables are each a whole segment, give a URI matching to the same
// variables. (Inside a segment — "{a}-{b}" — a value may contain the
// separator, and no matcher can undo that expansion.)
func FuzzTemplateMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"test://template/{id}/data", "test://template/123/data"},
		{"test://template/{id}/data", "test://template/a%20b/data"},
		{"test://template/{id}/data", "test://template/a%2Fb/data"},
		{"db://{schema}/{table}", "db://public/users"},
		{"db://{schema}/{table}", "db://p%C3%A9/%E2%9C%93"},
		{"file:///{name}.txt", "file:///a.b.txt"},
		{"x://{a}-{b}", "x://p%2Dq-r"},
		{"{a}/{b}", "1/2"},
		{"x://{a}/{a}", "x://1/2"},
		{"x://{id", "x://1"},
		{"x://%/{a}", "x://%/%ff"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, tmpl, uri string) {
		vars, ok, err := mcp.MatchURITemplate(tmpl, uri)
		if err != nil || !ok {
			return
		}
		parts := templateParts(tmpl)
		segmentWise := true
		names := map[string]bool{}
		for i, p := range parts {
			if !strings.HasPrefix(p, "{") {
				continue
			}
			names[p[1:]] = true
			if i+1 < len(parts) && !strings.HasPrefix(parts[i+1], "/") {
				segmentWise = false
			}
		}
		if !slices.Equal(slices.Sorted(maps.Keys(vars)), slices.Sorted(maps.Keys(names))) {
			t.Fatalf("%q on %q: vars %v for names %v", tmpl, uri, vars, names)
		}
		for name, v := range vars {
			if v == "" {
				t.Fatalf("%q on %q: empty value for %s", tmpl, uri, name)
			}
		}
		if !segmentWise {
			return
		}
		var b strings.Builder
		for _, p := range parts {
			if strings.HasPrefix(p, "{") {
				b.WriteString(url.PathEscape(vars[p[1:]]))
			} else {
				b.WriteString(p)
			}
		}
		again, ok, _ := mcp.MatchURITemplate(tmpl, b.String())
		if !ok {
			t.Fatalf("%q on %q gave %v; the expansion %q does not match", tmpl, uri, vars, b.String())
		}
		if !maps.Equal(again, vars) {
			t.Fatalf("%q on %q gave %v; the expansion %q gives %v", tmpl, uri, vars, b.String(), again)
		}
	})
}
