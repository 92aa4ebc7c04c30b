// numbers_internal_test.go pins the numbering: the smallest free number
// comes first, whatever order the finishes came in.

package wire

import "testing"

func TestNumbersSmallestFreeFirst(t *testing.T) {
	var n numbers
	for want := uint32(1); want <= 4; want++ {
		if got := n.take(); got != want {
			t.Fatalf("take = %d, want %d", got, want)
		}
	}
	n.give(3)
	n.give(1)
	n.give(4)
	for _, want := range []uint32{1, 3, 4, 5} {
		if got := n.take(); got != want {
			t.Fatalf("take = %d, want %d", got, want)
		}
	}
}
