// authserver_records.go is the contract of the authorization server's part
// of a store (store.OAuthStore). Codes redeem once, and a second redemption
// revokes the grant. Refresh tokens rotate, and the one replaced revokes
// the grant. Registration stops at its limit, and every field comes back.

package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
)

var oauthTests = []struct {
	name string
	test func(*testing.T, func(*testing.T) store.Store)
}{
	{"OAuthClientRoundTripsAndRegistrationStopsAtTheLimit", testOAuthClientLimit},
	{"OAuthRegistrationsAtOnceStopAtTheLimit", testOAuthClientLimitConcurrent},
	{"OAuthCodeRedeemsOnceAndAReuseRevokesItsGrant", testOAuthCodeOnce},
	{"OAuthCodeRedeemedConcurrentlyMakesOneGrant", testOAuthCodeConcurrent},
	{"OAuthCodePastItsExpiryIsRefused", testOAuthCodeExpired},
	{"OAuthRefreshRotatesAndTheReplacedOneRevokesTheGrant", testOAuthRefreshRotates},
	{"OAuthRefreshOfARevokedOrExpiredGrantIsRefused", testOAuthRefreshRefused},
	{"OAuthRefreshReplayedFromAnywhereInTheChainRevokesTheGrant", testOAuthRefreshChain},
	{"ConsoleSessionEndedIsSeenAndForgottenWhenItsCookieWouldHaveExpired", testConsoleSessionEnded},
	{"OAuthPruneDeletesWhatIsNeverUsedAgainAndKeepsTheRest", testOAuthPrune},
	{"BackendCredentialRoundTripsAndIsReplacedAndDeleted", testBackendCredentialRoundTrips},
	{"BackendCredentialUpdatesTakeTurns", testBackendCredentialUpdatesTakeTurns},
	{"TextNoStoreHoldsIsKeptAndLookedUpWithReplacements", testTextNoStoreHolds},
}

// Text from outside (a client's name, an id asked for, a subject) may
// hold a NUL or bytes that are not UTF-8. Every store writes it with
// U+FFFD in their place and looks a key up the same way: never a
// database error, on every store alike.
func testTextNoStoreHolds(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	odd := "a\x00b\xffc"
	if err := s.RegisterOAuthClient(ctx, store.OAuthClient{ID: "dcr_" + odd, Name: odd, RedirectURIs: []string{"http://127.0.0.1:6274/cb"}, CreatedAt: t0}, 10); err != nil {
		t.Fatalf("a client whose id and name hold a NUL and a stray byte: %v", err)
	}
	got, err := s.OAuthClient(ctx, "dcr_"+odd)
	if err != nil || got.Name != "a\uFFFDb\uFFFDc" {
		t.Fatalf("that client looked up: %+v, %v; want its name with U+FFFD", got, err)
	}
	if _, err := s.OAuthClient(ctx, "dcr_\x00"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a client id with a NUL never registered: %v, want ErrNotFound", err)
	}
	if _, err := s.OAuthGrant(ctx, "g\x00"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a grant id with a NUL: %v, want ErrNotFound", err)
	}
	if _, err := s.PersonalCredential(ctx, "ada\x00", "gh"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a principal with a NUL: %v, want ErrNotFound", err)
	}
	if ended, err := s.ConsoleSessionEnded(ctx, "sess\xff"); ended || err != nil {
		t.Errorf("a console session id with a stray byte: %v, %v; want not ended", ended, err)
	}
	if _, err := s.PinOf(ctx, "gh", "tool", "x\x00"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a pin named with a NUL: %v, want ErrNotFound", err)
	}
}

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 123, time.UTC)

func code(hash string) store.OAuthCode {
	return store.OAuthCode{Hash: []byte(hash), ClientID: "https://client.example/meta.json", RedirectURI: "http://127.0.0.1:5/cb",
		Challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", Resource: "http://127.0.0.1:9/mcp", Scope: "editor",
		Role: "editor", Subject: "ada", TokenID: "tok_1", CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}
}

func grant(id, refresh string) store.OAuthGrant {
	return store.OAuthGrant{ID: id, ClientID: "https://client.example/meta.json", ClientName: "Client <b>", Subject: "ada",
		TokenID: "tok_1", Role: "editor", Scope: "editor", Resource: "http://127.0.0.1:9/mcp",
		RefreshHash: []byte(refresh), CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}
}

func testOAuthClientLimit(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	want := store.OAuthClient{ID: "dcr_1", Name: "Inspector", RedirectURIs: []string{"http://127.0.0.1:6274/cb", "http://localhost/cb"}, CreatedAt: t0}
	if err := s.RegisterOAuthClient(ctx, want, 2); err != nil {
		t.Fatal(err)
	}
	got, err := s.OAuthClient(ctx, "dcr_1")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("client = %+v, %v; want %+v", got, err, want)
	}
	if err := s.RegisterOAuthClient(ctx, want, 2); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("the same id again: %v, want ErrDuplicate", err)
	}
	if err := s.RegisterOAuthClient(ctx, store.OAuthClient{ID: "dcr_2", RedirectURIs: []string{"x"}, CreatedAt: t0}, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterOAuthClient(ctx, store.OAuthClient{ID: "dcr_3", RedirectURIs: []string{"x"}, CreatedAt: t0}, 2); !errors.Is(err, store.ErrLimit) {
		t.Errorf("a third client under a limit of 2: %v, want ErrLimit", err)
	}
	if _, err := s.OAuthClient(ctx, "dcr_3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused client: %v, want ErrNotFound", err)
	}
}

// testOAuthClientLimitConcurrent: registrations that arrive together (as
// from several replicas) take turns at the limit, so that no more than
// the limit are stored.
func testOAuthClientLimitConcurrent(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	const limit, tries = 5, 24
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored, refused := 0, 0
	start := make(chan struct{})
	for i := range tries {
		wg.Go(func() {
			<-start
			err := s.RegisterOAuthClient(ctx, store.OAuthClient{ID: fmt.Sprintf("dcr_%d", i), RedirectURIs: []string{"x"}, CreatedAt: t0}, limit)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored++
			case errors.Is(err, store.ErrLimit):
				refused++
			default:
				t.Errorf("registration %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if stored != limit || refused != tries-limit {
		t.Errorf("%d registrations at once under a limit of %d: %d stored, %d refused", tries, limit, stored, refused)
	}
}

func testOAuthCodeOnce(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	c := code("c1")
	if err := s.CreateOAuthCode(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.OAuthCode(ctx, []byte("c1"))
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("code = %+v, %v; want %+v", got, err, c)
	}
	g := grant("grant_1", "r1")
	if err := s.RedeemOAuthCode(ctx, []byte("c1"), g, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	back, err := s.OAuthGrant(ctx, "grant_1")
	if err != nil || !reflect.DeepEqual(back, g) {
		t.Errorf("grant = %+v, %v; want %+v", back, err, g)
	}
	if err := s.RedeemOAuthCode(ctx, []byte("c1"), grant("grant_2", "r2"), t0.Add(2*time.Second)); !errors.Is(err, store.ErrReused) {
		t.Fatalf("the code again: %v, want ErrReused", err)
	}
	back, _ = s.OAuthGrant(ctx, "grant_1")
	if back.RevokedAt.IsZero() {
		t.Error("a reused code left the grant it made active")
	}
	if _, err := s.OAuthGrant(ctx, "grant_2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the reuse made a grant: %v", err)
	}
	if err := s.RedeemOAuthCode(ctx, []byte("nope"), grant("grant_3", "r3"), t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown code: %v, want ErrNotFound", err)
	}
}

func testOAuthCodeConcurrent(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateOAuthCode(ctx, code("c1")); err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.RedeemOAuthCode(ctx, []byte("c1"), grant(fmt.Sprint("grant_", i), fmt.Sprint("r", i)), t0.Add(time.Second))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrReused):
			t.Errorf("a racing redemption: %v, want ErrReused", err)
		}
	}
	if won != 1 {
		t.Errorf("%d redemptions won, want exactly one", won)
	}
}

func testOAuthCodeExpired(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateOAuthCode(ctx, code("c1")); err != nil {
		t.Fatal(err)
	}
	if err := s.RedeemOAuthCode(ctx, []byte("c1"), grant("grant_1", "r1"), t0.Add(time.Minute)); !errors.Is(err, store.ErrExpired) {
		t.Errorf("at its expiry: %v, want ErrExpired", err)
	}
}

// withGrant is a store holding grant_1, made by redeeming code c1, whose
// refresh token is r1.
func withGrant(t *testing.T, open func(*testing.T) store.Store) store.Store {
	t.Helper()
	ctx := context.Background()
	s := open(t)
	if err := s.CreateOAuthCode(ctx, code("c1")); err != nil {
		t.Fatal(err)
	}
	if err := s.RedeemOAuthCode(ctx, []byte("c1"), grant("grant_1", "r1"), t0); err != nil {
		t.Fatal(err)
	}
	return s
}

func testOAuthRefreshRotates(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := withGrant(t, open)
	at := t0.Add(time.Hour)
	g, err := s.RotateOAuthRefresh(ctx, []byte("r1"), []byte("r2"), at, at.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if string(g.RefreshHash) != "r2" || string(g.PreviousHash) != "r1" || !g.RefreshedAt.Equal(at) || !g.ExpiresAt.Equal(at.Add(24*time.Hour)) {
		t.Errorf("rotated grant %+v", g)
	}
	if byRefresh, err := s.OAuthGrantByRefresh(ctx, []byte("r2")); err != nil || byRefresh.ID != "grant_1" {
		t.Errorf("by the new refresh token: %+v, %v", byRefresh, err)
	}
	if g, err := s.RotateOAuthRefresh(ctx, []byte("r1"), []byte("r3"), at, at.Add(time.Hour)); !errors.Is(err, store.ErrReused) || g.ID != "grant_1" {
		t.Fatalf("the replaced refresh token: %v (grant %q), want ErrReused with the grant it revoked", err, g.ID)
	}
	if _, err := s.RotateOAuthRefresh(ctx, []byte("r2"), []byte("r4"), at, at.Add(time.Hour)); !errors.Is(err, store.ErrRevoked) {
		t.Errorf("the current one after a reuse: %v, want ErrRevoked (the grant is revoked)", err)
	}
	if _, err := s.RotateOAuthRefresh(ctx, []byte("never"), []byte("r5"), at, at.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown refresh token: %v, want ErrNotFound", err)
	}
}

// testOAuthRefreshChain: a refresh token spent three rotations ago,
// replayed, revokes the grant as the last one's replay does (RFC 9700
// §4.14.2): only one generation back was caught before.
func testOAuthRefreshChain(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := withGrant(t, open)
	at := t0.Add(time.Hour)
	for i := 1; i <= 4; i++ {
		if _, err := s.RotateOAuthRefresh(ctx, []byte(fmt.Sprintf("r%d", i)), []byte(fmt.Sprintf("r%d", i+1)), at, at.Add(24*time.Hour)); err != nil {
			t.Fatalf("rotation %d: %v", i, err)
		}
	}
	if g, err := s.RotateOAuthRefresh(ctx, []byte("r1"), []byte("x"), at, at.Add(time.Hour)); !errors.Is(err, store.ErrReused) || g.ID != "grant_1" {
		t.Fatalf("the first refresh token, replayed after four rotations: %v (grant %q), want ErrReused", err, g.ID)
	}
	if _, err := s.RotateOAuthRefresh(ctx, []byte("r5"), []byte("r6"), at, at.Add(time.Hour)); !errors.Is(err, store.ErrRevoked) {
		t.Errorf("the current token after the replay: %v, want ErrRevoked", err)
	}
}

func testOAuthRefreshRefused(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	for i, h := range []string{"c1", "c2"} {
		if err := s.CreateOAuthCode(ctx, code(h)); err != nil {
			t.Fatal(err)
		}
		if err := s.RedeemOAuthCode(ctx, []byte(h), grant(fmt.Sprint("grant_", i), fmt.Sprint("r", i)), t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeOAuthGrant(ctx, "grant_0", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeOAuthGrant(ctx, "grant_0", t0.Add(time.Hour)); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	if g, _ := s.OAuthGrant(ctx, "grant_0"); !g.RevokedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("revoked at %v, want the first time", g.RevokedAt)
	}
	if err := s.RevokeOAuthGrant(ctx, "grant_none", t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking an unknown grant: %v, want ErrNotFound", err)
	}
	if _, err := s.RotateOAuthRefresh(ctx, []byte("r0"), []byte("x"), t0.Add(time.Hour), t0.Add(48*time.Hour)); !errors.Is(err, store.ErrRevoked) {
		t.Errorf("a revoked grant's refresh: %v, want ErrRevoked", err)
	}
	if _, err := s.RotateOAuthRefresh(ctx, []byte("r1"), []byte("y"), t0.Add(25*time.Hour), t0.Add(48*time.Hour)); !errors.Is(err, store.ErrExpired) {
		t.Errorf("an expired grant's refresh: %v, want ErrExpired", err)
	}
	all, err := s.OAuthGrants(ctx)
	if err != nil || len(all) != 2 || all[0].ID != "grant_0" || all[1].ID != "grant_1" {
		t.Errorf("grants = %+v, %v", all, err)
	}
}

// testBackendCredentialRoundTrips: a sealed record comes back byte for
// byte, a second put replaces it, a delete forgets it, and an unknown
// backend is ErrNotFound.
func testBackendCredentialRoundTrips(t *testing.T, open func(*testing.T) store.Store) {
	s, ctx := open(t), context.Background()
	if _, err := s.BackendCredential(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown backend: %v, want ErrNotFound", err)
	}
	first, second := []byte{0, 1, 2, 0xff, 'x'}, []byte("second record")
	for _, want := range [][]byte{first, second} {
		if err := s.PutBackendCredential(ctx, "x", want, t0); err != nil {
			t.Fatal(err)
		}
		got, err := s.BackendCredential(ctx, "x")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("record: %q, %v; want %q", got, err, want)
		}
	}
	if err := s.PutBackendCredential(ctx, "y", first, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBackendCredential(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBackendCredential(ctx, "x"); err != nil {
		t.Fatalf("a second delete: %v", err)
	}
	if _, err := s.BackendCredential(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted backend: %v, want ErrNotFound", err)
	}
	if got, err := s.BackendCredential(ctx, "y"); err != nil || !reflect.DeepEqual(got, first) {
		t.Fatalf("the other backend's record: %q, %v", got, err)
	}
}

// testBackendCredentialUpdatesTakeTurns: concurrent updates of one record
// each see the one before (none is lost), nil from fn changes nothing,
// and an error from fn leaves the record as it was.
func testBackendCredentialUpdatesTakeTurns(t *testing.T, open func(*testing.T) store.Store) {
	s, ctx := open(t), context.Background()
	sealedUpdatesTakeTurns(t, func(fn func([]byte) ([]byte, error)) error { return s.UpdateBackendCredential(ctx, "x", t0, fn) },
		func() ([]byte, error) { return s.BackendCredential(ctx, "x") })
}

// sealedUpdatesTakeTurns is the rule of every locked update of a sealed
// record (update), read back by read.
func sealedUpdatesTakeTurns(t *testing.T, update func(fn func([]byte) ([]byte, error)) error, read func() ([]byte, error)) {
	t.Helper()
	if err := update(func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if got, err := read(); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a no-op update of no record: %q, %v; want none (ErrNotFound)", got, err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 10 {
				if err := update(func(old []byte) ([]byte, error) {
					n := 0
					if old != nil {
						fmt.Sscan(string(old), &n)
					}
					return []byte(fmt.Sprint(n + 1)), nil
				}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got, err := read(); err != nil || string(got) != "40" {
		t.Fatalf("after 40 updates in 4 goroutines: %q, %v", got, err)
	}
	if err := update(func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := update(func([]byte) ([]byte, error) { return []byte("lost"), boom }); !errors.Is(err, boom) {
		t.Fatalf("an update whose fn fails: %v, want its error", err)
	}
	if got, _ := read(); string(got) != "40" {
		t.Errorf("after a no-op and a failed update: %q, want 40", got)
	}
}

// testOAuthPrune: a client that never completed a sign-in is deleted after
// IdleClient, and one with a grant or a code is kept. Codes go Code past
// their expiry, and grants Grant past their refresh token's expiry or their
// revocation. The limit of registrations counts what is left.
func testOAuthPrune(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	for _, id := range []string{"idle", "granted", "coded", "fresh"} {
		created := t0
		if id == "fresh" {
			created = t0.Add(47 * time.Hour)
		}
		if err := s.RegisterOAuthClient(ctx, store.OAuthClient{ID: id, RedirectURIs: []string{"x"}, CreatedAt: created}, 4); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RegisterOAuthClient(ctx, store.OAuthClient{ID: "fifth", RedirectURIs: []string{"x"}, CreatedAt: t0}, 4); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("a fifth client under a limit of 4: %v", err)
	}
	c := code("c-kept")
	c.ClientID, c.ExpiresAt = "coded", t0.Add(48*time.Hour)
	old := code("c-old")
	old.ClientID = "coded"
	for _, cc := range []store.OAuthCode{c, old} {
		if err := s.CreateOAuthCode(ctx, cc); err != nil {
			t.Fatal(err)
		}
	}
	live, expired, revoked := grant("g-live", "r-live"), grant("g-expired", "r-expired"), grant("g-revoked", "r-revoked")
	live.ClientID, live.ExpiresAt = "granted", t0.Add(30*24*time.Hour)
	expired.ClientID, revoked.ClientID, revoked.ExpiresAt = "granted", "granted", t0.Add(30*24*time.Hour)
	for i, g := range []store.OAuthGrant{live, expired, revoked} {
		cd := code(fmt.Sprintf("g%d", i))
		cd.ClientID = "granted"
		if err := s.CreateOAuthCode(ctx, cd); err != nil {
			t.Fatal(err)
		}
		if err := s.RedeemOAuthCode(ctx, cd.Hash, g, t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeOAuthGrant(ctx, "g-revoked", t0); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(48 * time.Hour)
	n, err := s.PruneOAuth(ctx, now, store.OAuthPrune{IdleClient: 24 * time.Hour, Code: time.Hour, Grant: 12 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if n != (store.OAuthPruned{Clients: 1, Codes: 4, Grants: 2}) {
		t.Errorf("pruned %+v, want 1 client (idle), 4 codes (all but the one not yet expired), 2 grants (expired, revoked)", n)
	}
	for id, want := range map[string]error{"idle": store.ErrNotFound, "granted": nil, "coded": nil, "fresh": nil} {
		if _, err := s.OAuthClient(ctx, id); !errors.Is(err, want) {
			t.Errorf("client %s after the prune: %v, want %v", id, err, want)
		}
	}
	for id, want := range map[string]error{"g-live": nil, "g-expired": store.ErrNotFound, "g-revoked": store.ErrNotFound} {
		if _, err := s.OAuthGrant(ctx, id); !errors.Is(err, want) {
			t.Errorf("grant %s after the prune: %v, want %v", id, err, want)
		}
	}
	if _, err := s.OAuthCode(ctx, []byte("c-kept")); err != nil {
		t.Errorf("the code not yet expired: %v", err)
	}
	if err := s.RegisterOAuthClient(ctx, store.OAuthClient{ID: "fifth", RedirectURIs: []string{"x"}, CreatedAt: now}, 4); err != nil {
		t.Errorf("a registration after the prune: %v", err)
	}
}

// testConsoleSessionEnded: a logout is seen by every reader of the store
// (every replica), and is forgotten once the cookie it ended would have
// expired by itself.
func testConsoleSessionEnded(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	if err := s.EndConsoleSession(ctx, "sess-a", t0.Add(time.Hour), t0); err != nil {
		t.Fatal(err)
	}
	if err := s.EndConsoleSession(ctx, "sess-a", t0.Add(time.Hour), t0); err != nil {
		t.Errorf("ending a session twice: %v", err)
	}
	for id, want := range map[string]bool{"sess-a": true, "sess-b": false} {
		if got, err := s.ConsoleSessionEnded(ctx, id); err != nil || got != want {
			t.Errorf("ConsoleSessionEnded(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	if err := s.EndConsoleSession(ctx, "sess-b", t0.Add(3*time.Hour), t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ConsoleSessionEnded(ctx, "sess-a"); got {
		t.Error("a logout whose cookie has expired is still kept")
	}
}
