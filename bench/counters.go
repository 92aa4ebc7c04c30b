// counters.go reads the allocation counters of a process under test from
// its Prometheus /metrics endpoint: mcpgate serve's, or the one the bench's
// own relays serve with the same names. Allocations per call are so the
// process's own, counted by its runtime.

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
)

// memCounters are the two runtime counters the bench divides by calls.
type memCounters struct {
	mallocs uint64 // go_memstats_mallocs_total
	bytes   uint64 // go_memstats_alloc_bytes_total
}

// minus is a - b, never below zero.
func (a memCounters) minus(b memCounters) memCounters {
	sub := func(x, y uint64) uint64 {
		if y > x {
			return 0
		}
		return x - y
	}
	return memCounters{mallocs: sub(a.mallocs, b.mallocs), bytes: sub(a.bytes, b.bytes)}
}

// scraper reads one process's counters.
type scraper struct {
	url   string
	token string
}

func (s *scraper) read(ctx context.Context) (memCounters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return memCounters{}, err
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return memCounters{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return memCounters{}, fmt.Errorf("%s: HTTP %d", s.url, resp.StatusCode)
	}
	return parseCounters(resp.Body)
}

func parseCounters(r io.Reader) (memCounters, error) {
	var c memCounters
	var found int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		if !ok {
			continue
		}
		var dst *uint64
		switch string(name) {
		case "go_memstats_mallocs_total":
			dst = &c.mallocs
		case "go_memstats_alloc_bytes_total":
			dst = &c.bytes
		default:
			continue
		}
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(value)), 64)
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		*dst = uint64(f)
		found++
	}
	if found < 2 {
		return c, fmt.Errorf("go_memstats_mallocs_total or go_memstats_alloc_bytes_total missing")
	}
	return c, sc.Err()
}

// serveCounters is /metrics for the bench's own relays: the same two
// counters, under the same names, as Prometheus' Go collector gives.
func serveCounters(w http.ResponseWriter, _ *http.Request) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "go_memstats_mallocs_total %d\ngo_memstats_alloc_bytes_total %d\n", m.Mallocs, m.TotalAlloc)
}
