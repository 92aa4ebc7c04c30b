// Package toolsearch is the search mode of a catalogue too big for any
// context: two tools a client lists instead of the catalogue (package mcp,
// the search view).
//
// The first finds the caller's visible tools that match a query, ranked
// by BM25 over their names and descriptions, with no model and no
// download. It returns them with their schemas. The second calls a tool
// by name with arguments, exactly as a tools/call for it would be served:
// the same gate, the same audit, which names the inner tool.
package toolsearch

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// The search mode's tools, and their owner (mcp.Entry.Owner).
const (
	FindName = "mcpgate_find_tools"
	CallName = "mcpgate_call_tool"
	Owner    = "mcpgate"
)

// Default and largest number of tools a search returns.
const (
	DefaultLimit = 5
	MaxLimit     = 20
)

// Tools are the search mode's two tools over s's catalogue, to register
// on s.
func Tools(s *mcp.Server) []*mcp.Tool {
	return []*mcp.Tool{
		{
			Name:   FindName,
			Search: true,
			Description: "Find the tools that can do something. Describe the task in a few words; " +
				"the answer lists the best matching tools with their input schemas. Then call one with " + CallName + ".",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1,"description":"what the tool should do"},` +
				`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"how many tools at most (default 5)"}},"required":["query"]}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true,"openWorldHint":false}`),
			Owner:       Owner,
			Handler: func(ctx context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
				query, _ := jsonrpc.LookupString(args, "query")
				limit := DefaultLimit
				if raw, _ := jsonrpc.Lookup(args, "limit"); raw != nil {
					_ = json.Unmarshal(raw, &limit)
				}
				found := Search(s.SearchableTools(ctx), query, limit)
				b := []byte(`{"tools":[`)
				for i, e := range found {
					if i > 0 {
						b = append(b, ',')
					}
					b = append(b, e.Definition...)
				}
				b = append(b, "]}"...)
				return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(b))}, StructuredContent: json.RawMessage(b)})
			},
		},
		{
			Name:      CallName,
			Search:    true,
			Delegates: true, // the gate admits the call it makes, rate and all
			Description: "Call a tool that " + FindName + " found, by its name, with its arguments. " +
				"It answers as the tool does.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1,"description":"the tool's name"},` +
				`"arguments":{"type":"object","description":"the tool's arguments, as its input schema says"}},"required":["name"]}`),
			Owner: Owner,
			Handler: func(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
				name, _ := jsonrpc.LookupString(args, "name")
				inner, _ := jsonrpc.Lookup(args, "arguments")
				if name == FindName || name == CallName {
					return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+CallName+" calls the catalogue's tools, not the search mode's", nil)
				}
				return r.CallTool(ctx, name, inner)
			},
		},
	}
}

// Search ranks entries for query by BM25 (k1 1.2, b 0.75) over their
// names (counted twice: a name says most), titles and descriptions, and
// returns the best limit of those that match at all, best first (ties in
// list order). Only the query's terms are counted: one pass over the
// entries, no index kept between searches (what a caller may see changes
// with the caller).
func Search(entries []mcp.SearchEntry, query string, limit int) []mcp.SearchEntry {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	qi := map[string]int{}
	for _, t := range terms(query) {
		if _, ok := qi[t]; !ok {
			qi[t] = len(qi)
		}
	}
	if len(qi) == 0 || len(entries) == 0 {
		return nil
	}
	nq := len(qi)
	tf := make([]float64, len(entries)*nq) // entry i's count of query term j at i*nq+j
	lengths := make([]float64, len(entries))
	df := make([]float64, nq)
	var buf []byte
	total := 0.0
	for i, e := range entries {
		row := tf[i*nq : (i+1)*nq]
		count := func(weight float64) func([]byte) {
			return func(t []byte) {
				lengths[i] += weight
				if j, ok := qi[string(t)]; ok {
					row[j] += weight
				}
			}
		}
		buf = eachTerm(e.Name, buf, count(2))
		buf = eachTerm(e.Title, buf, count(1))
		buf = eachTerm(e.Description, buf, count(1))
		total += lengths[i]
		for j, f := range row {
			if f > 0 {
				df[j]++
			}
		}
	}
	const k1, b = 1.2, 0.75
	avg, n := total/float64(len(entries)), float64(len(entries))
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	for i := range entries {
		score := 0.0
		for j, f := range tf[i*nq : (i+1)*nq] {
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-df[j]+0.5)/(df[j]+0.5))
			score += idf * f * (k1 + 1) / (f + k1*(1-b+b*lengths[i]/avg))
		}
		if score > 0 {
			hits = append(hits, hit{i, score})
		}
	}
	sort.SliceStable(hits, func(x, y int) bool { return hits[x].score > hits[y].score })
	out := make([]mcp.SearchEntry, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, entries[h.i])
	}
	return out
}

// terms are s's words, as eachTerm cuts them.
func terms(s string) []string {
	var out []string
	eachTerm(s, nil, func(t []byte) { out = append(out, string(t)) })
	return out
}

// eachTerm calls fn with each of s's words, lower-cased in buf, which it
// returns, grown, for the next call. Words are split at every character
// that is not a letter or a digit, and at lower-to-upper case changes
// (getForecast). A trailing plural s is dropped, and words of one character
// are left out.
func eachTerm(s string, buf []byte, fn func([]byte)) []byte {
	w := buf[:0]
	runes := 0
	flush := func() {
		if runes > 1 {
			if len(w) > 3 && w[len(w)-1] == 's' && w[len(w)-2] != 's' {
				w = w[:len(w)-1]
			}
			fn(w)
		}
		w, runes = w[:0], 0
	}
	var prev rune
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			w = utf8.AppendRune(w, unicode.ToLower(r))
			runes++
		default:
			flush()
		}
		prev = r
	}
	flush()
	return w
}
