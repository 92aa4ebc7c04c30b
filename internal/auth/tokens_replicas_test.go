// tokens_replicas_test.go pins what makes two indexes over one store (two
// replicas) agree at once: each announces what it created and revoked, the
// other applies what it hears (a revocation at once, streams included;
// anything it cannot apply from the store), and a secret one index does
// not know yet is looked up in the store before it is refused — at most
// twice a second, however many unknown secrets arrive.

package auth_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
)

type announcement struct {
	id        string
	revokedAt time.Time
}

func TestReplicasAnnounceCreationsAndRevocations(t *testing.T) {
	ctx := context.Background()
	src := &fakeSource{}
	a, b := auth.NewTokens(src, nil), auth.NewTokens(src, nil)
	for _, x := range []*auth.Tokens{a, b} {
		if err := x.Load(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var heard []announcement
	a.Announce(func(id string, at time.Time) {
		mu.Lock()
		heard = append(heard, announcement{id, at})
		mu.Unlock()
	})
	secret, rec := create(t, a, "ci", time.Time{})
	if len(heard) != 1 || heard[0].id != rec.ID || !heard[0].revokedAt.IsZero() {
		t.Fatalf("after Create: announced %v", heard)
	}
	if err := b.Heard(ctx, rec.ID, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Verify(secret, time.Now()); err != nil {
		t.Fatalf("the other replica after hearing of the token: %v", err)
	}
	stream := b.Revoked(rec.ID)
	if err := a.Revoke(ctx, rec.ID); err != nil {
		t.Fatal(err)
	}
	if len(heard) != 2 || heard[1].id != rec.ID || heard[1].revokedAt.IsZero() {
		t.Fatalf("after Revoke: announced %v", heard)
	}
	// b hears before any refresh: the store is not read again.
	src.mu.Lock()
	loads := src.loads
	src.mu.Unlock()
	if err := b.Heard(ctx, heard[1].id, heard[1].revokedAt); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Verify(secret, time.Now()); !errors.Is(err, auth.ErrTokenRevoked) {
		t.Errorf("the other replica after hearing of the revocation: %v", err)
	}
	select {
	case <-stream:
	default:
		t.Error("a stream held open on the other replica is not told of the revocation")
	}
	src.mu.Lock()
	if src.loads != loads {
		t.Errorf("hearing of a known token's revocation read the store (%d loads, was %d)", src.loads, loads)
	}
	src.mu.Unlock()
}

func TestVerifyFreshFindsATokenCreatedElsewhere(t *testing.T) {
	ctx := context.Background()
	src := &fakeSource{}
	a, b := auth.NewTokens(src, nil), auth.NewTokens(src, nil)
	if err := b.Load(ctx); err != nil {
		t.Fatal(err)
	}
	secret, _ := create(t, a, "new", time.Time{})
	if _, err := b.Verify(secret, time.Now()); !errors.Is(err, auth.ErrUnknownToken) {
		t.Fatalf("Verify without a refresh: %v", err)
	}
	if _, err := b.VerifyFresh(ctx, secret, time.Now()); err != nil {
		t.Fatalf("VerifyFresh: %v", err)
	}
}

func TestVerifyFreshBoundsStoreReadsForUnknownSecrets(t *testing.T) {
	ctx := context.Background()
	tokens, src := loaded(t)
	src.mu.Lock()
	before := src.loads
	src.mu.Unlock()
	for range 50 {
		unknown, _, _ := auth.NewToken("nobody", "viewer", time.Time{}, time.Now())
		if _, err := tokens.VerifyFresh(ctx, unknown, time.Now()); !errors.Is(err, auth.ErrUnknownToken) {
			t.Fatal(err)
		}
	}
	// 50 made-up secrets within a moment: one read (two if the moment
	// straddled the bound).
	src.mu.Lock()
	defer src.mu.Unlock()
	if n := src.loads - before; n < 1 || n > 2 {
		t.Errorf("%d store reads for 50 unknown secrets", n)
	}
	// Something that is not a token at all never reaches the store.
	if _, err := tokens.VerifyFresh(ctx, "not-a-token", time.Now()); !errors.Is(err, auth.ErrUnknownToken) {
		t.Error(err)
	}
}
