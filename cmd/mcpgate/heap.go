// heap.go gives the commands that serve, serve and proxy, room to
// allocate between garbage collections (internal/heaproom).

package main

import (
	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/heaproom"
)

// keepHeapRoom wraps cmd's RunE: while it runs, the heap may grow by
// heaproom.Room past what is live before the next collection, unless
// GOGC is set in the environment.
func keepHeapRoom(cmd *cobra.Command) {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		defer heaproom.Keep(heaproom.Room)()
		return run(c, args)
	}
}
