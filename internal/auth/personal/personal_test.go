package personal_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/personal"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
)

func open(t *testing.T) (*personal.Credentials, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c, err := personal.New(st, bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// Each person gets their own value for each backend and nobody else's;
// the store holds it sealed; a sealed value copied into another person's
// place does not open, and says so without quoting it.
func TestAPersonsCredentialIsTheirsAlone(t *testing.T) {
	ctx := context.Background()
	c, st := open(t)
	for _, s := range [][3]string{{"tok_a", "tickets", "sk-alice-1"}, {"tok_b", "tickets", "sk-bob-1"}, {"tok_a", "mail", "sk-alice-mail"}} {
		if err := c.Set(ctx, s[0], s[1], s[2]); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range [][3]string{{"tok_a", "tickets", "sk-alice-1"}, {"tok_b", "tickets", "sk-bob-1"}, {"tok_a", "mail", "sk-alice-mail"}, {"tok_b", "mail", ""}} {
		got, ok, err := c.Get(ctx, w[0], w[1])
		if err != nil || got != w[2] || ok != (w[2] != "") {
			t.Errorf("%s %s: %q %v %v; want %q", w[0], w[1], got, ok, err, w[2])
		}
	}
	sealed, err := st.PersonalCredential(ctx, "tok_a", "tickets")
	if err != nil || bytes.Contains(sealed, []byte("sk-alice")) {
		t.Fatalf("stored: %v, in the clear: %v", err, bytes.Contains(sealed, []byte("sk-alice")))
	}
	if err := st.PutPersonalCredential(ctx, "tok_b", "tickets", sealed, t0()); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := c.Get(ctx, "tok_b", "tickets"); err == nil || ok || got != "" || strings.Contains(err.Error(), "sk-") {
		t.Errorf("alice's sealed value in bob's place: %q %v %v; want an error that quotes nothing", got, ok, err)
	}
	if err := c.Delete(ctx, "tok_a", "tickets"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.Get(ctx, "tok_a", "tickets"); ok {
		t.Error("deleted, still there")
	}
	if err := c.Delete(ctx, "tok_a", "tickets"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second delete: %v", err)
	}
	list, err := c.List(ctx, "tok_a")
	if err != nil || len(list) != 1 || list[0].Backend != "mail" {
		t.Errorf("tok_a's list: %+v %v", list, err)
	}
}

// A value that cannot be a credential is refused: a line break would end
// the HTTP header it is sent in and start another.
func TestACredentialThatCannotBeSentIsRefused(t *testing.T) {
	c, _ := open(t)
	for name, v := range map[string]string{
		"empty": "", "a line break": "sk\r\nX-Admin: yes", "a NUL": "sk\x00", "a tab": "sk\tx",
		"not UTF-8": "sk\xff", "too long": strings.Repeat("k", personal.MaxValueBytes+1),
	} {
		if err := c.Set(context.Background(), "tok_a", "tickets", v); !errors.Is(err, personal.ErrBadValue) {
			t.Errorf("%s: %v, want ErrBadValue", name, err)
		}
	}
	if err := c.Set(context.Background(), "tok_a", "tickets", "Bearer sk-ünïcode-ok"); err != nil {
		t.Errorf("a printable value: %v", err)
	}
}

func t0() time.Time { return time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC) }

// BenchmarkGet is what a per_user backend's call spends reading the
// caller's key: one store read and one AES-GCM open.
func BenchmarkGet(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "p.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	c, _ := personal.New(st, bytes.Repeat([]byte{3}, 32))
	ctx := context.Background()
	if err := c.Set(ctx, "tok_a", "tickets", "sk-alice"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := c.Get(ctx, "tok_a", "tickets"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
