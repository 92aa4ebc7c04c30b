// body_timeout_test.go pins the bound on reading a request body: a client
// that drips its body one byte at a time is answered 408 once BodyTimeout
// has passed and its connection is closed, on both transports; a body
// that arrives in time is served, however long its answer takes.

package mcphttp

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// drip sends a POST's headers announcing body, then body one byte every
// gap until the server answers, and returns the answer's status and how
// many bytes of the body were sent.
func drip(t *testing.T, addr, path, body string, gap time.Duration) (status int, sent int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", path, addr, len(body))
	answered := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	tick := time.NewTicker(gap)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case status := <-answered:
			return status, sent
		case <-deadline:
			t.Fatal("no answer to a dripped body in 20 s")
		case <-tick.C:
			if sent < len(body) {
				if _, err := c.Write([]byte{body[sent]}); err == nil {
					sent++
				}
			}
		}
	}
}

func TestADrippedBodyIsCutOff(t *testing.T) {
	testkit.LeakCheck(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`
	opts := Options{BodyTimeout: 300 * time.Millisecond}

	s, _ := stNewServer(t)
	e := newStEnv(t, s, opts)
	addr := strings.TrimPrefix(e.srv.URL, "http://")
	if status, sent := drip(t, addr, "/mcp", body, 50*time.Millisecond); status != http.StatusRequestTimeout || sent >= len(body) {
		t.Errorf("streamable: a dripped body got %d after %d of %d bytes, want 408 before the end", status, sent, len(body))
	}

	f := newLegacyFixture(t, opts)
	peer := openLegacyStream(t, f, "")
	path := strings.TrimPrefix(peer.endpoint, f.http.URL)
	if !strings.HasPrefix(path, "/") {
		path = "/messages?sessionId=" + peer.sessionID()
	}
	if status, sent := drip(t, strings.TrimPrefix(f.http.URL, "http://"), path, body, 50*time.Millisecond); status != http.StatusRequestTimeout || sent >= len(body) {
		t.Errorf("legacy: a dripped body got %d after %d of %d bytes, want 408 before the end", status, sent, len(body))
	}

	// A body that arrives in time is served.
	if status, _ := drip(t, addr, "/mcp", body, time.Millisecond); status != http.StatusOK {
		t.Errorf("a body sent at once got %d", status)
	}
}
