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

func (e *env) replicaTargets(ctx context.Context) (single, lb1, lb3 *target, cleanup func(), err error) {
	var stops []func()
	cleanup = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	pg, stopPG, err := peers.RunPostgres()
	if errors.Is(err, peers.ErrNoPostgres) {
		return nil, nil, nil, cleanup, nil
	}
	if err != nil {
		return nil, nil, nil, cleanup, err
	}
	stops = append(stops, stopPG)
	redis, stopRedis, err := peers.RunRedis()
	if errors.Is(err, peers.ErrNoRedis) {
		return nil, nil, nil, cleanup, nil
	}
	if err != nil {
		return nil, nil, nil, cleanup, err
	}
	stops = append(stops, stopRedis)
	if !peers.HaveHAProxy() {
		return nil, nil, nil, cleanup, nil
	}
	dir := filepath.Join(e.dir, "replicas")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, nil, cleanup, err
	}
	key := filepath.Join(dir, "session.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("3c", 32)+"\n"), 0o600); err != nil {
		return nil, nil, nil, cleanup, err
	}
	var addrs, cfgs, metrics []string
	for i := range 3 {
		listen, err := freeAddr()
		if err != nil {
			return nil, nil, nil, cleanup, err
		}
		m, err := freeAddr()
		if err != nil {
			return nil, nil, nil, cleanup, err
		}
		cfg := fmt.Sprintf("listen: %q\nstore: %q\nredis:\n  url: %q\nsessions:\n  key_file: %q\nmetrics:\n  listen: %q\n"+
			"http:\n  sessionless: true\nrate_limits:\n  default: {rate: 1000000, burst: 1000000}\nbackends:\n%s",
			listen, pg.DSN(), redis.URL(), key, m, httpBackendYAML(e.backend))
		path := filepath.Join(dir, fmt.Sprintf("replica%d.yaml", i))
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return nil, nil, nil, cleanup, err
		}
		addrs, cfgs, metrics = append(addrs, listen), append(cfgs, path), append(metrics, m)
	}
	tok, err := e.token(ctx, cfgs[0])
	if err != nil {
		return nil, nil, nil, cleanup, err
	}
	for i := range 3 {
		url := "http://" + addrs[i] + "/mcp"
		t := &target{name: "mcpgate-pg-redis", note: "mcpgate serve on PostgreSQL + Redis (rate buckets, token events, sealed sessions), http backend, audit on",
			open: sessionFactory(e.hc, url, tok), counters: &scraper{url: "http://" + metrics[i] + "/metrics"}, url: url, token: tok}
		argv := []string{e.mcpgate, "serve", "--config", cfgs[i]}
		if e.profile != "" && i == 0 {
			if t.pprof, err = freeAddr(); err != nil {
				return nil, nil, nil, cleanup, err
			}
			argv = append(argv, "--pprof", t.pprof)
		}
		if err := e.start(ctx, t, fmt.Sprintf("mcpgate-replica%d", i), nil, argv...); err != nil {
			return nil, nil, nil, cleanup, err
		}
		if i == 0 {
			single = t
		}
	}
	one, stopOne, err := peers.RunHAProxy(addrs[0])
	if err != nil {
		return nil, nil, nil, cleanup, err
	}
	stops = append(stops, stopOne)
	three, stopThree, err := peers.RunHAProxy(addrs...)
	if err != nil {
		return nil, nil, nil, cleanup, err
	}
	stops = append(stops, stopThree)
	lb1 = &target{name: "haproxy-1-replica", note: "HAProxy in front of one of those replicas",
		open: sessionFactory(e.hc, one.URL()+"/mcp", tok), proc: single.proc}
	lb3 = &target{name: "haproxy-3-replicas", note: "HAProxy round-robin (no stickiness) over three: sessions move between replicas on every call",
		open: sessionFactory(e.hc, three.URL()+"/mcp", tok), proc: single.proc}
	return single, lb1, lb3, cleanup, nil
}
