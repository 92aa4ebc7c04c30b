// catalogue.go measures what a catalogue costs a client's context: the
// bytes of tools/list in the full view and in the compact one (package mcp,
// compact.go). The compact view has schemas without prose, and descriptions
// cut to their first sentence as backends[].derive_short: first_sentence
// makes them. It measures the fixture, the reference server
// (@modelcontextprotocol/server-everything, when the peers are installed)
// and a generated catalogue of 500 tools.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/gateway/toolsearch"
	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/stdio"
)

// catalogueSize is one catalogue's tools/list, in bytes, in each view.
type catalogueSize struct {
	Catalogue    string  `json:"catalogue"`
	Tools        int     `json:"tools"`
	FullBytes    int     `json:"full_bytes"`
	CompactBytes int     `json:"compact_bytes"`
	Ratio        float64 `json:"compact_over_full"`
	// SearchBytes is tools/list in the search view (no tool pinned), and
	// SearchMicros the median time of one search over the catalogue
	// (mcpgate_find_tools, as a viewer sees it), for the generated one.
	SearchBytes  int     `json:"search_bytes,omitempty"`
	SearchMicros float64 `json:"search_us,omitempty"`
}

// catalogues measures each catalogue it can reach.
func catalogues(ctx context.Context, withPeers bool) ([]catalogueSize, error) {
	var out []catalogueSize
	fix, err := listDefinitions(ctx, fixture.New(fixture.Options{}))
	if err != nil {
		return nil, fmt.Errorf("the fixture: %w", err)
	}
	out = append(out, measureCatalogue("the fixture", fix))
	if p, ok := peers.Find(); ok && withPeers {
		ref, err := referenceDefinitions(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("the reference server: %w", err)
		}
		out = append(out, measureCatalogue("@modelcontextprotocol/server-everything", ref))
		if ref, ok := peers.FindRefServer(); ok {
			conf, err := conformanceRefDefinitions(ctx, ref)
			if err != nil {
				return nil, fmt.Errorf("the conformance suite's reference server: %w", err)
			}
			out = append(out, measureCatalogue(RefServerCatalogue, conf))
		}
	}
	gen := measureCatalogue("500 generated tools", generatedDefinitions(500))
	gen.SearchBytes, gen.SearchMicros = measureSearch(generatedDefinitions(500))
	out = append(out, gen)
	return out, nil
}

// measureCatalogue registers the definitions as a relay would (each as
// it is, the short description derived from the first sentence) and
// lists them in both views.
func measureCatalogue(name string, defs []json.RawMessage) catalogueSize {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "bench", Version: "1"}, PageSize: 1 << 20})
	derive := backends.Spec{DeriveShort: "first_sentence"}
	tools := make([]*mcp.Tool, 0, len(defs))
	for _, d := range defs {
		n, _ := jsonrpc.LookupString(d, "name")
		full, _ := jsonrpc.LookupString(d, "description")
		short, _ := derive.ShortFor("tool", n, full, "")
		tools = append(tools, &mcp.Tool{Name: n, Definition: d, Short: short, SkipValidation: true,
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) { return nil, nil }})
	}
	if err := s.AddTools(tools...); err != nil {
		panic(err) // definitions a server listed, or generated ones
	}
	full, compact := listBytes(s, mcp.ViewFull), listBytes(s, mcp.ViewCompact)
	return catalogueSize{Catalogue: name, Tools: len(defs), FullBytes: full, CompactBytes: compact, Ratio: float64(compact) / float64(full)}
}

// measureSearch is the size of tools/list in the search view of defs,
// and the median time of 201 searches over them.
func measureSearch(defs []json.RawMessage) (int, float64) {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "bench", Version: "1"}, PageSize: 1 << 20})
	tools := toolsearch.Tools(s)
	for _, d := range defs {
		n, _ := jsonrpc.LookupString(d, "name")
		tools = append(tools, &mcp.Tool{Name: n, Definition: d, SkipValidation: true,
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) { return nil, nil }})
	}
	if err := s.AddTools(tools...); err != nil {
		panic(err)
	}
	size := listBytes(s, mcp.ViewSearch)
	ctx := mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "bench", Role: "viewer"})
	each := make([]time.Duration, 201)
	for i := range each {
		start := time.Now()
		toolsearch.Search(s.SearchableTools(ctx), "apply archive to the items of collection 42", toolsearch.DefaultLimit)
		each[i] = time.Since(start)
	}
	slices.Sort(each)
	return size, float64(each[len(each)/2].Nanoseconds()) / 1e3
}

// listBytes is the size of tools/list's result in view.
func listBytes(s *mcp.Server, view mcp.View) int {
	res, _ := sessionList(mcp.WithIdentity(context.Background(), mcp.Identity{View: view}), s)
	return len(res)
}

// listDefinitions is every tool definition s lists, raw.
func listDefinitions(ctx context.Context, s *mcp.Server) ([]json.RawMessage, error) {
	res, err := sessionList(ctx, s)
	if err != nil {
		return nil, err
	}
	return toolsOf(res)
}

// sessionList is tools/list's result in a fresh session of s.
func sessionList(ctx context.Context, s *mcp.Server) (json.RawMessage, error) {
	ss := s.NewSession(mcp.SessionOptions{ID: "bench"})
	defer ss.Close()
	for _, m := range [][]byte{
		jsonrpc.AppendRequest(nil, jsonrpc.ID("1"), "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)),
		jsonrpc.AppendRequest(nil, nil, "notifications/initialized", nil),
	} {
		msg, err := jsonrpc.Parse(m)
		if err != nil {
			return nil, err
		}
		ss.Handle(ctx, msg, nil)
	}
	list, _ := jsonrpc.Parse(jsonrpc.AppendRequest(nil, jsonrpc.ID("2"), "tools/list", nil))
	m, err := jsonrpc.Parse(ss.Handle(ctx, list, nil))
	if err != nil {
		return nil, err
	}
	if m.Result == nil {
		return nil, fmt.Errorf("tools/list answered %s", m.Error)
	}
	return m.Result, nil
}

func toolsOf(result json.RawMessage) ([]json.RawMessage, error) {
	var page struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(result, &page); err != nil {
		return nil, err
	}
	return page.Tools, nil
}

// referenceDefinitions are the reference server's tools, as it lists
// them over stdio.
func referenceDefinitions(ctx context.Context, p peers.Peers) ([]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := stdio.Command(ctx, p.Node22, []string{p.ServerEverything, "stdio"}, stdio.CommandOptions{})
	if err != nil {
		return nil, err
	}
	return listClientTools(ctx, mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "bench", Version: "1"}}))
}

// listClientTools initializes c and lists every tool of its server, raw;
// it closes c.
func listClientTools(ctx context.Context, c *mcp.Client) ([]json.RawMessage, error) {
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return nil, err
	}
	var all []json.RawMessage
	params := json.RawMessage(`{}`)
	for range 100 {
		res, err := c.Call(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		tools, err := toolsOf(res)
		if err != nil {
			return nil, err
		}
		all = append(all, tools...)
		next, _ := jsonrpc.LookupString(res, "nextCursor")
		if next == "" {
			return all, nil
		}
		params = append(jsonrpc.AppendString([]byte(`{"cursor":`), next), '}')
	}
	return all, nil
}

// RefServerCatalogue names the conformance suite's reference server's row.
const RefServerCatalogue = "the conformance suite's reference server"

// conformanceRefDefinitions are the tools of the conformance suite's
// reference server, run on a free loopback port for the while.
func conformanceRefDefinitions(ctx context.Context, ref peers.RefServer) ([]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	url, stop, err := ref.Start(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	conn, err := mcphttp.DialStreamable(ctx, url, mcphttp.ClientOptions{})
	if err != nil {
		return nil, err
	}
	return listClientTools(ctx, mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "bench", Version: "1"}}))
}

// generatedDefinitions are n tools shaped like a real server's: a
// paragraph of description, four described arguments, one of them an
// enum, two required.
func generatedDefinitions(n int) []json.RawMessage {
	words := strings.Fields("search fetch create update delete list export import sync archive render summarise")
	out := make([]json.RawMessage, n)
	for i := range n {
		verb := words[i%len(words)]
		d := map[string]any{
			"name": fmt.Sprintf("%s_item_%03d", verb, i),
			"description": fmt.Sprintf("Runs %s on the items of collection %d. It reads the collection's index first, then applies the "+
				"operation to every matching item, and returns a summary of what changed together with the ids it touched. Use it "+
				"when the user asks to %s several items at once; for a single item prefer the item tools.", verb, i, verb),
			"inputSchema": map[string]any{"type": "object", "required": []string{"collection", "query"}, "properties": map[string]any{
				"collection": map[string]any{"type": "string", "description": "The collection's id, as the list tools return it.", "minLength": 1},
				"query":      map[string]any{"type": "string", "description": "Which items: a query in the collection's query language.", "examples": []string{"status:open"}},
				"limit":      map[string]any{"type": "integer", "description": "At most this many items are touched.", "minimum": 1, "maximum": 1000},
				"mode":       map[string]any{"type": "string", "enum": []string{"dry-run", "apply"}, "description": "dry-run reports what would change; apply changes it."},
			}},
		}
		out[i], _ = json.Marshal(d)
	}
	return out
}
