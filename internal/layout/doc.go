// Package layout holds the test that keeps the architecture honest: data
// flows one way, from the command through the gateway and proxy to the
// protocol packages, and no package imports one above it.
package layout
