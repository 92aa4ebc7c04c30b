// tokencache_test.go pins the token index: verification without a round
// trip, revocation at once, refreshes that pick up other processes' work
// without undoing this one's, and all of it under concurrent use.

package auth_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/store"
)

// loaded returns an index over a fresh source, loaded.
func loaded(t *testing.T) (*auth.Tokens, *fakeSource) {
	t.Helper()
	src := &fakeSource{}
	tokens := auth.NewTokens(src, nil)
	if err := tokens.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tokens, src
}

func create(t *testing.T, tokens *auth.Tokens, name string, expires time.Time) (string, store.Token) {
	t.Helper()
	secret, rec, err := tokens.Create(context.Background(), name, "editor", expires)
	if err != nil {
		t.Fatal(err)
	}
	return secret, rec
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	tokens, _ := loaded(t)
	// Far in the future, so Create (which uses the real clock) accepts it;
	// every Verify below names its own fixed now.
	expiry := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	good, goodRec := create(t, tokens, "good", time.Time{})
	revoked, revokedRec := create(t, tokens, "revoked", time.Time{})
	expiring, expiringRec := create(t, tokens, "expiring", expiry)
	unknown, _, _ := auth.NewToken("never-stored", "editor", time.Time{}, now)

	if _, err := tokens.Verify(revoked, now); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	if err := tokens.Revoke(ctx, revokedRec.ID); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		rule   string
		secret string
		at     time.Time
		want   error
		wantID string
	}{
		{"a stored token is accepted", good, now, nil, goodRec.ID},
		{"a well-formed token never stored is unknown", unknown, now, auth.ErrUnknownToken, ""},
		{"an empty string is unknown", "", now, auth.ErrUnknownToken, ""},
		{"a token cut short is unknown", good[:len(good)-1], now, auth.ErrUnknownToken, ""},
		{"a token without its prefix is unknown", "xxxx_" + good[5:], now, auth.ErrUnknownToken, ""},
		{"a revoked token is refused at once", revoked, now, auth.ErrTokenRevoked, revokedRec.ID},
		{"a token is accepted until its expiry", expiring, expiry.Add(-time.Nanosecond), nil, expiringRec.ID},
		{"a token is refused at its expiry", expiring, expiry, auth.ErrTokenExpired, expiringRec.ID},
		{"a token is refused after its expiry", expiring, expiry.Add(time.Hour), auth.ErrTokenExpired, expiringRec.ID},
	} {
		t.Run(c.rule, func(t *testing.T) {
			rec, err := tokens.Verify(c.secret, c.at)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if rec.ID != c.wantID {
				t.Fatalf("record id %q, want %q", rec.ID, c.wantID)
			}
		})
	}
}

func TestVerifyCostsNoRoundTrip(t *testing.T) {
	tokens, src := loaded(t)
	secret, _ := create(t, tokens, "hot", time.Time{})
	for range 1000 {
		if _, err := tokens.Verify(secret, now); err != nil {
			t.Fatal(err)
		}
	}
	if n := src.loadCount(); n != 1 {
		t.Fatalf("%d reads of the source, want the 1 of Load", n)
	}
}

func TestLoadIndexesWhatTheSourceHolds(t *testing.T) {
	src := &fakeSource{}
	secret, rec, _ := auth.NewToken("from-cli", "viewer", time.Time{}, now)
	src.add(rec)
	tokens := auth.NewTokens(src, nil)
	if _, err := tokens.Verify(secret, now); !errors.Is(err, auth.ErrUnknownToken) {
		t.Fatalf("before Load: %v", err)
	}
	if err := tokens.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := tokens.Verify(secret, now); err != nil || got.ID != rec.ID {
		t.Fatalf("after Load: %+v, %v", got, err)
	}
}

func TestLoadReportsASourceFailure(t *testing.T) {
	src := &fakeSource{failErr: errors.New("disk on fire")}
	if err := auth.NewTokens(src, nil).Load(context.Background()); err == nil {
		t.Fatal("no error")
	}
}

func TestRefreshPicksUpWorkOfAnotherProcess(t *testing.T) {
	ctx := context.Background()
	tokens, src := loaded(t)
	secret, rec := create(t, tokens, "ci", time.Time{})
	otherSecret, otherRec, _ := auth.NewToken("made-by-cli", "viewer", time.Time{}, now)

	// The CLI revokes one token and creates another, in the store directly.
	if err := src.RevokeToken(ctx, rec.ID, now); err != nil {
		t.Fatal(err)
	}
	src.add(otherRec)

	// Until a refresh, this process goes by its index (no round trip).
	if _, err := tokens.Verify(secret, now); err != nil {
		t.Fatalf("before refresh: %v", err)
	}
	if err := tokens.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Verify(secret, now); !errors.Is(err, auth.ErrTokenRevoked) {
		t.Fatalf("revoked elsewhere, after refresh: %v", err)
	}
	if _, err := tokens.Verify(otherSecret, now); err != nil {
		t.Fatalf("created elsewhere, after refresh: %v", err)
	}
}

// A refresh that read the store before a concurrent Revoke or Create
// landed must not undo them.
func TestRefreshNeverUndoesARevocationOrACreation(t *testing.T) {
	ctx := context.Background()
	tokens, src := loaded(t)
	secret, rec := create(t, tokens, "ci", time.Time{})
	src.mu.Lock()
	src.stale = cloneAll(src.tokens) // a read taken before what follows
	src.mu.Unlock()
	if err := tokens.Revoke(ctx, rec.ID); err != nil {
		t.Fatal(err)
	}
	fresh, _ := create(t, tokens, "new", time.Time{})
	if err := tokens.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Verify(secret, now); !errors.Is(err, auth.ErrTokenRevoked) {
		t.Fatalf("revocation undone by a stale refresh: %v", err)
	}
	if _, err := tokens.Verify(fresh, now); err != nil {
		t.Fatalf("creation undone by a stale refresh: %v", err)
	}
}

func TestRevokeUnknownIDIsNotFound(t *testing.T) {
	tokens, _ := loaded(t)
	if err := tokens.Revoke(context.Background(), "tok_nosuchtoken"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err %v, want store.ErrNotFound", err)
	}
}

// If the store cannot record a revocation, the caller is told, and the
// index does not pretend otherwise: the next process start would undo it.
func TestRevokeThatFailsToPersistIsReported(t *testing.T) {
	tokens, src := loaded(t)
	secret, rec := create(t, tokens, "ci", time.Time{})
	src.mu.Lock()
	src.failErr = errors.New("read-only")
	src.mu.Unlock()
	if err := tokens.Revoke(context.Background(), rec.ID); err == nil {
		t.Fatal("no error")
	}
	if _, err := tokens.Verify(secret, now); err != nil {
		t.Fatalf("index changed although the store did not: %v", err)
	}
}

func TestCreateThatFailsToPersistIndexesNothing(t *testing.T) {
	src := &fakeSource{failErr: errors.New("read-only")}
	tokens := auth.NewTokens(src, nil)
	if _, _, err := tokens.Create(context.Background(), "ci", "viewer", time.Time{}); err == nil {
		t.Fatal("no error")
	}
	if n := len(tokens.List()); n != 0 {
		t.Fatalf("%d tokens indexed", n)
	}
}

// A duplicate id is the store's way to say "draw again", not a failure.
func TestCreateDrawsAgainAfterADuplicate(t *testing.T) {
	src := &fakeSource{duplicates: 2}
	tokens := auth.NewTokens(src, nil)
	secret, rec, err := tokens.Create(context.Background(), "ci", "viewer", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustVerify(t, tokens, secret); got.ID != rec.ID {
		t.Fatalf("verified as %s, created as %s", got.ID, rec.ID)
	}
	src.duplicates = 3
	if _, _, err := tokens.Create(context.Background(), "ci", "viewer", time.Time{}); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("after 3 duplicates: %v, want store.ErrDuplicate", err)
	}
}

func TestListIsOldestFirstAndCopies(t *testing.T) {
	ctx := context.Background()
	src := &fakeSource{}
	var ids []string
	for i, name := range []string{"c", "a", "b"} {
		_, rec, _ := auth.NewToken(name, "viewer", time.Time{}, now.Add(time.Duration(i)*time.Minute))
		src.add(rec)
		ids = append(ids, rec.ID)
	}
	tokens := auth.NewTokens(src, nil)
	if err := tokens.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Revoke(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	list := tokens.List()
	if len(list) != 3 {
		t.Fatalf("%d tokens", len(list))
	}
	for i, rec := range list {
		if rec.ID != ids[i] {
			t.Fatalf("position %d: %s, want %s", i, rec.ID, ids[i])
		}
	}
	if list[1].RevokedAt.IsZero() {
		t.Fatal("revoked token listed as active")
	}
	list[0].Hash[0] ^= 0xff
	if tokens.List()[0].Hash[0] == list[0].Hash[0] {
		t.Fatal("List shares the index's bytes")
	}
}

// Every Verify after Revoke returns sees the revocation, while other
// goroutines verify, create and revoke.
func TestConcurrentVerifyAndRevoke(t *testing.T) {
	ctx := context.Background()
	tokens, _ := loaded(t)
	const n = 32
	secrets := make([]string, n)
	ids := make([]string, n)
	for i := range n {
		secrets[i], _ = create(t, tokens, "t", time.Time{})
		ids[i] = mustVerify(t, tokens, secrets[i]).ID
	}

	stop := make(chan struct{})
	var verifiers sync.WaitGroup
	errs := make(chan error, 3*n+8)
	for range 8 {
		verifiers.Go(func() {
			seenRevoked := make([]bool, n)
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i, s := range secrets {
					_, err := tokens.Verify(s, now)
					switch {
					case errors.Is(err, auth.ErrTokenRevoked):
						seenRevoked[i] = true
					case err != nil:
						errs <- err
						return
					case seenRevoked[i]:
						errs <- errors.New("a revoked token was accepted again")
						return
					}
				}
			}
		})
	}
	var revokers sync.WaitGroup
	for i := range n {
		revokers.Go(func() {
			if err := tokens.Revoke(ctx, ids[i]); err != nil {
				errs <- err
				return
			}
			if _, err := tokens.Verify(secrets[i], now); !errors.Is(err, auth.ErrTokenRevoked) {
				errs <- errors.New("accepted after Revoke returned")
			}
			if _, _, err := tokens.Create(ctx, "more", "viewer", time.Time{}); err != nil {
				errs <- err
			}
		})
	}
	revokers.Wait()
	close(stop)
	verifiers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, s := range secrets {
		if _, err := tokens.Verify(s, now); !errors.Is(err, auth.ErrTokenRevoked) {
			t.Fatalf("after all revocations: %v", err)
		}
	}
}

func TestRefreshEveryRefreshesUntilCancelled(t *testing.T) {
	src := &fakeSource{loaded: make(chan struct{})}
	tokens := auth.NewTokens(src, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tokens.RefreshEvery(ctx, time.Millisecond)
	}()
	for range 2 {
		select {
		case <-src.loaded:
		case <-time.After(waitLimit):
			t.Fatal("no refresh")
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("RefreshEvery did not return when cancelled")
	}
}

func mustVerify(t *testing.T, tokens *auth.Tokens, secret string) store.Token {
	t.Helper()
	rec, err := tokens.Verify(secret, now)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
