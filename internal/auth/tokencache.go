// tokencache.go keeps every service token in memory, indexed by hash, so
// that verifying a token on the hot path costs a SHA-256 and a map lookup
// and never a database round trip. The store stays the source of truth:
// creating and revoking write through to it first.

package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/tick"
)

// TokenSource is the part of store.Store that Tokens needs.
type TokenSource interface {
	Tokens(ctx context.Context) ([]store.Token, error)
	CreateToken(ctx context.Context, t store.Token) error
	RevokeToken(ctx context.Context, id string, at time.Time) error
}

// Tokens is the in-memory index of service tokens. It is safe for
// concurrent use.
//
// The index only grows, and a revocation in it is never undone. The store
// has no way to delete a token or to un-revoke one. A Refresh so merges
// what the store says into what this process knows, instead of replacing
// it. That keeps a Refresh that read the store just before a concurrent
// Create or Revoke from losing either.
type Tokens struct {
	src TokenSource
	log *slog.Logger

	mu     sync.RWMutex
	byHash map[string]store.Token // key: string(Hash)
	byID   map[string]string      // id → key in byHash
	// revoked holds, for tokens whose holders keep a stream open, the
	// channel closed when the token is revoked (Revoked).
	revoked map[string]chan struct{}

	// announce, when set, tells the other replicas of a token created or
	// revoked here (package cluster publishes it); see Announce.
	announce atomic.Pointer[func(id string, revokedAt time.Time)]
	// missed singles out the refresh an unknown secret asks for
	// (VerifyFresh): one at a time, at most one per missRefreshEvery.
	missed   sync.Mutex
	lastMiss time.Time
}

// missRefreshEvery bounds how often an unknown secret makes VerifyFresh
// read the store: a token created on another replica a moment ago works at
// once, and a flood of made-up secrets costs the store two reads a second.
const missRefreshEvery = 500 * time.Millisecond

// NewTokens returns an empty index over src; call Load before serving.
// A nil logger discards.
func NewTokens(src TokenSource, logger *slog.Logger) *Tokens {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Tokens{src: src, log: logger, byHash: map[string]store.Token{}, byID: map[string]string{},
		revoked: map[string]chan struct{}{}}
}

// Load reads every token from the source into the index.
func (t *Tokens) Load(ctx context.Context) error {
	all, err := t.src.Tokens(ctx)
	if err != nil {
		return fmt.Errorf("auth: load tokens: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rec := range all {
		t.merge(rec)
	}
	return nil
}

// Refresh reloads from the source, picking up tokens created and revoked
// by another process (the CLI, another gateway on the same store).
func (t *Tokens) Refresh(ctx context.Context) error { return t.Load(ctx) }

// RefreshEvery calls Refresh every d until ctx is cancelled. A failed
// refresh is logged and the index kept as it was.
func (t *Tokens) RefreshEvery(ctx context.Context, d time.Duration) {
	tick.Every(ctx, d, func(time.Time) bool {
		if err := t.Refresh(ctx); err != nil && ctx.Err() == nil {
			t.log.Warn("token refresh failed", "err", err)
		}
		return true
	})
}

// createAttempts bounds the fresh draws after a duplicate id.
const createAttempts = 3

// Create mints a token, saves it to the source, then indexes it. The
// secret is returned once; nothing keeps it.
func (t *Tokens) Create(ctx context.Context, name, role string, expires time.Time) (string, store.Token, error) {
	var (
		secret string
		rec    store.Token
		err    error
	)
	// A 60-bit id can collide, if rarely; the store says so with
	// ErrDuplicate, and a fresh draw is the answer, not a failure.
	for range createAttempts {
		if secret, rec, err = NewToken(name, role, expires, time.Now()); err != nil {
			return "", store.Token{}, err
		}
		if err = t.src.CreateToken(ctx, rec); !errors.Is(err, store.ErrDuplicate) {
			break
		}
	}
	if err != nil {
		return "", store.Token{}, fmt.Errorf("auth: save token %s: %w", rec.ID, err)
	}
	t.mu.Lock()
	t.merge(rec)
	t.mu.Unlock()
	t.tell(rec.ID, time.Time{})
	return secret, clone(rec), nil
}

// Announce has fn told of every token created (zero revokedAt) or revoked
// through this index, after the store has it: the replicas' way of hearing
// at once instead of at their next Refresh.
func (t *Tokens) Announce(fn func(id string, revokedAt time.Time)) { t.announce.Store(&fn) }

func (t *Tokens) tell(id string, revokedAt time.Time) {
	if fn := t.announce.Load(); fn != nil {
		(*fn)(id, revokedAt)
	}
}

// Heard applies what another replica announced. A revocation of a token
// known here takes effect at once, streams included; anything else (a
// token created elsewhere, a revocation of one not seen yet) is read from
// the store, which stays the source of truth.
func (t *Tokens) Heard(ctx context.Context, id string, revokedAt time.Time) error {
	if !revokedAt.IsZero() {
		t.mu.Lock()
		key, ok := t.byID[id]
		if ok {
			rec := t.byHash[key]
			if rec.RevokedAt.IsZero() {
				rec.RevokedAt = revokedAt
				t.byHash[key] = rec
				t.log.Info("token revoked elsewhere", "token_id", id)
			}
			t.signalRevoked(id)
		}
		t.mu.Unlock()
		if ok {
			return nil
		}
	}
	return t.Refresh(ctx)
}

// VerifyFresh is Verify, except that a secret this index does not know
// makes it read the store once (at most one such read per
// missRefreshEvery) and look again: a token just created through another
// replica works here at once.
func (t *Tokens) VerifyFresh(ctx context.Context, secret string, now time.Time) (store.Token, error) {
	rec, err := t.Verify(secret, now)
	if !errors.Is(err, ErrUnknownToken) || !looksLikeToken(secret) {
		return rec, err
	}
	t.missed.Lock()
	if time.Since(t.lastMiss) >= missRefreshEvery {
		t.lastMiss = time.Now()
		if rerr := t.Refresh(ctx); rerr != nil && ctx.Err() == nil {
			t.log.Warn("token refresh failed", "err", rerr)
		}
	}
	t.missed.Unlock()
	return t.Verify(secret, now)
}

// Revoke marks token id revoked in the source, then in the index: from the
// moment Revoke returns, this process refuses the token. An id the source
// does not know is store.ErrNotFound.
func (t *Tokens) Revoke(ctx context.Context, id string) error {
	at := time.Now().UTC()
	if err := t.src.RevokeToken(ctx, id, at); err != nil {
		return fmt.Errorf("auth: revoke token %s: %w", id, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if key, ok := t.byID[id]; ok {
		rec := t.byHash[key]
		if rec.RevokedAt.IsZero() {
			rec.RevokedAt = at
			t.byHash[key] = rec
		}
		t.signalRevoked(id)
	}
	t.tell(id, at)
	return nil
}

// Revoked returns a channel closed once token id is revoked, in this
// process or (seen at the next Refresh) in another: what holds a stream
// open for the token's holder ends it then. The channel of a token
// already revoked is closed.
func (t *Tokens) Revoked(id string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := t.revoked[id]
	if !ok {
		ch = make(chan struct{})
		t.revoked[id] = ch
		if key, known := t.byID[id]; known && !t.byHash[key].RevokedAt.IsZero() {
			close(ch)
		}
	}
	return ch
}

// signalRevoked closes id's channel, if someone watches it (Revoked looks
// at the record for a token nobody watched yet). The caller holds t.mu
// for writing.
func (t *Tokens) signalRevoked(id string) {
	if ch, ok := t.revoked[id]; ok {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

// List returns every indexed token, revoked and expired ones included,
// oldest first.
func (t *Tokens) List() []store.Token {
	t.mu.RLock()
	out := make([]store.Token, 0, len(t.byHash))
	for _, rec := range t.byHash {
		out = append(out, clone(rec))
	}
	t.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Token) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Verify finds the token whose secret this is and checks it may be used at
// now. On ErrTokenRevoked and ErrTokenExpired the record is returned too,
// so that the caller can log which token was refused. The record comes
// without its hash, which no caller needs: nothing is copied per call.
//
// The lookup is a map access keyed by SHA-256(secret), not a constant-time
// comparison, and that is safe. A timing difference could at most tell an
// attacker how much of a stored hash matches the hash of their guess. They
// cannot choose a guess whose hash has a given prefix (that is a preimage
// search), nor turn a known hash back into a token.
func (t *Tokens) Verify(secret string, now time.Time) (store.Token, error) {
	if !looksLikeToken(secret) {
		return store.Token{}, ErrUnknownToken
	}
	h := hashToken(secret)
	t.mu.RLock()
	rec, ok := t.byHash[string(h[:])]
	t.mu.RUnlock()
	rec.Hash = nil
	switch {
	case !ok:
		return store.Token{}, ErrUnknownToken
	case !rec.RevokedAt.IsZero():
		return rec, ErrTokenRevoked
	case !rec.Active(now):
		return rec, ErrTokenExpired
	}
	return rec, nil
}

// merge adds rec to the index, keeping a revocation already known here.
// The caller holds t.mu for writing.
func (t *Tokens) merge(rec store.Token) {
	key := string(rec.Hash)
	if old, ok := t.byHash[key]; ok && !old.RevokedAt.IsZero() {
		if rec.RevokedAt.IsZero() || old.RevokedAt.Before(rec.RevokedAt) {
			rec.RevokedAt = old.RevokedAt
		}
	} else if ok && !rec.RevokedAt.IsZero() {
		t.log.Info("token revoked elsewhere", "token_id", rec.ID)
		t.signalRevoked(rec.ID)
	}
	rec = clone(rec)
	t.byHash[key] = rec
	t.byID[rec.ID] = key
}

// clone copies rec's hash, so that no caller shares the index's bytes.
func clone(rec store.Token) store.Token {
	rec.Hash = slices.Clone(rec.Hash)
	return rec
}

// ByID is the indexed token with id, and whether there is one.
func (t *Tokens) ByID(id string) (store.Token, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	key, ok := t.byID[id]
	if !ok {
		return store.Token{}, false
	}
	return clone(t.byHash[key]), true
}
