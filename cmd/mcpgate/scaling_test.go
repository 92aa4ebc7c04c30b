package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// sharedOps is what one replica asked of the shared engines while
// something happened: Redis commands by name, and PostgreSQL write
// transactions (transaction ids taken).
type sharedOps struct {
	redis map[string]int64
	pgTx  int64
}

func (o sharedOps) redisTotal() int64 {
	var n int64
	for _, v := range o.redis {
		n += v
	}
	return n
}

// redisTrips is the round trips: the scripts run (every path of ours
// speaks to Redis by script) and the commands sent outside one. Commands
// a script runs inside Redis are in redisTotal, not here.
func (o sharedOps) redisTrips() int64 {
	n := o.redis["evalsha"] + o.redis["eval"]
	for k, v := range o.redis {
		if !scriptInner[k] && k != "evalsha" && k != "eval" {
			n += v
		}
	}
	return n
}

// scriptInner are the commands our scripts run inside Redis (the rate
// buckets', the sessions').
var scriptInner = map[string]bool{"time": true, "hmget": true, "hset": true, "pexpire": true, "zadd": true, "zcard": true, "zremrangebyscore": true}

// perUnit is o divided by n, for the log and the doc.
func (o sharedOps) perUnit(n int) string {
	var names []string
	for k, v := range o.redis {
		if v > 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(o.redis[k])/float64(n)))
	}
	return fmt.Sprintf("Redis round trips %.3f, commands run %.2f (%s), PostgreSQL write transactions %.2f",
		float64(o.redisTrips())/float64(n), float64(o.redisTotal())/float64(n), strings.Join(parts, ", "), float64(o.pgTx)/float64(n))
}

// opsCounter reads the counters of the engines a replica shares.
type opsCounter struct {
	redis peers.RedisServer
	pg    *pgx.Conn
	self  sharedOps // what one reading costs (calibrate)
}

func (c opsCounter) read(t *testing.T) sharedOps {
	t.Helper()
	ctx := testkit.Context(t)
	calls, err := c.redis.CommandCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o := sharedOps{redis: calls}
	if err := c.pg.QueryRow(ctx, `SELECT txid_current()`).Scan(&o.pgTx); err != nil {
		t.Fatal(err)
	}
	return o
}

// minus is o's counts less b's.
func (o sharedOps) minus(b sharedOps) sharedOps {
	d := sharedOps{redis: map[string]int64{}, pgTx: o.pgTx - b.pgTx}
	for k, v := range o.redis {
		d.redis[k] = v - b.redis[k]
	}
	return d
}

// calibrate measures what a reading itself costs (its connection, INFO,
// txid_current) by two readings in a row.
func (c *opsCounter) calibrate(t *testing.T) {
	a := c.read(t)
	c.self = c.read(t).minus(a)
}

// since is what happened since before, less what its last reading cost.
func (c *opsCounter) since(t *testing.T, before sharedOps) sharedOps {
	return c.read(t).minus(before).minus(c.self)
}

// TestCountTheSharedEnginesOperationsPerCallAndPerSession counts what one
// replica (PostgreSQL store, Redis, a stdio backend, the defaults: group
// commit audit, rate limits on) asks of Redis and PostgreSQL for a session
// and for a relayed call, one caller at a time and eight at once. The
// figures are docs/scaling.md's; the test fails when a path starts to ask
// more of Redis per call than the doc says.
func TestCountTheSharedEnginesOperationsPerCallAndPerSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis and mcpgate serve")
	}
	pg, rs := peers.StartPostgres(t), peers.StartRedis(t)
	keyFile := filepath.Join(t.TempDir(), "session.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url, token := serveStdioFixture(t, fmt.Sprintf("store: %q\nredis:\n  url: %q\nsessions:\n  key_file: %q\n"+
		"rate_limits:\n  default: {rate: 100, burst: 1000}\n", pg.DSN(), rs.URL(), keyFile))

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Autovacuum's analyze of the audit table would take a transaction id
	// of its own in the middle of a count.
	if _, err := conn.Exec(ctx, `ALTER TABLE audit SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	c := &opsCounter{redis: rs, pg: conn}
	c.calibrate(t)

	// Warm: the first session and call pay for lookups cached after.
	warm := cliSession(t, url, token)
	for n := range 5 {
		if !simpleTextAnswered(url, token, warm, n+1) {
			t.Fatal("a warm-up call was not answered")
		}
	}

	const sessions, calls, callers = 40, 200, 8
	before := c.read(t)
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = cliSession(t, url, token)
	}
	perSession := c.since(t, before)

	before = c.read(t)
	for n := range calls {
		if !simpleTextAnswered(url, token, ids[0], 100+n) {
			t.Fatal("a call was not answered")
		}
	}
	perCall := c.since(t, before)

	before = c.read(t)
	var wg sync.WaitGroup
	for w := range callers {
		wg.Go(func() {
			for n := range calls / callers {
				if !simpleTextAnswered(url, token, ids[w], 1000+n) {
					t.Error("a concurrent call was not answered")
					return
				}
			}
		})
	}
	wg.Wait()
	perCallBusy := c.since(t, before)

	t.Logf("per session (initialize + initialized): %s", perSession.perUnit(sessions))
	t.Logf("per call, one caller: %s", perCall.perUnit(calls))
	t.Logf("per call, %d callers: %s", callers, perCallBusy.perUnit(calls))

	// What docs/scaling.md states, as bounds a change must not cross.
	if got := float64(perSession.redisTrips()) / sessions; got > 1+1.0/8 {
		t.Errorf("a session costs %.2f Redis round trips, the doc says 1 and a share of a lease", got)
	}
	if perSession.pgTx != 0 {
		t.Errorf("opening %d sessions wrote %d PostgreSQL transactions, the doc says none", sessions, perSession.pgTx)
	}
	for _, x := range []struct {
		what string
		ops  sharedOps
	}{{"one caller", perCall}, {"8 callers", perCallBusy}} {
		// Leases of 16 tokens growing to 62 (a sixteenth of the burst of
		// 1,000) per script, and nothing else in Redis.
		if got := float64(x.ops.redisTrips()) / calls; got > 1.0/16 {
			t.Errorf("a call (%s) costs %.3f Redis round trips, the doc says about 1/50 (leases growing from 16 to 62)", x.what, got)
		}
		// One audit group commit per call at most.
		if got := float64(x.ops.pgTx) / calls; got > 1 {
			t.Errorf("a call (%s) costs %.2f PostgreSQL write transactions, the doc says at most 1", x.what, got)
		}
	}
}
