package fifo

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// model is the same map kept the plain way: keys in a slice, oldest
// first, each operation a linear scan.
type model struct {
	max  int
	keys []int
	vals map[int]int
}

func (m *model) put(k, v int) {
	if i := slices.Index(m.keys, k); i >= 0 {
		m.keys = slices.Delete(m.keys, i, i+1)
	}
	m.keys = append(m.keys, k)
	m.vals[k] = v
	for m.max > 0 && len(m.keys) > m.max {
		delete(m.vals, m.keys[0])
		m.keys = m.keys[1:]
	}
}

func (m *model) del(k int) {
	if i := slices.Index(m.keys, k); i >= 0 {
		m.keys = slices.Delete(m.keys, i, i+1)
		delete(m.vals, k)
	}
}

func TestTheOldestEntryIsForgottenFirst(t *testing.T) {
	m := Map[string, int]{Max: 3}
	for i, k := range []string{"a", "b", "c", "d"} {
		m.Put(k, i)
	}
	if _, ok := m.Get("a"); ok || m.Len() != 3 {
		t.Errorf("after four puts into three places: a held %v, %d held; want a forgotten, 3", ok, m.Len())
	}
	if k, v, _ := m.Oldest(); k != "b" || v != 1 {
		t.Errorf("oldest %s=%d, want b=1", k, v)
	}
}

func TestAReplacedEntryBecomesTheNewest(t *testing.T) {
	m := Map[string, int]{Max: 2}
	m.Put("a", 1)
	m.Put("b", 2)
	m.Put("a", 3) // a is now newer than b
	m.Put("c", 4)
	if _, ok := m.Get("b"); ok {
		t.Error("b held: the replaced a was forgotten in its stead")
	}
	if v, ok := m.Get("a"); !ok || v != 3 {
		t.Errorf("a = %d %v, want 3", v, ok)
	}
}

func TestADeletedEntryLeavesItsPlaceToTheOthers(t *testing.T) {
	m := Map[string, int]{Max: 2}
	m.Put("a", 1)
	m.Put("b", 2)
	m.Delete("a")
	m.Put("c", 3)
	if _, ok := m.Get("b"); !ok || m.Len() != 2 {
		t.Errorf("b held %v, %d held: the deleted a's place went to b's cost", ok, m.Len())
	}
}

// The slots of replaced and deleted entries do not pile up: a key put
// again and again, or put and deleted, keeps the map's memory bounded.
func TestReplacingAndDeletingKeepsTheOrderBounded(t *testing.T) {
	for _, c := range []struct {
		name string
		max  int
		op   func(m *Map[int, int], i int)
	}{
		{"one key replaced", 0, func(m *Map[int, int], i int) { m.Put(1, i) }},
		{"put then deleted", 0, func(m *Map[int, int], i int) { m.Put(i, i); m.Delete(i) }},
		{"full, new keys", 4, func(m *Map[int, int], i int) { m.Put(i, i) }},
		{"full, oldest asked", 4, func(m *Map[int, int], i int) { m.Put(i, i); m.Oldest() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &Map[int, int]{Max: c.max}
			for i := range 100_000 {
				c.op(m, i)
				if len(m.order) > 2*m.Len()+17 {
					t.Fatalf("after %d operations: %d slots for %d entries", i+1, len(m.order), m.Len())
				}
			}
			if cap(m.order) > 1024 {
				t.Errorf("the order's array grew to %d slots for %d entries", cap(m.order), m.Len())
			}
		})
	}
}

// Random puts, deletes and reads agree with the plain model, entry by
// entry and in which is oldest.
func TestTheMapAgreesWithAPlainModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		max := rng.IntN(8)
		m := Map[int, int]{Max: max}
		ref := model{max: max, vals: map[int]int{}}
		for i := range 5000 {
			k := rng.IntN(12)
			switch rng.IntN(3) {
			case 0, 1:
				m.Put(k, i)
				ref.put(k, i)
			default:
				m.Delete(k)
				ref.del(k)
			}
			if m.Len() != len(ref.keys) {
				t.Fatalf("seed %d op %d: %d held, the model %d", seed, i, m.Len(), len(ref.keys))
			}
			for _, rk := range ref.keys {
				if v, ok := m.Get(rk); !ok || v != ref.vals[rk] {
					t.Fatalf("seed %d op %d: %d = %d %v, the model %d", seed, i, rk, v, ok, ref.vals[rk])
				}
			}
			k0, _, ok := m.Oldest()
			if ok != (len(ref.keys) > 0) || ok && k0 != ref.keys[0] {
				t.Fatalf("seed %d op %d: oldest %d %v, the model %v", seed, i, k0, ok, ref.keys)
			}
		}
	}
}
