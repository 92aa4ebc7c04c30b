// sqlite_test.go runs the audit log end to end on the real store: calls
// through the engine, a clean shutdown, and a restart that finds every
// record — the "survives a clean restart" rule of issue 3.

package audit_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/internal/observe/audit"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
)

func TestRecordsSurviveACleanRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mcpgate.db")

	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// A long FlushEvery and a large batch: only Close writes them.
	l := audit.NewLog(db, audit.Options{BatchSize: 1000, FlushEvery: waitLimit})
	ss := session(t, auditedServer(t, l, nil), alice)
	var want []string
	for i := range 30 {
		tool := []string{"ok", "admin_only", "fails"}[i%3]
		call(t, ss, "tools/call", `{"name":"`+tool+`","arguments":{"password":"`+secret+`"}}`)
		call(t, ss, "ping", "")
		want = append(want, tool)
	}
	closeLog(t, l)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.TailAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Name)
		if r.Subject != "alice" || r.TokenID != "tok_alice" || r.Role != "editor" || r.Kind != "tool" {
			t.Fatalf("record %+v", r)
		}
		wantOutcome := map[string]string{"ok": "ok", "admin_only": "forbidden", "fails": "tool_error"}[r.Name]
		if r.Outcome != wantOutcome {
			t.Fatalf("record %+v, want outcome %s", r, wantOutcome)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after restart %v\nwant %v", got, want)
	}
}
