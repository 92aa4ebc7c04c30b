package backends_test

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/backends"
)

// An entry's compact-view description: the first rule that matches it,
// else the derived one; never one as long as the entry's own, and a
// configured one that is not used says so.
func TestShortFor(t *testing.T) {
	s := backends.Spec{Shorts: []backends.ShortRule{
		{Kind: "prompt", Name: "search*", Description: "A prompt."},
		{Name: "search*", Description: "Search."},
		{Name: "search_all", Description: "Never reached."},
		{Name: "tiny", Description: "Longer than tiny."},
	}, DeriveShort: "first_sentence"}
	const long = "Searches everything. It takes a while."
	for _, tc := range []struct {
		kind, name, full, title string
		derive                  string
		want                    string
		refused                 bool
	}{
		{"tool", "search_all", long, "", "", "Search.", false},
		{"prompt", "search_all", long, "", "", "A prompt.", false},
		{"tool", "tiny", "Tiny.", "", "", "", true},
		{"tool", "other", long, "", "", "Searches everything.", false},
		{"tool", "other", "One line\nand another", "", "", "One line", false},
		{"tool", "other", "v1.2 is the version. Then more.", "", "", "v1.2 is the version.", false},
		{"tool", "other", "No sentence end", "", "", "", false},
		{"tool", "other", long, "Everything", "title", "Everything", false},
		{"tool", "other", long, "", "title", "", false},
		{"tool", "other", long, "", "none", "", false},
	} {
		spec := s
		if tc.derive != "" {
			spec.DeriveShort = tc.derive
			if tc.derive == "none" {
				spec.DeriveShort = ""
			}
		}
		got, refused := spec.ShortFor(tc.kind, tc.name, tc.full, tc.title)
		if got != tc.want || refused != tc.refused {
			t.Errorf("ShortFor(%s %s, %q, %q) with %q = %q %v, want %q %v", tc.kind, tc.name, tc.full, tc.title, spec.DeriveShort, got, refused, tc.want, tc.refused)
		}
	}
}
