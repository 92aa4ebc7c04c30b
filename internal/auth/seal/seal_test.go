package seal_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/mcpgate/mcpgate/internal/auth/seal"
)

// A sealed value opens for its owner under its key only; a cut or altered
// one is refused.
func TestASealedValueOpensForItsOwnerOnly(t *testing.T) {
	box, err := seal.New(bytes.Repeat([]byte{7}, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := seal.New(bytes.Repeat([]byte{8}, seal.KeySize))
	sealed := box.Seal("alice\x00tickets", []byte("sk-alice"))
	if bytes.Contains(sealed, []byte("sk-alice")) {
		t.Fatal("the sealed value holds the plain one")
	}
	if got, err := box.Open("alice\x00tickets", sealed); err != nil || string(got) != "sk-alice" {
		t.Fatalf("Open: %q, %v", got, err)
	}
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	for name, c := range map[string]struct {
		box   *seal.Box
		owner string
		value []byte
		want  error
	}{
		"another owner": {box, "bob\x00tickets", sealed, seal.ErrNotOpen},
		"another key":   {other, "alice\x00tickets", sealed, seal.ErrNotOpen},
		"altered":       {box, "alice\x00tickets", altered, seal.ErrNotOpen},
		"cut short":     {box, "alice\x00tickets", sealed[:10], seal.ErrShort},
	} {
		if got, err := c.box.Open(c.owner, c.value); !errors.Is(err, c.want) {
			t.Errorf("%s: %q, %v; want %v", name, got, err, c.want)
		}
	}
	if _, err := seal.New(make([]byte, 16)); err == nil {
		t.Error("a 16-byte key is accepted")
	}
}

func FuzzOpen(f *testing.F) {
	box, _ := seal.New(bytes.Repeat([]byte{7}, seal.KeySize))
	f.Add("o", box.Seal("o", []byte("v")))
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, owner string, sealed []byte) {
		if v, err := box.Open(owner, sealed); err == nil {
			if again := box.Seal(owner, v); len(again) != len(sealed) {
				t.Fatalf("an opened value reseals to %d bytes, not %d", len(again), len(sealed))
			}
		}
	})
}

// A derived key is the SHA-256 of its purpose, a NUL and the key: pinned,
// since replicas of two releases must derive alike during an upgrade. Two
// purposes never share a key.
func TestADerivedKeyIsPinnedAndItsPurposesOwn(t *testing.T) {
	key := bytes.Repeat([]byte{0x5a}, 32)
	want := sha256.Sum256(append([]byte("mcpgate admin console cookie\x00"), key...))
	if got := seal.Derive(key, "mcpgate admin console cookie"); !bytes.Equal(got, want[:]) || len(got) != seal.KeySize {
		t.Errorf("Derive = %x, want %x", got, want)
	}
	if bytes.Equal(seal.Derive(key, "a"), seal.Derive(key, "b")) || bytes.Equal(seal.Derive(key, "a"), key) {
		t.Error("two purposes, or a purpose and the key itself, share a key")
	}
}
