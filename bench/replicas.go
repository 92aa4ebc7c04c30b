// replicas.go measures what scale-out costs and gives. One mcpgate serve on
// the shared engines (PostgreSQL store, Redis for rate buckets, token
// events and sealed sessions) is measured against the SQLite row
// (mcpgate-http). Three such replicas behind HAProxy are measured against
// one behind the same HAProxy. All of them relay the same fixture, in the
// same rounds as every other row. Without PostgreSQL, Redis or HAProxy
// installed the rows are reported as not run.
//
// The replicas carry a rate limit no call reaches, a million a second.
// Every call spends from Redis's buckets, as a deployment with limits does,
// so the shared row pays each engine per call. The SQLite row has none, and
// its in-process limiter would cost next to nothing.

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgate/mcpgate/internal/peers"
)

// replicaTargets starts PostgreSQL, Redis, three replicas with HAProxy in
// front of one and of all three, and a fourth gateway on the same engines
// whose audit journal is in a folder of its own (audit.journal_dir). It
// returns the rows in that order, single first; none when a peer is
// missing.
func (e *env) replicaTargets(ctx context.Context) (rows []*target, cleanup func(), err error) {
	var stops []func()
	cleanup = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	pg, stopPG, err := peers.RunPostgres()
	if errors.Is(err, peers.ErrNoPostgres) {
		return nil, cleanup, nil
	}
	if err != nil {
		return nil, cleanup, err
	}
	stops = append(stops, stopPG)
	redis, stopRedis, err := peers.RunRedis()
	if errors.Is(err, peers.ErrNoRedis) {
		return nil, cleanup, nil
	}
	if err != nil {
		return nil, cleanup, err
	}
	stops = append(stops, stopRedis)
	if !peers.HaveHAProxy() {
		return nil, cleanup, nil
	}
	dir := filepath.Join(e.dir, "replicas")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, cleanup, err
	}
	key := filepath.Join(dir, "session.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("3c", 32)+"\n"), 0o600); err != nil {
		return nil, cleanup, err
	}
	var addrs []string
	replicaConfig := func(name, audit string) (cfg, listen, metricsAddr string, err error) {
		a, err := freeAddrs(2)
		if err != nil {
			return "", "", "", err
		}
		listen, metricsAddr = a[0], a[1]
		body := fmt.Sprintf("listen: %q\nstore: %q\nredis:\n  url: %q\nsessions:\n  key_file: %q\nmetrics:\n  listen: %q\n%s"+
			"http:\n  sessionless: true\nrate_limits:\n  default: {rate: 1000000, burst: 1000000}\nbackends:\n%s",
			listen, pg.DSN(), redis.URL(), key, metricsAddr, audit, httpBackendYAML(e.backend))
		cfg = filepath.Join(dir, name+".yaml")
		err = os.WriteFile(cfg, []byte(body), 0o600)
		return
	}
	// The token goes to the database the replicas share.
	cfg0, _, _, err := replicaConfig("token", "")
	if err != nil {
		return nil, cleanup, err
	}
	tok, err := e.token(ctx, cfg0)
	if err != nil {
		return nil, cleanup, err
	}
	// start writes a replica's configuration on fresh addresses, just
	// before it starts, and again if a port was taken meanwhile; listen
	// is the address of the last it started.
	var listen string
	start := func(name, note, procName, config, audit string, profiled bool) (*target, error) {
		return onFreshAddrs(func() (*target, error) {
			cfg, addr, metricsAddr, err := replicaConfig(config, audit)
			if err != nil {
				return nil, err
			}
			listen = addr
			url := "http://" + addr + "/mcp"
			t := &target{name: name, note: note, open: sessionFactory(e.hc, url, tok), counters: &scraper{url: "http://" + metricsAddr + "/metrics"}, url: url, token: tok}
			argv := []string{e.mcpgate, "serve", "--config", cfg}
			if e.profile != "" && profiled {
				if t.pprof, err = freeAddr(); err != nil {
					return nil, err
				}
				argv = append(argv, "--pprof", t.pprof)
			}
			return t, e.start(ctx, t, procName, nil, argv...)
		})
	}
	var single *target
	for i := range 3 {
		t, err := start("mcpgate-pg-redis", "mcpgate serve on PostgreSQL + Redis (rate buckets, token events, sealed sessions), http backend, audit on",
			fmt.Sprintf("mcpgate-replica%d", i), fmt.Sprintf("replica%d", i), "", i == 0)
		if err != nil {
			return nil, cleanup, err
		}
		addrs = append(addrs, listen)
		if i == 0 {
			single = t
		}
	}
	journaled, err := start("mcpgate-pg-redis-journal", "the same on PostgreSQL + Redis with audit.journal_dir: an answer waits for a local journal write, not the shared database's transaction",
		"mcpgate-journaled", "journaled", fmt.Sprintf("audit:\n  journal_dir: %q\n", filepath.Join(dir, "journal")), true)
	if err != nil {
		return nil, cleanup, err
	}
	one, stopOne, err := peers.RunHAProxy(addrs[0])
	if err != nil {
		return nil, cleanup, err
	}
	stops = append(stops, stopOne)
	three, stopThree, err := peers.RunHAProxy(addrs...)
	if err != nil {
		return nil, cleanup, err
	}
	stops = append(stops, stopThree)
	lb1 := &target{name: "haproxy-1-replica", note: "HAProxy in front of one of those replicas",
		open: sessionFactory(e.hc, one.URL()+"/mcp", tok), proc: single.proc}
	lb3 := &target{name: "haproxy-3-replicas", note: "HAProxy round-robin (no stickiness) over three: sessions move between replicas on every call",
		open: sessionFactory(e.hc, three.URL()+"/mcp", tok), proc: single.proc}
	return []*target{single, journaled, lb1, lb3}, cleanup, nil
}
