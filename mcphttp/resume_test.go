// resume_test.go pins the resumable POST stream over real sockets: a
// client that leaves its POST stream after the priming event does not
// cancel its request, and a GET with Last-Event-ID gets what it missed
// and the answer.

package mcphttp

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

func TestAPOSTStreamIsResumedWithLastEventID(t *testing.T) {
	testkit.LeakCheck(t)
	s, probe := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)

	// The POST: read the priming event, then hang up.
	ctx, hangUp := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(stCallBody(7, "slow", `{}`)))
	req.Header = stHeaders(sid, "Accept", "text/event-stream, application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	prime, err := sse.NewReader(bufio.NewReader(resp.Body), 0).Next()
	if err != nil || prime.ID == "" || len(prime.Data) != 0 {
		t.Fatalf("first event %+v %v, want a priming event", prime, err)
	}
	stReceive(t, testkit.Context(t), probe.started, "the slow tool to start")
	hangUp()
	resp.Body.Close()

	// The client comes back for it; the request, still running (its
	// client's leaving cancelled nothing), answers once released.
	stream, events := e.openGet(sid, headerLastEventID, prime.ID)
	defer stream.Body.Close()
	close(probe.release)
	ev, m := stNextMessage(t, events)
	if stText(t, m) != "slow done" || ev.ID == "" {
		t.Fatalf("resumed stream: %+v %s, want the answer", ev, m.Result)
	}
	// A standalone stream is still to be had beside it.
	standalone, _ := e.openGet(sid)
	standalone.Body.Close()
}
