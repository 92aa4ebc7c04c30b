// streams_revoked_test.go pins that every stream ends when the credential
// that opened it is revoked: a GET stream and a 2026-07-28
// subscriptions/listen (a POST that stays open), opened with a service
// token or with an access token of the built-in server. Before, only GET
// streams of service tokens ended; an OAuth stream, and any listen,
// outlived the revocation.

package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// openStream opens a stream with the bearer secret: the standalone GET
// of a session, or a 2026-07-28 subscriptions/listen. The returned
// channel is closed when the gateway ends the stream.
func openStream(t *testing.T, e *gwEnv, secret, kind string) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	var req *http.Request
	switch kind {
	case "GET":
		sid := e.initialize(secret)
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(mcphttp.HeaderSessionID, sid)
	default:
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{`+
				`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcphttp.HeaderProtocolVersion, "2026-07-28")
		req.Header.Set(mcphttp.HeaderMethod, "subscriptions/listen")
	}
	req.Header.Set("Authorization", gwBearer(secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s stream: %d", kind, resp.StatusCode)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = io.Copy(io.Discard, resp.Body) // until the gateway ends it
		resp.Body.Close()
	}()
	return ended
}

func TestEveryStreamEndsWhenItsCredentialIsRevoked(t *testing.T) {
	e := gwStart(t, "listen: 127.0.0.1:0\nauth:\n  oauth:\n    resource: "+oauthResource+"\n    builtin: true\n")
	for _, kind := range []string{"GET", "subscriptions/listen"} {
		t.Run(kind+" of a service token", func(t *testing.T) {
			secret, id := e.token("svc-"+kind, "editor")
			ended := openStream(t, e, secret, kind)
			if err := e.gw.Tokens().Revoke(testkit.Context(t), id); err != nil {
				t.Fatal(err)
			}
			waitEnded(t, ended)
		})
		t.Run(kind+" of a grant", func(t *testing.T) {
			secret, _ := e.token("person-"+kind, "editor")
			access := builtinGrant(t, e, secret, "client of "+kind, "editor").AccessToken
			ended := openStream(t, e, access, kind)
			grants, err := e.store.OAuthGrants(testkit.Context(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range grants {
				if g.ClientName == "client of "+kind {
					if err := e.store.RevokeOAuthGrant(testkit.Context(t), g.ID, time.Now()); err != nil { // as `mcpgate oauth revoke` does
						t.Fatal(err)
					}
				}
			}
			waitEnded(t, ended)
		})
	}
}

// waitEnded waits for a stream to end, a bounded while.
func waitEnded(t *testing.T, ended <-chan struct{}) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream is still open after its credential's revocation")
	}
}
