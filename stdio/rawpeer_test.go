// rawpeer_test.go drives Serve in process with hand-written lines, the way
// a rule test wants: send exactly these bytes, read exactly the next line.

package stdio

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// waitLimit bounds every wait in the tests: a broken rule fails the test
// instead of hanging it. Nothing sleeps for it; it only caps a wait.
const waitLimit = 10 * time.Second

type rawPeer struct {
	server  *mcp.Server
	latches *latches
	in      *io.PipeWriter // the server's stdin
	outW    *io.PipeWriter // the server's stdout, closed once Serve is done
	lines   chan []byte
	served  chan error // Serve's result
	cancel  context.CancelFunc
}

// startServe runs Serve on pipes and reads its output line by line.
func startServe(t *testing.T, opts Options) *rawPeer {
	t.Helper()
	s, l := newTestServer()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	p := &rawPeer{server: s, latches: l, in: inW, outW: outW, lines: make(chan []byte, 64), served: make(chan error, 1), cancel: cancel}
	go func() { p.served <- Serve(ctx, s, inR, outW, opts) }()
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		<-p.served
		_ = outW.Close()
		for range p.lines {
		}
	})
	return p
}

func (p *rawPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// next returns the next line the server wrote.
func (p *rawPeer) next(t *testing.T) []byte {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatal("server output ended")
		}
		return line
	case <-time.After(waitLimit):
		t.Fatal("no line from the server")
	}
	return nil
}

// nextMessage returns the next line parsed.
func (p *rawPeer) nextMessage(t *testing.T) *jsonrpc.Message {
	t.Helper()
	line := p.next(t)
	m, err := jsonrpc.Parse(line)
	if err != nil {
		t.Fatalf("server wrote an invalid message %q: %v", line, err)
	}
	return m
}

// initialize performs the handshake at revision version.
func (p *rawPeer) initialize(t *testing.T, version string) {
	t.Helper()
	p.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"`+version+
		`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`+"\n")
	m := p.nextMessage(t)
	if v, _ := jsonrpc.LookupString(m.Result, "protocolVersion"); v != version {
		t.Fatalf("initialize answered %s", p.describe(m))
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
}

// endInput closes the server's stdin and returns Serve's result.
func (p *rawPeer) endInput(t *testing.T) error {
	t.Helper()
	_ = p.in.Close()
	select {
	case err := <-p.served:
		p.served <- err // for Cleanup
		return err
	case <-time.After(waitLimit):
		t.Fatal("Serve did not return")
	}
	return nil
}

func (p *rawPeer) describe(m *jsonrpc.Message) string {
	b := m.Append(nil)
	return string(b)
}

// errorCode returns the code of an error response, failing on a result.
func errorCode(t *testing.T, m *jsonrpc.Message) int64 {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("want an error, got %s", m.Append(nil))
	}
	e, err := m.ErrorObject()
	if err != nil {
		t.Fatal(err)
	}
	return e.Code
}
