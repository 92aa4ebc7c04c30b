package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/postgres"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// TestAnAnsweredCallIsAnAuditedCallEvenAfterSIGKILL kills mcpgate serve
// (a stdio backend, the default audit mode) with SIGKILL while eight
// callers keep it busy, then counts the records in the store: every call
// a caller saw answered has its record. A record may be written for a
// call whose answer the kill cut off; never the other way round. On
// SQLite with its journal (the default there) and without, and on a real
// PostgreSQL without a journal (the default there) and with one.
func TestAnAnsweredCallIsAnAuditedCallEvenAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcpgate serve under load")
	}
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "mcpgate.db")
		answeredAreAudited(t, fmt.Sprintf("store: %q\n", db), func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, db) },
			func() {
				// The journal is on by default: the killed process left it.
				left, _ := filepath.Glob(db + "-audit.*")
				size := int64(0)
				for _, p := range left {
					if fi, err := os.Stat(p); err == nil {
						size += fi.Size()
					}
				}
				if size == 0 {
					t.Errorf("the killed process left no journal (segments %v)", left)
				}
			},
			// Before any restart, `mcpgate audit tail` writes what the
			// journal holds first, and shows it.
			tailShowsAnswered(t, "--store", db))
	})
	t.Run("sqlite-without-journal", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "mcpgate.db")
		answeredAreAudited(t, fmt.Sprintf("store: %q\naudit: {journal: false}\n", db), func(ctx context.Context) (store.Store, error) {
			return sqlite.Open(ctx, db)
		}, nil, nil)
		if left, _ := filepath.Glob(db + "-audit.*"); len(left) > 0 {
			t.Fatalf("journal segments with the journal off: %v", left)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		pg := peers.StartPostgres(t)
		answeredAreAudited(t, fmt.Sprintf("store: %q\n", pg.DSN()), func(ctx context.Context) (store.Store, error) {
			return postgres.Open(ctx, pg.DSN(), postgres.Options{})
		}, nil, nil)
	})
	t.Run("postgres-with-journal", func(t *testing.T) {
		pg := peers.StartPostgres(t)
		dir := filepath.Join(t.TempDir(), "journal")
		head := fmt.Sprintf("store: %q\naudit: {journal_dir: %q}\n", pg.DSN(), dir)
		cfg := filepath.Join(t.TempDir(), "tail.yaml")
		if err := os.WriteFile(cfg, []byte(head), 0o600); err != nil {
			t.Fatal(err)
		}
		answeredAreAudited(t, head, func(ctx context.Context) (store.Store, error) {
			return postgres.Open(ctx, pg.DSN(), postgres.Options{})
		}, func() {
			if left, _ := filepath.Glob(filepath.Join(dir, "mcpgate-audit.*")); len(left) == 0 {
				t.Errorf("the killed process left no journal in %s", dir)
			}
		},
			// `mcpgate audit tail` on the replica's configuration writes
			// what the journal holds first, as on SQLite.
			tailShowsAnswered(t, "--config", cfg))
	})
}

// tailShowsAnswered is a beforeRestart that runs `mcpgate audit tail`
// with the store flags given, and wants every answered call in what it
// shows.
func tailShowsAnswered(t *testing.T, flags ...string) func(answered int64) {
	return func(answered int64) {
		out, stderr, err := cliRun(t, testkit.Mcpgate(t), append(append([]string{"audit", "tail"}, flags...), "-n", "100000", "--json")...)
		if err != nil {
			t.Fatalf("audit tail: %v\n%s", err, stderr)
		}
		if n := int64(strings.Count(out, `"name":"test_simple_text","backend":"fx","outcome":"ok"`)); n < answered {
			t.Errorf("audit tail after the kill, before a restart: %d records of %d answered calls", n, answered)
		}
	}
}

// answeredAreAudited is the test on one store. The killed process's
// records are counted after a restart: with a journal, the restart is
// what writes the ones the store did not get. afterKill, if set, looks at
// what the killed process left; beforeRestart, if set, reads the store
// before the restart, told how many calls were answered.
func answeredAreAudited(t *testing.T, head string, open func(context.Context) (store.Store, error), afterKill func(), beforeRestart func(answered int64)) {
	srv, url, token := serveStdioFixture(t, head)

	const callers, before = 8, 400 // calls answered before the kill
	var answered atomic.Int64
	var wg sync.WaitGroup
	killed := make(chan struct{})
	for range callers {
		session := cliSession(t, url, token)
		wg.Go(func() {
			for n := 1; ; n++ {
				if simpleTextAnswered(url, token, session, n) {
					if answered.Add(1) == before {
						// Said before it is done, so that no caller cut
						// off by the kill takes it for a failure.
						close(killed)
						_ = srv.cmd.Process.Signal(syscall.SIGKILL)
					}
					continue
				}
				select {
				case <-killed:
					return // refused or cut off: the process is gone
				default:
					t.Errorf("call %d unanswered before the kill", n)
					return
				}
			}
		})
	}
	wg.Wait()
	<-srv.done
	if afterKill != nil {
		afterKill()
	}
	if beforeRestart != nil {
		beforeRestart(answered.Load())
	}
	restarted, _, _ := serveStdioFixture(t, head)
	restarted.stop(t)

	st, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ok := 0
	for q := (store.AuditQuery{Entry: "test_simple_text", Outcome: "ok"}); ; {
		page, err := st.QueryAudit(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		ok += len(page.Records)
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	t.Logf("killed with SIGKILL after %d answered calls: %d audit records", answered.Load(), ok)
	if int64(ok) < answered.Load() {
		t.Fatalf("%d calls were answered but only %d audited: %d answered calls have no record", answered.Load(), ok, answered.Load()-int64(ok))
	}
}

// serveStdioFixture starts mcpgate serve on the configuration head (the
// store and what else the test needs) with the fixture as its stdio
// backend, unprefixed, and a viewer's token made before it starts.
func serveStdioFixture(t *testing.T, head string) (srv *cliProc, url, token string) {
	t.Helper()
	bin := testkit.Mcpgate(t)
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	writeText(t, cfg, fmt.Sprintf("listen: 127.0.0.1:0\n%sbackends:\n  - name: fx\n    kind: stdio\n    command: [%q, fixture, --stdio]\n    prefix: \"-\"\n", head, bin))
	out, stderr, err := cliRun(t, bin, "token", "create", "--config", cfg, "--name", "callers", "--role", "viewer")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr)
	}
	srv = cliStart(t, bin, "serve", "--config", cfg)
	url = cliMCPURLRE.FindString(strings.Join(srv.waitLine(t, "the MCP URL", cliMCPURLRE.MatchString), "\n"))
	return srv, url, strings.TrimSpace(out)
}

// simpleTextAnswered makes tools/call id of test_simple_text in session and
// reports whether its result came.
func simpleTextAnswered(url, token, session string, id int) bool {
	r, err := rpc(context.Background(), url, token, session, callBody(id, "test_simple_text"))
	return err == nil && r.status == http.StatusOK && r.msg["result"] != nil
}
