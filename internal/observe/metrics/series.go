// series.go keeps the series a call counts in, found by their label values
// with one map lookup. A vector's WithLabelValues hashes and checks each
// value on every call: about 4 µs of a relayed call at one caller.

package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// callLabels are a gated call's label values, as the observer makes them.
type callLabels struct{ kind, entry, backend, origin, outcome string }

// callSeries are the children of calls and duration one call counts in.
type callSeries struct {
	calls    prometheus.Counter
	duration prometheus.Observer
}

// children holds the children of a vector already made, by their label
// values. It holds no more than the vector itself: one per series, and
// series are never deleted.
type children[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// get is k's child, made by newChild the first time.
func (c *children[K, V]) get(k K, newChild func(K) V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = newChild(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[K]V{}
	}
	c.m[k] = v
	return v
}

// call is the series of a call labelled l.
func (m *Metrics) call(l callLabels) callSeries {
	return m.callSeries.get(l, func(l callLabels) callSeries {
		return callSeries{calls: m.calls.WithLabelValues(l.kind, l.entry, l.backend, l.origin, l.outcome),
			duration: m.duration.WithLabelValues(l.kind, l.backend, l.entry)}
	})
}

// method is the requests counter of method (a label already).
func (m *Metrics) method(method string) prometheus.Counter {
	return m.methodSeries.get(method, func(method string) prometheus.Counter { return m.requests.WithLabelValues(method) })
}
