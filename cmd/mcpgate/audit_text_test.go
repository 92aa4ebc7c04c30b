package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/postgres"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
)

// A viewer asks for a tool whose name holds a NUL and bytes that are not
// UTF-8. PostgreSQL refuses such text, and the audit writer used to retry
// its record for ever: every later call, whoever made it, waited behind
// it unanswered. Now the odd call is answered as any unknown tool is, the
// next call too, and the store keeps the name with U+FFFD in their place.
func TestACallNamedWithBytesNoStoreHoldsIsAnsweredAndAudited(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcpgate serve on SQLite and on PostgreSQL")
	}
	for _, tt := range []struct {
		name string
		head func(t *testing.T) (string, func(context.Context) (store.Store, error))
	}{
		{"sqlite", func(t *testing.T) (string, func(context.Context) (store.Store, error)) {
			db := filepath.Join(t.TempDir(), "mcpgate.db")
			return fmt.Sprintf("store: %q\n", db), func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, db) }
		}},
		{"postgres", func(t *testing.T) (string, func(context.Context) (store.Store, error)) {
			dsn := peers.StartPostgres(t).DSN()
			return fmt.Sprintf("store: %q\n", dsn), func(ctx context.Context) (store.Store, error) {
				return postgres.Open(ctx, dsn, postgres.Options{})
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			head, open := tt.head(t)
			srv, url, token := serveStdioFixture(t, head)
			session := cliSession(t, url, token)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			odd := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\\u0000y\xffz\",\"arguments\":{}}}"
			r, err := rpc(ctx, url, token, session, odd)
			if err != nil || r.status != http.StatusOK || r.msg["error"] == nil {
				t.Fatalf("the call named with a NUL and a stray byte: %v, status %d, %v; want an error answer", err, r.status, r.msg)
			}
			for id := 2; id <= 3; id++ {
				if r, err := rpc(ctx, url, token, session, callBody(id, "test_simple_text")); err != nil || r.msg["result"] == nil {
					t.Fatalf("call %d after it: %v, status %d, %v; want its result", id, err, r.status, r.msg)
				}
			}
			srv.stop(t) // every record written
			st, err := open(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			page, err := st.QueryAudit(context.Background(), store.AuditQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, rec := range page.Records {
				names = append(names, rec.Name)
			}
			want := []string{"test_simple_text", "test_simple_text", "x\uFFFDy\uFFFDz"} // newest first
			if fmt.Sprint(names) != fmt.Sprint(want) {
				t.Fatalf("audited names %q, want %q", names, want)
			}
		})
	}
}
