// startup.go measures the time to the first answer: from starting the
// mcpgate serve process to the first tools/call that succeeds through it
// (its backend, the fixture over HTTP, already running).

package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// startupTimes starts a fresh gateway n times and times each first answer.
func (e *env) startupTimes(ctx context.Context, backend string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for i := range n {
		name := fmt.Sprintf("startup-%d", i)
		cfg, listen, _, err := e.gatewayConfig(name, httpBackendYAML(backend), 0)
		if err != nil {
			return out, err
		}
		tok, err := e.token(ctx, cfg)
		if err != nil {
			return out, err
		}
		open := sessionFactory(e.hc, "http://"+listen+"/mcp", tok)
		t0 := time.Now()
		p, err := e.ps.start(name, nil, e.mcpgate, "serve", "--config", cfg)
		if err != nil {
			return out, err
		}
		c, err := firstAnswer(ctx, open, readyTimeout, time.Millisecond)
		d := time.Since(t0)
		if err != nil {
			p.stop()
			return out, fmt.Errorf("%s: %w", name, err)
		}
		c.close(ctx)
		p.stop()
		out = append(out, d)
	}
	return out, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
