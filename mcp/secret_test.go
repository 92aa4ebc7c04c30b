package mcp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// The token a caller presented never shows: not in fmt's verbs, not in a
// log line (as a value or inside the identity), not in JSON.
func TestAPresentedTokenNeverShows(t *testing.T) {
	id := mcp.Identity{Subject: "alice", Role: "viewer", Presented: mcp.Secret("eyJ.the-callers-jwt")}
	var shown []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		shown = append(shown, fmt.Sprintf(verb, id), fmt.Sprintf(verb, id.Presented))
	}
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	log.Info("call", "identity", id, "token", id.Presented)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("call", "identity", id, "token", id.Presented)
	js, _ := json.Marshal(id)
	tok, _ := json.Marshal(id.Presented)
	for _, s := range append(shown, logged.String(), string(js), string(tok)) {
		if strings.Contains(s, "the-callers-jwt") {
			t.Errorf("the token shows in %q", s)
		}
	}
	if id.Presented.Reveal() != "eyJ.the-callers-jwt" {
		t.Error("Reveal does not give the value")
	}
}
