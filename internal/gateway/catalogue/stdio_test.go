package catalogue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/stdio"
)

// Over a real transport results and errors still arrive intact. stdio
// compacts a message that holds newlines (it is line-delimited) and leaves
// any other byte alone: the error, a single line, arrives exactly.
func TestRelayOverStdioKeepsPayloads(t *testing.T) {
	bs := newBackendServer(t, "b1", 0)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stdio.Serve(sctx, bs.Server, inR, outW, stdio.Options{})
		_ = outW.Close()
	}()
	t.Cleanup(func() { cancel(); _ = inW.Close(); <-done })
	client := initClient(t, stdio.NewConn(outR, inW))

	f := newFront(t)
	must(t, catalogue.New("b1", client, catalogue.Options{}).Sync(context.Background(), f.Server))
	if got, want := f.result(t, "tools/call", `{"name":"b1__faithful"}`), compact(t, faithful); string(got) != want {
		t.Errorf("result %s, want %s", got, want)
	}
	if m := f.call(t, "tools/call", `{"name":"b1__fail"}`); string(m.Error) != customError {
		t.Errorf("error %s, want %s", m.Error, customError)
	}
	wantDef := compact(t, `{"title":"Pretty","name":"b1__pretty",`+prettyDef[len(`{
    "title": "Pretty",
    "name":  "pretty",`):])
	if got := f.list(t, "tools/list", "tools")[0]; string(got) != wantDef {
		t.Errorf("definition %s, want %s", got, wantDef)
	}
}

func compact(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	must(t, json.Compact(&b, []byte(s)))
	return b.String()
}
