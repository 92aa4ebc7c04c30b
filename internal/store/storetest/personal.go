package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
)

// testPersonalCredentialsAreKeyedByPrincipalAndBackend: a sealed value
// comes back byte for byte for its principal and backend only, a second
// put replaces it, a delete forgets it (a second is ErrNotFound), and a
// list names principals and backends, never values.
func testPersonalCredentialsAreKeyedByPrincipalAndBackend(t *testing.T, open func(*testing.T) store.Store) {
	s, ctx := open(t), context.Background()
	if _, err := s.PersonalCredential(ctx, "tok_a", "tickets"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("none stored: %v, want ErrNotFound", err)
	}
	put := func(principal, backend string, sealed []byte, at time.Time) {
		t.Helper()
		if err := s.PutPersonalCredential(ctx, principal, backend, sealed, at); err != nil {
			t.Fatal(err)
		}
	}
	t1 := t0.Add(time.Hour)
	put("tok_a", "tickets", []byte{0, 1, 0xff}, t0)
	put("tok_a", "tickets", []byte("replaced"), t1)
	put("tok_a", "mail", []byte("a's mail"), t0)
	put("subject:https://idp\x01bob", "tickets", []byte("bob's"), t0)
	for _, c := range []struct {
		principal, backend string
		want               []byte
	}{
		{"tok_a", "tickets", []byte("replaced")},
		{"tok_a", "mail", []byte("a's mail")},
		{"subject:https://idp\x01bob", "tickets", []byte("bob's")},
		{"tok_b", "tickets", nil},
		{"subject:https://idp\x01bob", "mail", nil},
	} {
		got, err := s.PersonalCredential(ctx, c.principal, c.backend)
		if c.want == nil {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%q %s: %q, %v; want ErrNotFound", c.principal, c.backend, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q %s: %q, %v; want %q", c.principal, c.backend, got, err, c.want)
		}
	}
	all, err := s.PersonalCredentials(ctx, "")
	want := []store.PersonalCredential{{Principal: "subject:https://idp\x01bob", Backend: "tickets", UpdatedAt: t0}, {Principal: "tok_a", Backend: "mail", UpdatedAt: t0}, {Principal: "tok_a", Backend: "tickets", UpdatedAt: t1}}
	if err != nil || !reflect.DeepEqual(all, want) {
		t.Errorf("everyone's: %+v, %v; want %+v", all, err, want)
	}
	mine, err := s.PersonalCredentials(ctx, "tok_a")
	if err != nil || !reflect.DeepEqual(mine, want[1:]) {
		t.Errorf("tok_a's: %+v, %v; want %+v", mine, err, want[1:])
	}
	if err := s.DeletePersonalCredential(ctx, "tok_a", "tickets"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePersonalCredential(ctx, "tok_a", "tickets"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second delete: %v, want ErrNotFound", err)
	}
	if _, err := s.PersonalCredential(ctx, "tok_a", "tickets"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted: %v, want ErrNotFound", err)
	}
	if got, err := s.PersonalCredential(ctx, "subject:https://idp\x01bob", "tickets"); err != nil || string(got) != "bob's" {
		t.Errorf("another principal's, after the delete: %q, %v", got, err)
	}
}

// testPersonalCredentialUpdatesTakeTurns: a person's record updated
// concurrently loses no update, as a backend's does; another person's and
// another backend's are untouched.
func testPersonalCredentialUpdatesTakeTurns(t *testing.T, open func(*testing.T) store.Store) {
	s, ctx := open(t), context.Background()
	if err := s.PutPersonalCredential(ctx, "tok_b", "tickets", []byte("b's"), t0); err != nil {
		t.Fatal(err)
	}
	sealedUpdatesTakeTurns(t, func(fn func([]byte) ([]byte, error)) error {
		return s.UpdatePersonalCredential(ctx, "tok_a", "tickets", t0, fn)
	}, func() ([]byte, error) { return s.PersonalCredential(ctx, "tok_a", "tickets") })
	if got, err := s.PersonalCredential(ctx, "tok_b", "tickets"); err != nil || string(got) != "b's" {
		t.Errorf("another person's: %q, %v", got, err)
	}
	if _, err := s.PersonalCredential(ctx, "tok_a", "mail"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another backend's: %v, want none", err)
	}
}
