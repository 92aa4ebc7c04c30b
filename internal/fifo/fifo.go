// Package fifo is a map bounded in size that forgets its oldest entries
// first: for what a process remembers on a peer's word (routes, ended
// sessions), where an unbounded map would let the peer grow it without
// end.
package fifo

// Map holds at most Max entries; putting one more forgets the entry put
// longest ago. Every operation costs O(1), amortised. The zero value with
// Max set is ready to use. It is not safe for concurrent use: its owner
// locks it.
type Map[K comparable, V any] struct {
	Max int // entries kept at most; 0 or less keeps every entry

	m     map[K]item[V]
	order []slot[K] // keys in the order put, from head; stale slots are skipped
	head  int
	seq   uint64
}

type item[V any] struct {
	v   V
	seq uint64 // the put that placed this entry in order
}

type slot[K comparable] struct {
	k   K
	seq uint64
}

// Get is k's value, and whether k is held.
func (m *Map[K, V]) Get(k K) (V, bool) {
	it, ok := m.m[k]
	return it.v, ok
}

// Len is the number of entries held.
func (m *Map[K, V]) Len() int { return len(m.m) }

// Put holds v under k, as the newest entry (a replaced entry too), then
// forgets the oldest entries while more than Max are held.
func (m *Map[K, V]) Put(k K, v V) {
	if m.m == nil {
		m.m = map[K]item[V]{}
	}
	m.seq++
	m.m[k] = item[V]{v: v, seq: m.seq}
	m.order = append(m.order, slot[K]{k: k, seq: m.seq})
	for m.Max > 0 && len(m.m) > m.Max {
		if k, _, ok := m.Oldest(); ok {
			delete(m.m, k)
		}
	}
	m.compact()
}

// Delete forgets k.
func (m *Map[K, V]) Delete(k K) {
	delete(m.m, k)
	m.compact()
}

// Oldest is the entry put longest ago, or false when none is held.
func (m *Map[K, V]) Oldest() (K, V, bool) {
	for ; m.head < len(m.order); m.head++ {
		s := m.order[m.head]
		if it, ok := m.m[s.k]; ok && it.seq == s.seq {
			return s.k, it.v, true
		}
		m.order[m.head] = slot[K]{} // the key is not kept alive
	}
	var k K
	var v V
	return k, v, false
}

// compact drops the slots of forgotten and replaced entries once they
// outnumber the live ones, so that order stays within twice the entries
// held (plus a little), however often keys are replaced or deleted.
// Between two compactions come at least as many puts and deletes as the
// second one copies.
func (m *Map[K, V]) compact() {
	if len(m.order) <= 2*len(m.m)+16 {
		return
	}
	live := m.order[:0]
	for _, s := range m.order[m.head:] {
		if it, ok := m.m[s.k]; ok && it.seq == s.seq {
			live = append(live, s)
		}
	}
	clear(m.order[len(live):])
	m.order, m.head = live, 0
}
