// Package personal keeps each person's own credential for a per_user
// backend: an API key they stored for themselves (the console's My
// credentials page), or an admin stored for them (mcpgate credentials
// set). A value is sealed (package seal) with the principal and the
// backend bound in, so that no sealed value opens as another person's or
// for another backend, and is never shown again once stored.
package personal

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/auth/seal"
	"github.com/mcpgate/mcpgate/internal/store"
)

// MaxValueBytes bounds a stored credential.
const MaxValueBytes = 8 << 10

// ErrBadValue is why a value is refused: empty, too long, not UTF-8, or
// holding a control character (a line break would end an HTTP header).
var ErrBadValue = errors.New("personal: a credential is 1 to 8192 bytes of printable UTF-8")

// Credentials seals, stores and opens people's credentials.
type Credentials struct {
	store store.PersonalCredentialStore
	box   *seal.Box
}

// New keeps credentials in st, sealed under key (seal.KeySize bytes).
func New(st store.PersonalCredentialStore, key []byte) (*Credentials, error) {
	box, err := seal.New(key)
	if err != nil {
		return nil, fmt.Errorf("personal: %w", err)
	}
	return &Credentials{store: st, box: box}, nil
}

// owner is what a value is bound to.
func owner(principal, backend string) string { return principal + "\x00" + backend }

// Set stores principal's value for backend, replacing the one there was.
func (c *Credentials) Set(ctx context.Context, principal, backend, value string) error {
	if err := CheckValue(value); err != nil {
		return err
	}
	return c.store.PutPersonalCredential(ctx, principal, backend, c.box.Seal(owner(principal, backend), []byte(value)), time.Now().UTC())
}

// CheckValue refuses a value that cannot be a credential (ErrBadValue).
func CheckValue(value string) error {
	if value == "" || len(value) > MaxValueBytes || !utf8.ValidString(value) {
		return ErrBadValue
	}
	for _, r := range value {
		if r < ' ' || r == 0x7f {
			return ErrBadValue
		}
	}
	return nil
}

// Get is principal's value for backend; ok is false when none is stored.
// A value that does not open (another key, moved, altered) is an error
// that never quotes it.
func (c *Credentials) Get(ctx context.Context, principal, backend string) (value string, ok bool, err error) {
	sealed, err := c.store.PersonalCredential(ctx, principal, backend)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	plain, err := c.box.Open(owner(principal, backend), sealed)
	if err != nil {
		return "", false, fmt.Errorf("personal: the credential stored for backend %s: %w", backend, err)
	}
	return string(plain), true, nil
}

// Delete forgets principal's value for backend; store.ErrNotFound when
// there was none.
func (c *Credentials) Delete(ctx context.Context, principal, backend string) error {
	return c.store.DeletePersonalCredential(ctx, principal, backend)
}

// List is principal's stored credentials ("" for everyone's), without
// their values.
func (c *Credentials) List(ctx context.Context, principal string) ([]store.PersonalCredential, error) {
	return c.store.PersonalCredentials(ctx, principal)
}
