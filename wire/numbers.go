// numbers.go hands out scope and channel numbers. A number is free again
// after its finish, and the smallest free one is handed out first. Numbers
// so stay as small as the most exchanges ever open at once. Which number
// comes next does not depend on the order finishes arrived in.

package wire

import (
	"cmp"
	"slices"
)

type numbers struct {
	next uint32
	free []uint32 // descending: the smallest is last
}

// take returns the smallest number not in use. Numbers start at 1, so a
// 0 in a log line's channel field is never one this side minted. (Running
// out would take four billion exchanges open at once.)
func (n *numbers) take() uint32 {
	if k := len(n.free); k > 0 {
		v := n.free[k-1]
		n.free = n.free[:k-1]
		return v
	}
	n.next++
	return n.next
}

// give returns a number whose exchange has finished.
func (n *numbers) give(v uint32) {
	i, _ := slices.BinarySearchFunc(n.free, v, func(a, b uint32) int { return cmp.Compare(b, a) })
	n.free = slices.Insert(n.free, i, v)
}
