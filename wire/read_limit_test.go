package wire_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

// An answer over the client's read limit ends only the exchange it
// answers, with a *TooLargeError naming the limit: the message is read to
// its end and dropped, the connection stays up, and the next exchange on
// it is answered.
func TestAnAnswerOverTheReadLimitEndsOnlyItsExchange(t *testing.T) {
	fs := startServer(t, wire.HandlerFunc(func(ctx context.Context, rw *wire.Responder, p []byte) {
		if !rw.IsChannel() {
			_ = rw.Respond(wire.BeginAnswer{}.Append(nil))
			<-ctx.Done()
			return
		}
		size := 10
		if strings.Contains(string(p), "huge") {
			size = 200_000
		}
		_ = rw.Respond(wire.Response{Result: []byte(`{"text":"` + strings.Repeat("x", size) + `"}`)}.Append(nil))
	}))
	c := dialClient(t, fs.URL+"/", &wire.ClientOptions{Options: wire.Options{ReadLimit: 100_000}})
	ctx := testContext(t)
	scope, err := c.Open(ctx, wire.BeginTools{Arguments: []byte(`{}`)}.Append(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scope.Next(ctx); err != nil {
		t.Fatal(err)
	}
	call := func(name string) ([]byte, error) {
		ch, err := scope.OpenChannel(ctx, wire.McpCallTool{Params: []byte(`{"name":"` + name + `"}`)}.Append(nil))
		if err != nil {
			t.Fatal(err)
		}
		return ch.Next(ctx)
	}
	_, err = call("huge")
	var tl *wire.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 100_000 {
		t.Fatalf("an answer over the limit: %v, want a *TooLargeError with the limit", err)
	}
	for range 3 {
		p, err := call("small")
		if err != nil {
			t.Fatalf("the next exchange on the same connection: %v", err)
		}
		if r, err := wire.DecodeResponse(p); err != nil || len(r.Result) != len(`{"text":"xxxxxxxxxx"}`) {
			t.Fatalf("the next answer: %q %v", p, err)
		}
	}
}
