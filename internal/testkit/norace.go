//go:build !race

package testkit

// Race reports whether the race detector is built in: it changes what
// allocates, so an allocation budget holds only without it.
const Race = false
