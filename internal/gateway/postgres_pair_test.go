// postgres_pair_test.go runs the Postgres and Daemon pairs end to end
// (docs/wire.md 3.8, 3.9):
// a real PostgreSQL; the gateway with a process backend whose program
// (this test binary, role pgRoleProgram) has no database address but the
// one its proxy tells it (MCPGATE_POSTGRES_ADDR), and reaches the
// database with a real driver (pgx) through the pair — the proxy's
// loopback port, the wire, the gateway's connection to the database.
//
// Every identifier here starts with "pg" so that it cannot collide with
// the other tests of this package.

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/wire"
)

// pgRoleProgram is the child role of the program: an MCP server on
// 127.0.0.1:$PORT/mcp with tools that use the database.
const pgRoleProgram = "pg-program"

// pgServeProgram is the program: exec runs one statement, copy writes
// rows of size bytes with COPY and reads their total length back.
func pgServeProgram() error {
	dsn := "postgres://mcpgate@" + os.Getenv("MCPGATE_POSTGRES_ADDR") + "/postgres?sslmode=disable"
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "pg-program", Version: "1"}})
	answer := func(text string, err error) (json.RawMessage, error) {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return mcp.Result(mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.TextContent(pe.Code + " " + pe.Message)}})
		}
		if err != nil {
			return nil, err
		}
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}})
	}
	err := s.AddTools(
		&mcp.Tool{Name: "exec", SkipValidation: true, Handler: func(ctx context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			var a struct{ SQL string }
			_ = json.Unmarshal(args, &a)
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				return nil, err
			}
			defer c.Close(ctx)
			tag, err := c.Exec(ctx, a.SQL)
			return answer(tag.String(), err)
		}},
		&mcp.Tool{Name: "copy", SkipValidation: true, Handler: func(ctx context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			var a struct{ Rows, Size int }
			_ = json.Unmarshal(args, &a)
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				return nil, err
			}
			defer c.Close(ctx)
			body := strings.Repeat("y", a.Size)
			if _, err := c.Exec(ctx, `CREATE TABLE IF NOT EXISTS big (id int, body text)`); err != nil {
				return answer("", err)
			}
			n, err := c.CopyFrom(ctx, pgx.Identifier{"big"}, []string{"id", "body"}, pgx.CopyFromSlice(a.Rows, func(i int) ([]any, error) {
				return []any{i, body}, nil
			}))
			if err != nil {
				return answer("", err)
			}
			var total int64
			err = c.QueryRow(ctx, `SELECT sum(length(body)) FROM big`).Scan(&total)
			return answer(fmt.Sprintf("copied %d rows, %d bytes read back", n, total), err)
		}},
	)
	if err != nil {
		return err
	}
	// daemon sends one frame on the Daemon pair and says what came back.
	err = s.AddTools(&mcp.Tool{Name: "daemon", SkipValidation: true, Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		ws, _, err := websocket.Dial(ctx, os.Getenv("MCPGATE_DAEMON_URL"), nil)
		if err != nil {
			return nil, err
		}
		defer ws.CloseNow()
		f := wire.AppendFrame(nil, wire.Frame{Type: wire.TypeRequest, Scope: 1, Payload: []byte("hello daemon")})
		if err := ws.Write(ctx, websocket.MessageBinary, f); err != nil {
			return nil, err
		}
		_, back, err := ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		fr, err := wire.ParseFrame(back)
		if err != nil {
			return nil, err
		}
		return answer(fmt.Sprintf("the daemon answered %q on scope %d", fr.Payload, fr.Scope), nil)
	}})
	if err != nil {
		return err
	}
	h := mcphttp.NewHandler(s, mcphttp.Options{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		return err
	}
	return http.Serve(ln, mux)
}

// A program behind a process backend reaches a real PostgreSQL through
// the pair: it writes and reads back 8 MB with COPY, and a bad statement's
// error is the server's own.
func TestAProgramReachesItsDatabaseAndDaemonThroughThePairs(t *testing.T) {
	testkit.LeakCheck(t)
	pg := peers.StartPostgres(t)
	bin := testkit.Mcpgate(t)
	t.Setenv("BK_CHILD_ROLE", pgRoleProgram)
	daemon := pgEchoDaemon(t)
	// The database from the gateway's environment, as a URL whose
	// credentials the gateway drops: the program's driver authenticates.
	t.Setenv("PG_PAIR_URL", "postgres://mcpgate:not-needed@"+pg.Addr+"/postgres")
	base, _ := bkGateway(t, fmt.Sprintf("backends:\n  - {name: db, kind: process, command: [%q], env_from: {%s: BK_CHILD_ROLE}, "+
		"proxy_command: [%q, proxy], postgres_from: PG_PAIR_URL, daemon: %q, prefix: \"-\"}\n", os.Args[0], bkChildEnv, bin, daemon))
	bkWaitReady(t, base, http.StatusOK)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := mcphttp.DialStreamable(ctx, base+"/mcp", mcphttp.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "pg-test", Version: "0"}})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	call := func(name, args string) string {
		t.Helper()
		res, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"`+name+`","arguments":`+args+`}`))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(res)
	}
	if got := call("copy", `{"rows":2048,"size":4096}`); !strings.Contains(got, "copied 2048 rows, 8388608 bytes read back") {
		t.Errorf("copy: %s", got)
	}
	if got := call("exec", `{"sql":"SELEC 1"}`); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `42601 syntax error at or near \"SELEC\"`) {
		t.Errorf("bad SQL: %s, want the server's 42601", got)
	}
	// The Daemon pair through the same backend: the program's frame
	// reaches the daemon endpoint and its answer comes back.
	if got := call("daemon", `{}`); !strings.Contains(got, `the daemon answered \"echo: hello daemon\" on scope 1`) {
		t.Errorf("daemon: %s", got)
	}
}

// pgEchoDaemon is a daemon endpoint on the gateway's side: it answers
// each frame with the same frame, its payload prefixed "echo: ".
func pgEchoDaemon(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			_, msg, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			f, err := wire.ParseFrame(msg)
			if err != nil {
				return
			}
			f.Payload = append([]byte("echo: "), f.Payload...)
			if err := ws.Write(r.Context(), websocket.MessageBinary, wire.AppendFrame(nil, f)); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/daemon"
}
