package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
)

func TestPrintableEscapesWhatATerminalWouldObey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"alice", "alice"},
		{"héllo wörld ✓", "héllo wörld ✓"},
		{"mallory\n2026-12-01T00:00:00Z  t-admin", `mallory\n2026-12-01T00:00:00Z  t-admin`},
		{"red\x1b[31mtext", `red\x1b[31mtext`},
		{"tab\there", `tab\there`},
		{"cr\rover", `cr\rover`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`a\nb`, `a\\nb`}, // a literal backslash cannot pass for an escape
	}
	for _, tt := range tests {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A forged subject cannot print a row of its own in `audit tail`, nor an
// escape reach the terminal; --json prints one JSON object a record.
func TestAuditTailCannotBeForged(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mcpgate.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	forged := "mallory\n2026-12-01T00:00:00Z  t-admin  tok_x  admin  tool  fx__delete_all  -  ok  0  1ms\x1b[2K"
	recs := []store.AuditRecord{
		{Time: time.Now().UTC(), Subject: forged, TokenID: "jwt", Role: "viewer", Kind: "tool", Name: "fx__read\x1b]0;owned\x07", Outcome: "ok"},
		{Time: time.Now().UTC(), Subject: "bob", TokenID: "tok_b", Role: "editor", Kind: "tool", Name: "fx__write", Backend: "fx", Outcome: "forbidden", Code: -32001, Duration: 3 * time.Millisecond},
	}
	if err := st.AppendAudit(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		root := rootCommand()
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(append([]string{"audit", "tail", "--store", db}, args...))
		if err := root.ExecuteContext(ctx); err != nil {
			t.Fatalf("audit tail %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}

	table := run()
	if lines := strings.Count(table, "\n"); lines != 3 {
		t.Errorf("audit tail printed %d lines for 2 records:\n%s", lines, table)
	}
	if strings.ContainsAny(table, "\x1b\x07\r") {
		t.Errorf("audit tail passes control characters to the terminal: %q", table)
	}
	if !strings.Contains(table, `mallory\n2026-12-01`) || !strings.Contains(table, `fx__read\x1b]0;owned\a`) {
		t.Errorf("audit tail does not show the hostile values escaped:\n%s", table)
	}

	lines := strings.Split(strings.TrimSuffix(run("--json"), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit tail --json printed %d lines for 2 records: %q", len(lines), lines)
	}
	var got []auditJSON
	for _, l := range lines {
		var r auditJSON
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit tail --json line %q: %v", l, err)
		}
		got = append(got, r)
	}
	if got[0].Subject != forged || got[1].Name != "fx__write" || got[1].Backend != "fx" || got[1].Code != -32001 ||
		got[1].Outcome != "forbidden" || got[1].DurationMs != 3 {
		t.Errorf("audit tail --json: %+v", got)
	}
}
