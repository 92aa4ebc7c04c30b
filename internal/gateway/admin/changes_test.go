package admin

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The diff pairs a changed line with its replacement, keeps common lines
// side by side, and puts a line only one side has beside a blank.
func TestSideBySidePairsChangesAndKeepsCommonLines(t *testing.T) {
	got := sideBySide([]string{"{", "a", "b", "c", "}"}, []string{"{", "a", "B", "c", "d", "}"})
	want := []diffLine{{"{", "{", false}, {"a", "a", false}, {"b", "B", true}, {"c", "c", false}, {"", "d", true}, {"}", "}", false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sideBySide = %+v\nwant %+v", got, want)
	}
}

// Definitions are shown with sorted keys, < as it reads, and invisible
// characters written out.
func TestPrettyShowsWhatADefinitionSays(t *testing.T) {
	got := pretty(json.RawMessage(`{"name":"r","description":"x \u003cb\u003e\u200b","a":1.50}`))
	want := []string{"{", `  "a": 1.50,`, `  "description": "x <b>⟨U+200B⟩",`, `  "name": "r"`, "}"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pretty = %q\nwant %q", got, want)
	}
}
