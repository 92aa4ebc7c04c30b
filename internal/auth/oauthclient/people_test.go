package oauthclient_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
)

// peopleOf is a backend's People over r, each person's records kept apart
// (as a store keeps them by principal), sealed under one key.
func peopleOf(t *testing.T, r *acResource) (*oauthclient.People, map[string]*memRecords) {
	t.Helper()
	base := acVault(t, &memRecords{})
	var mu sync.Mutex
	recs := map[string]*memRecords{}
	env := &oauthclient.ClientEnv{RedirectURL: func() string { return "http://127.0.0.1:1/oauth/callback" }, Outbound: loopbackAllowed,
		Logger: slog.New(slog.DiscardHandler)}
	p := &oauthclient.People{Backend: "x", Resource: r.srv.URL + "/mcp", Env: env, Vault: func(owner string) oauthclient.Vault {
		mu.Lock()
		defer mu.Unlock()
		if recs[owner] == nil {
			recs[owner] = &memRecords{}
		}
		return base.ForOwner(owner, recs[owner])
	}}
	return p, recs
}

// signIn opens owner's link as their browser does, signing in as them,
// and completes the callback.
func signIn(t *testing.T, p *oauthclient.People, owner, as string) {
	t.Helper()
	link, err := p.Link(context.Background(), owner)
	if err != nil || link == "" {
		t.Fatalf("%s's link: %q, %v", owner, link, err)
	}
	if err := p.Callback(context.Background(), owner, follow(t, link+"&login_hint="+url.QueryEscape(as))); err != nil {
		t.Fatalf("%s's callback: %v", owner, err)
	}
}

func holds(p *oauthclient.People, owner string) bool {
	tok, ok := p.Holds(context.Background(), owner)
	return ok && tok != ""
}

// Each person's authorization is theirs alone: the link is begun without
// a challenge; the gateway's client, registered once, is the same for
// all; each person's requests, concurrent, carry the token they got by
// signing in themselves; a state made for one person completes no
// one else's; a record moved into another person's place does not open;
// and forgetting one person's leaves the other's.
func TestEachPersonsAuthorizationIsTheirsAlone(t *testing.T) {
	r := newACResource(t)
	p, recs := peopleOf(t, r)
	ctx := context.Background()
	if _, ok := p.Holds(ctx, "tok_alice"); ok {
		t.Fatal("alice holds a token before signing in")
	}
	link, err := p.Link(ctx, "tok_bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Callback(ctx, "tok_alice", follow(t, link+"&login_hint=bob")); err == nil {
		t.Fatal("bob's state completed alice's authorization")
	}
	signIn(t, p, "tok_alice", "alice")
	signIn(t, p, "tok_bob", "bob")
	if !holds(p, "tok_alice") || !holds(p, "tok_bob") {
		t.Fatal("a person who signed in holds no token")
	}
	if n := r.is.ClientCount(); n != 1 {
		t.Errorf("the gateway registered %d clients for two people, want one they share", n)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := map[string][]string{} // owner -> the subjects their requests carried
	for i := range 20 {
		owner, who := "tok_alice", "alice"
		if i%2 == 1 {
			owner, who = "tok_bob", "bob"
		}
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/mcp/"+who, nil)
			resp, err := p.For(owner).Wrap(http.DefaultTransport).RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("%s: %v %v", owner, err, resp)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	r.mu.Lock()
	for _, tok := range r.got {
		mu.Lock()
		sent[oauthtest.Claim(tok, "sub")] = append(sent[oauthtest.Claim(tok, "sub")], tok)
		mu.Unlock()
	}
	r.mu.Unlock()
	if len(sent["alice"]) != 10 || len(sent["bob"]) != 10 || len(sent) != 2 {
		t.Fatalf("the backend saw %d requests as alice, %d as bob, and %d subjects; want 10, 10, 2", len(sent["alice"]), len(sent["bob"]), len(sent))
	}

	// Alice's sealed record copied into carol's place opens for no one.
	recs["tok_carol"] = &memRecords{m: map[string][]byte{"x": recs["tok_alice"].m["x"]}}
	if holds(p, "tok_carol") {
		t.Error("alice's record, moved to carol, gave carol a token")
	}

	if had, err := p.Forget(ctx, "tok_alice"); !had || err != nil {
		t.Fatalf("alice forgets: %v %v", had, err)
	}
	if holds(p, "tok_alice") || !holds(p, "tok_bob") {
		t.Error("forgetting alice's authorization touched bob's, or left hers")
	}
	if revoked := r.is.RevokedTokens(); len(revoked) != 1 {
		t.Errorf("revoked at the authorization server: %d tokens, want alice's refresh token", len(revoked))
	}
}

// The backend's own connection carries the token of the person who last
// authorized it, and none before anyone has.
func TestTheBackendsOwnConnectionCarriesTheLatestPersonsToken(t *testing.T) {
	r := newACResource(t)
	p, _ := peopleOf(t, r)
	c := &http.Client{Transport: p.Wrap(http.DefaultTransport), Timeout: 10 * time.Second}
	status := func() int {
		resp, err := c.Get(r.srv.URL + "/mcp/catalogue")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(); got != http.StatusUnauthorized {
		t.Fatalf("before anyone authorized: %d, want 401", got)
	}
	signIn(t, p, "tok_alice", "alice")
	if got := status(); got != http.StatusOK {
		t.Fatalf("after alice authorized: %d, want 200", got)
	}
	r.mu.Lock()
	last := r.got[len(r.got)-1]
	r.mu.Unlock()
	if oauthtest.Claim(last, "sub") != "alice" {
		t.Errorf("the catalogue's request went as %q, want alice", oauthtest.Claim(last, "sub"))
	}
}

// A person's token refused for want of a scope makes a link for the scopes
// held and asked together, which their page then offers (Link), while the
// token they hold keeps serving what it may.
func TestAPersonIsAskedForMoreScopeFromTheirPage(t *testing.T) {
	r := newACResource(t)
	p, _ := peopleOf(t, r)
	ctx := context.Background()
	signIn(t, p, "tok_alice", "alice")
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/mcp/write", nil)
	resp, err := p.For("tok_alice").Wrap(http.DefaultTransport).RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("write with a read token: %v %v", err, resp)
	}
	resp.Body.Close()
	link, err := p.Link(ctx, "tok_alice")
	if err != nil || link == "" {
		t.Fatalf("the step-up link: %q %v", link, err)
	}
	u, _ := url.Parse(link)
	if got := u.Query().Get("scope"); got != "read write" {
		t.Errorf("the step-up link asks for %q, want \"read write\"", got)
	}
	signIn(t, p, "tok_alice", "alice")
	if tok, _ := p.Holds(ctx, "tok_alice"); !slices.Contains(tokenScopes(tok), "write") {
		t.Errorf("after the step-up, alice's token grants %v", tokenScopes(tok))
	}
}
