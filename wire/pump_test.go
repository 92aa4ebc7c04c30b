package wire_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

// gatedReader yields its data in reads of at most step bytes, each only
// once it is let go (a nil gate lets every read go at once).
type gatedReader struct {
	data []byte
	step int
	gate chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.gate != nil {
		<-g.gate
	}
	if len(g.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), g.step)], g.data)
	g.data = g.data[n:]
	return n, nil
}

// Pump relays a stream as the exchange's responses: every byte, in order,
// the end as the finish; reads that pile up while a response is written
// go out together, so a fast stream makes fewer responses than reads.
func TestPumpRelaysEveryByteInOrderAndGathersWhatWaits(t *testing.T) {
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	pumped := make(chan error, 1)
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		_, err := r.Pump(&gatedReader{data: data, step: 4 << 10}, 4<<10)
		pumped <- err
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope, err := c.Open(ctx, []byte("stream"))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	responses := 0
	for {
		b, err := scope.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got, responses = append(got, b...), responses+1
	}
	if err := <-pumped; err != nil {
		t.Fatalf("Pump: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("relayed %d bytes, not the %d sent in order", len(got), len(data))
	}
	if reads := len(data) / (4 << 10); responses >= reads {
		t.Fatalf("%d reads went out as %d responses: nothing was gathered", reads, responses)
	}
	t.Logf("%d reads of 4 KiB, %d responses", len(data)/(4<<10), responses)
}

// A slow stream is relayed read by read: a read's bytes go out before the
// next read is let go.
func TestPumpRelaysASlowStreamAsItComes(t *testing.T) {
	gate := make(chan struct{})
	src := &gatedReader{data: []byte("onetwothree"), step: 3, gate: gate}
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		_, _ = r.Pump(src, 64)
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope, err := c.Open(ctx, []byte("stream"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two", "thr", "ee"} {
		gate <- struct{}{}
		if b, err := scope.Next(ctx); err != nil || string(b) != want {
			t.Fatalf("got %q %v, want %q as soon as it was read", b, err, want)
		}
	}
	close(gate)
	if _, err := scope.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the stream's end: %v, want the finish", err)
	}
}
