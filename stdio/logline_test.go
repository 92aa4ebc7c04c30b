package stdio

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// A child's JSON log line reaches a JSON log as attributes of its own, in
// its order, not as an escaped string; any other line stays a string.
func TestAChildsJSONLineIsLoggedAsAttributes(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&out, nil)).With("backend", "fx")
	log.LogAttrs(t.Context(), slog.LevelInfo, "stderr",
		LineAttr([]byte(`{"time":"2026-12-01T00:00:00Z","level":"INFO","msg":"ready","n":12345678901234567890,"nested":{"a":[1,true]}}`)))
	log.LogAttrs(t.Context(), slog.LevelInfo, "stderr", LineAttr([]byte(`plain text {"not":"json"`)))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var first struct {
		Backend string
		Child   map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Backend != "fx" {
		t.Fatalf("first line %s: %v", lines[0], err)
	}
	if string(first.Child["msg"]) != `"ready"` || string(first.Child["n"]) != "12345678901234567890" ||
		string(first.Child["nested"]) != `{"a":[1,true]}` {
		t.Errorf("the child's members are not the line's attributes: %s", lines[0])
	}
	if strings.Count(lines[0], `"backend"`) != 1 || strings.Contains(lines[0], `\"msg\"`) {
		t.Errorf("a key twice, or the child's line escaped: %s", lines[0])
	}
	var second map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil || second["line"] != `plain text {"not":"json"` {
		t.Errorf("a line that is not JSON: %s", lines[1])
	}
}
