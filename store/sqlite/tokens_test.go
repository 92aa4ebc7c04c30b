// tokens_test.go pins the token rules of store.Store: every field comes
// back exactly, ids and hashes are unique, and revocation is of a known
// token and happens once.

package sqlite_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/store"
)

func token(id string, hash []byte) store.Token {
	return store.Token{ID: id, Name: "ci " + id, Role: "editor", Hash: hash,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
}

func TestTokenRoundTripsEveryField(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	want := []store.Token{
		{ID: "tok_full", Name: "deploy bot", Role: "admin", Hash: []byte{0, 1, 2, 0xff},
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC),
			ExpiresAt: time.Date(2027, 1, 2, 3, 4, 5, 987654321, time.UTC),
			RevokedAt: time.Date(2026, 6, 1, 0, 0, 0, 1, time.UTC)},
		{ID: "tok_zero_times", Name: "", Role: "viewer", Hash: []byte("h2"),
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 123456790, time.UTC)},
	}
	for _, tok := range want {
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestTokenTimesComeBackInUTC(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	zone := time.FixedZone("UTC+5", 5*3600)
	tok := token("tok_zone", []byte("h"))
	tok.CreatedAt = time.Date(2026, 3, 1, 12, 0, 0, 42, zone)
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	got, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := got[0].CreatedAt; !c.Equal(tok.CreatedAt) || c.Location() != time.UTC {
		t.Fatalf("created %v, want %v in UTC", c, tok.CreatedAt)
	}
}

func TestTokensOldestFirst(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"tok_c", "tok_a", "tok_b"} {
		tok := token(id, []byte(id))
		tok.CreatedAt = base.Add(time.Duration(2-i) * time.Hour) // c newest, b oldest
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tok := range got {
		ids = append(ids, tok.ID)
	}
	if !reflect.DeepEqual(ids, []string{"tok_b", "tok_a", "tok_c"}) {
		t.Fatalf("order %v", ids)
	}
}

func TestTokenIDAndHashAreUnique(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	if err := s.CreateToken(ctx, token("tok_1", []byte("hash-1"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tok  store.Token
	}{
		{"same id", token("tok_1", []byte("hash-2"))},
		{"same hash", token("tok_2", []byte("hash-1"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CreateToken(ctx, tt.tok)
			if !errors.Is(err, store.ErrDuplicate) {
				t.Fatalf("error %v, want store.ErrDuplicate", err)
			}
		})
	}
	got, err := s.Tokens(ctx)
	if err != nil || len(got) != 1 || got[0].Name != "ci tok_1" {
		t.Fatalf("tokens %+v, %v: a refused token changed the table", got, err)
	}
}

func TestRevokeUnknownTokenIsNotFound(t *testing.T) {
	s := openStore(t, dbPath(t))
	err := s.RevokeToken(context.Background(), "tok_nope", time.Now())
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("error %v, want store.ErrNotFound", err)
	}
}

func TestRevokeTwiceKeepsTheFirstTime(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	if err := s.CreateToken(ctx, token("tok_r", []byte("r"))); err != nil {
		t.Fatal(err)
	}
	first := time.Date(2026, 2, 1, 0, 0, 0, 7, time.UTC)
	for _, at := range []time.Time{first, first.Add(time.Hour)} {
		if err := s.RevokeToken(ctx, "tok_r", at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].RevokedAt.Equal(first) {
		t.Fatalf("revoked at %v, want the first revocation %v", got[0].RevokedAt, first)
	}
	if got[0].Active(first) {
		t.Fatal("a revoked token is active")
	}
}
