// revoked_streams_test.go pins that a credential's end reaches the streams
// its holder keeps open: the Streamable HTTP standalone stream and a
// legacy SSE stream close once their service token is revoked (in this
// process, or in another and seen at the next refresh), and a JWT's
// stream closes at its exp — over real sockets.

package gateway_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// rsOpen opens a GET stream at path with auth (and session, for /mcp) and
// returns a channel closed when the server ends it.
func rsOpen(t *testing.T, e *gwEnv, path, auth, session string) <-chan struct{} {
	t.Helper()
	req, err := http.NewRequestWithContext(testkit.Context(t), http.MethodGet, e.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", auth)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	return ended
}

// rsWantEnded fails unless the stream ends within a bound.
func rsWantEnded(t *testing.T, what string, ended <-chan struct{}, within time.Duration) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(within):
		t.Fatalf("%s: the stream was still open %v later", what, within)
	}
}

func TestRevokingATokenClosesItsOpenStreams(t *testing.T) {
	e := gwStart(t, "listen: 127.0.0.1:0\n")
	secret, id := e.token("alice", "viewer")
	other, _ := e.token("bob", "viewer")
	session := e.initialize(secret)
	mcpStream := rsOpen(t, e, "/mcp", gwBearer(secret), session)
	sseStream := rsOpen(t, e, "/sse", gwBearer(secret), "")
	bystander := rsOpen(t, e, "/sse", gwBearer(other), "")

	if err := e.gw.Tokens().Revoke(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	rsWantEnded(t, "GET /mcp of the revoked token", mcpStream, 5*time.Second)
	rsWantEnded(t, "GET /sse of the revoked token", sseStream, 5*time.Second)
	select {
	case <-bystander:
		t.Fatal("another token's stream ended too")
	default:
	}
	// And it does not come back.
	rep := e.do(gwRequest{method: http.MethodGet, path: "/mcp", auth: gwBearer(secret), session: session})
	if rep.status != http.StatusUnauthorized {
		t.Errorf("GET /mcp again with the revoked token: %d, want 401", rep.status)
	}
}

func TestATokenRevokedByAnotherProcessClosesStreamsAtTheNextRefresh(t *testing.T) {
	e := gwStart(t, "listen: 127.0.0.1:0\n")
	secret, id := e.token("alice", "viewer")
	stream := rsOpen(t, e, "/sse", gwBearer(secret), "")
	// The CLI revokes in the store; this gateway learns it on refresh.
	if err := e.store.RevokeToken(context.Background(), id, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if err := e.gw.Tokens().Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	rsWantEnded(t, "GET /sse after a revocation elsewhere", stream, 5*time.Second)
}

func TestAJWTStreamClosesAtItsExp(t *testing.T) {
	key := []byte("stream-test-secret-of-32-bytes-at-least!")
	t.Setenv(gwJWTSecretEnv, string(key))
	e := gwStart(t, "auth:\n  jwt:\n    algorithm: HS256\n    secret_env: "+gwJWTSecretEnv+"\n")
	exp := time.Now().Add(2 * time.Second)
	tok := gwMint(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "alice", "role": "viewer", "exp": exp.Unix()})
	stream := rsOpen(t, e, "/sse", gwBearer(tok), "")
	rsWantEnded(t, "GET /sse of a JWT", stream, 10*time.Second)
	if time.Now().Before(exp.Truncate(time.Second)) {
		t.Errorf("the stream closed before the token's exp")
	}
}
