// copynext_test.go checks Channel.CopyNext, the read of a byte stream (a
// pair): every response arrives whole and in order, whatever its length
// against the connection's first buffer; one over the read limit ends the
// channel as Next's would; and a long stream reuses its buffers.

package wire_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

// streamServer answers every channel with payloads of the given lengths,
// each filled with its own index, then finishes.
func streamServer(t *testing.T, sizes []int) *framedServer {
	payloads := make([][]byte, len(sizes)) // made before: the budget test counts the process's allocations
	for i, n := range sizes {
		payloads[i] = bytes.Repeat([]byte{byte('a' + i%26)}, n)
	}
	return startServer(t, wire.HandlerFunc(func(ctx context.Context, rw *wire.Responder, p []byte) {
		if !rw.IsChannel() {
			_ = rw.Respond([]byte("begun"))
			<-ctx.Done()
			return
		}
		for _, p := range payloads {
			if rw.Respond(p) != nil {
				return
			}
		}
	}))
}

func openStream(t *testing.T, c *wire.Client) *wire.Channel {
	ctx := testContext(t)
	scope, err := c.Open(ctx, []byte("begin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scope.Next(ctx); err != nil {
		t.Fatal(err)
	}
	ch, err := scope.OpenChannel(ctx, []byte("stream"))
	if err != nil {
		t.Fatal(err)
	}
	ch.LimitQueue(1 << 20) // as the pairs do
	return ch
}

func TestCopyNextWritesEachResponseWholeAndInOrder(t *testing.T) {
	const first = 16 << 10 // the connection's first buffer, frame header included
	sizes := []int{
		10,
		first - wire.HeaderSize,     // the whole message fills the first buffer
		first - wire.HeaderSize + 1, // one byte more than the first buffer: read on
		first - wire.HeaderSize + 2,
		0,
		100_000,
		256 << 10,
		5,
		1 << 20, // longer than every one before
		300_000,
		256 << 10,
	}
	fs := streamServer(t, sizes)
	ch := openStream(t, dialClient(t, fs.URL+"/", nil))
	ctx := testContext(t)
	var w wire.Pieces
	for {
		if _, err := ch.CopyNext(ctx, &w); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if len(w.Got) != len(sizes) {
		t.Fatalf("%d responses, want %d", len(w.Got), len(sizes))
	}
	for i, n := range sizes {
		if !bytes.Equal(w.Got[i], bytes.Repeat([]byte{byte('a' + i%26)}, n)) {
			t.Errorf("response %d: %d bytes, not the %d sent", i, len(w.Got[i]), n)
		}
	}
}

func TestCopyNextOverTheReadLimitEndsTheChannel(t *testing.T) {
	fs := streamServer(t, []int{50_000, 200_000, 10})
	c := dialClient(t, fs.URL+"/", &wire.ClientOptions{Options: wire.Options{ReadLimit: 100_000}})
	ctx := testContext(t)
	ch := openStream(t, c)
	var w wire.Pieces
	if _, err := ch.CopyNext(ctx, &w); err != nil || len(w.Got) != 1 || len(w.Got[0]) != 50_000 {
		t.Fatalf("the response within the limit: %v, %d pieces", err, len(w.Got))
	}
	var tl *wire.TooLargeError
	if _, err := ch.CopyNext(ctx, &w); !errors.As(err, &tl) || tl.Limit != 100_000 {
		t.Fatalf("the response over the limit: %v, want a *TooLargeError", err)
	}
	// The connection stays up: another channel is answered.
	next := openStream(t, c)
	if _, err := next.CopyNext(ctx, io.Discard); err != nil {
		t.Fatalf("a channel after it: %v", err)
	}
}

// A stream of 256 KiB responses, read with CopyNext, allocates a few
// buffers and reuses them; read with Next, a buffer for each. The budget
// is on bytes allocated in the whole process over 64 responses, after 8
// that let the buffers gather (the first ones came before the first
// CopyNext said how the channel is read).
func TestCopyNextReusesItsBuffers(t *testing.T) {
	const warm, n, size = 8, 64, 256 << 10
	sizes := make([]int, warm+n)
	for i := range sizes {
		sizes[i] = size
	}
	fs := streamServer(t, sizes)
	c := dialClient(t, fs.URL+"/", nil)
	for _, tc := range []struct {
		name   string
		copyTo func(*wire.Channel) error
		atMost int // bytes allocated per response
	}{
		{"CopyNext: buffers reused", func(ch *wire.Channel) error {
			_, err := ch.CopyNext(testContext(t), io.Discard)
			return err
		}, size / 16},
		{"Next: a buffer each (what the budget guards)", func(ch *wire.Channel) error {
			_, err := ch.Next(testContext(t))
			return err
		}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := openStream(t, c)
			for range warm {
				if err := tc.copyTo(ch); err != nil {
					t.Fatal(err)
				}
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got := 0
			for {
				err := tc.copyTo(ch)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got++
			}
			runtime.ReadMemStats(&after)
			per := int(after.TotalAlloc-before.TotalAlloc) / n
			t.Logf("%d responses, %d bytes allocated per response", got, per)
			if got != n {
				t.Fatalf("%d responses, want %d", got, n)
			}
			// Next's: a buffer for each response, less the few the reader
			// had queued before the count began.
			if tc.atMost >= 0 && per > tc.atMost || tc.atMost < 0 && per < size/2 {
				t.Fatalf("%d bytes allocated per response of %d", per, size)
			}
		})
	}
}
