package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// scrape serves m's registry once and returns the exposition text.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// The backends' series are read from the current backends at each scrape:
// one added appears, one removed leaves no series behind, and a state
// change shows at once.
func TestBackendSeriesFollowTheCurrentBackends(t *testing.T) {
	var mu sync.Mutex
	since := time.Unix(1_700_000_000, 500_000_000)
	states := []BackendState{{Name: "alpha", Up: true, Since: since}, {Name: "beta", Restarts: 3, Since: since}}
	m := New()
	m.Backends(func() []BackendState {
		mu.Lock()
		defer mu.Unlock()
		return append([]BackendState(nil), states...)
	})

	text := scrape(t, m)
	for _, want := range []string{
		`mcpgate_backend_up{backend="alpha"} 1`,
		`mcpgate_backend_up{backend="beta"} 0`,
		`mcpgate_backend_restarts_total{backend="alpha"} 0`,
		`mcpgate_backend_restarts_total{backend="beta"} 3`,
		`mcpgate_backend_state_since_seconds{backend="alpha"} 1.7000000005e+09`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("scrape lacks %s", want)
		}
	}

	mu.Lock()
	states = []BackendState{{Name: "beta", Up: true, Restarts: 4, Since: since}, {Name: "gamma", Since: since}}
	mu.Unlock()
	text = scrape(t, m)
	if strings.Contains(text, `backend="alpha"`) {
		t.Error("a removed backend still has series")
	}
	for _, want := range []string{`mcpgate_backend_up{backend="beta"} 1`, `mcpgate_backend_restarts_total{backend="beta"} 4`, `mcpgate_backend_up{backend="gamma"} 0`} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("scrape lacks %s", want)
		}
	}
}

// Two backend names that cut to the same label cannot fail the scrape: the
// first keeps the series, of the backends' state and of held definitions.
func TestBackendLabelCollisionKeepsTheScrapeWorking(t *testing.T) {
	long := strings.Repeat("b", maxLabelBytes)
	m := New()
	m.Backends(func() []BackendState {
		return []BackendState{{Name: long + "-one", Up: true}, {Name: long + "-two"}}
	})
	m.Held(func() map[string]int { return map[string]int{long + "-one": 1, long + "-two": 2} })
	text := scrape(t, m)
	for _, series := range []string{"mcpgate_backend_up{", "mcpgate_definitions_held{"} {
		if got := strings.Count(text, series); got != 1 {
			t.Errorf("%d %s series, want 1:\n%s", got, series, text)
		}
	}
}
