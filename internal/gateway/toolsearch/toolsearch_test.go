package toolsearch

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

func TestTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"get_weather_forecast":   {"get", "weather", "forecast"},
		"getWeatherForecast":     {"get", "weather", "forecast"},
		"Lists the open issues.": {"list", "the", "open", "issue"},
		"a b c":                  nil,
		"HTTP2 proxies, class":   {"http2", "proxie", "class"},
	} {
		if got := terms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("terms(%q) = %q, want %q", in, got, want)
		}
	}
}

var catalogue = []mcp.SearchEntry{
	{Name: "gh__create_issue", Description: "Open a new issue in a repository."},
	{Name: "gh__list_issues", Description: "List the issues of a repository, open or closed."},
	{Name: "weather__get_forecast", Description: "The weather forecast for a city, for the next days."},
	{Name: "weather__get_alerts", Description: "Weather alerts in force for a region."},
	{Name: "fs__read_file", Description: "Read a file's text from the workspace."},
}

func names(es []mcp.SearchEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

// The best match comes first, what does not match at all is left out,
// and limit bounds the answer.
func TestSearchRanksByBM25(t *testing.T) {
	for _, tc := range []struct {
		query string
		limit int
		want  []string
	}{
		{"weather forecast for Paris", 5, []string{"weather__get_forecast", "weather__get_alerts"}},
		{"open an issue", 1, []string{"gh__create_issue"}},
		{"list issues", 5, []string{"gh__list_issues", "gh__create_issue"}},
		{"read a file", 5, []string{"fs__read_file"}},
		{"kubernetes", 5, nil},
		{"", 5, nil},
	} {
		if got := names(Search(catalogue, tc.query, tc.limit)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Search(%q, %d) = %q, want %q", tc.query, tc.limit, got, tc.want)
		}
	}
	many := make([]mcp.SearchEntry, 50)
	for i := range many {
		many[i] = mcp.SearchEntry{Name: fmt.Sprintf("tool_%d", i), Description: "does the thing"}
	}
	if got := Search(many, "thing", 100); len(got) != MaxLimit {
		t.Errorf("a limit of 100 returned %d, want at most %d", len(got), MaxLimit)
	}
}

// BenchmarkSearch500 is one search over 500 tools, the index built with it.
func BenchmarkSearch500(b *testing.B) {
	es := make([]mcp.SearchEntry, 500)
	for i := range es {
		es[i] = mcp.SearchEntry{Name: fmt.Sprintf("verb%d_item_%03d", i%12, i),
			Description: fmt.Sprintf("Runs verb%d on the items of collection %d. It reads the collection's index first, then applies the operation to every matching item, and returns a summary.", i%12, i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		Search(es, "apply verb3 to the items of collection 42", 5)
	}
}
