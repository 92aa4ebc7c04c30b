package sse_test

import (
	"bytes"
	"fmt"

	"github.com/mcpgate/mcpgate/sse"
)

// Events written with ids and read back: the reader skips the keepalive
// comment, and remembers the last id for a client to resume from.
func Example() {
	var stream []byte
	stream = sse.AppendEvent(stream, sse.Event{ID: "1", Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)})
	stream = append(stream, ": keepalive\n\n"...)
	stream = sse.AppendEvent(stream, sse.Event{ID: "2", Name: "message", Data: []byte("two\nlines")})

	r := sse.NewReader(bytes.NewReader(stream), 0)
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		fmt.Printf("%s %q\n", ev.ID, ev.Data)
	}
	fmt.Println("resume after", r.LastEventID())
	// Output:
	// 1 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}"
	// 2 "two\nlines"
	// resume after 2
}
