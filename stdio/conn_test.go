// conn_test.go pins the Conn contract over plain pipes: messages go out as
// lines and come back owned by the caller, Read honours its context, and
// Close releases a Read that waits.

package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// pipeConn returns a Conn and the far end of its two pipes.
func pipeConn(t *testing.T) (c *Conn, toConn *io.PipeWriter, fromConn *bufio.Reader) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c = NewConn(inR, outW)
	t.Cleanup(func() {
		_ = c.Close()
		_ = inW.Close()
		_ = outR.Close()
	})
	return c, inW, bufio.NewReader(outR)
}

func TestConnWritesLinesAndReadsOwnedMessages(t *testing.T) {
	c, toConn, fromConn := pipeConn(t)
	// A relayed payload may be pretty-printed: it is compacted onto one
	// line.
	go func() {
		_ = c.Write(context.Background(), &jsonrpc.Message{ID: jsonrpc.ID("1"), Method: "m", Params: json.RawMessage("{\n\"a\": 1}")})
	}()
	line, err := fromConn.ReadString('\n')
	if err != nil || line != `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}`+"\n" {
		t.Fatalf("wrote %q, %v", line, err)
	}

	go func() {
		_, _ = io.WriteString(toConn, `{"jsonrpc":"2.0","id":1,"result":{"b":2}}`+"\nnot json\n"+`[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"result":{"c":3}}]`+"\n")
	}()
	first, err := c.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	third, err := c.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// A line that is not JSON-RPC is dropped; a batch is read message by
	// message; each message is the reader's own.
	if string(first.Result) != `{"b":2}` || second.Method != "n" || string(third.Result) != `{"c":3}` {
		t.Fatalf("read %+v, %+v, %+v", first, second, third)
	}
}

func TestConnReadHonoursContext(t *testing.T) {
	c, _, _ := pipeConn(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read = %v, want context.Canceled", err)
	}
}

func TestConnCloseReleasesPendingRead(t *testing.T) {
	c, _, _ := pipeConn(t)
	got := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		got <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("pending Read = %v, want io.EOF", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Close left Read blocked")
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if err := c.Write(context.Background(), &jsonrpc.Message{Method: "m"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
}

func TestConnReadsEOFWhenTheServerEnds(t *testing.T) {
	c, toConn, _ := pipeConn(t)
	_ = toConn.Close()
	if _, err := c.Read(t.Context()); !errors.Is(err, io.EOF) {
		t.Fatalf("Read = %v, want io.EOF", err)
	}
}

func TestConnDropsOversizedMessagesAndGoesOn(t *testing.T) {
	c, toConn, _ := pipeConn(t)
	go func() {
		_, _ = io.WriteString(toConn, `{"pad":"`+strings.Repeat("x", DefaultMaxLineBytes)+`"}`+"\n"+`{"jsonrpc":"2.0","method":"ok"}`+"\n")
	}()
	msg, err := c.Read(t.Context())
	if err != nil || msg.Method != "ok" {
		t.Fatalf("Read = %+v, %v", msg, err)
	}
}
