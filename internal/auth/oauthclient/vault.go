// vault.go keeps each backend's record (authcode.go): sealed with
// AES-256-GCM under the configured key, the backend's name bound in as
// additional data (a record cannot be moved to another backend), in the
// store; or, with no key, in memory only.

package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/seal"
)

// Vault keeps one record per backend.
type Vault interface {
	// Load is the backend's record (nil: none).
	Load(ctx context.Context, backend string) ([]byte, error)
	Save(ctx context.Context, backend string, record []byte) error
	// Update runs fn on the backend's record (nil: none) while no other
	// Update of it runs — in this process or, for a vault in a shared
	// store, in another replica — and saves what fn returns (nil: no
	// change).
	Update(ctx context.Context, backend string, fn func(record []byte) ([]byte, error)) error
}

// Records is where a SealedVault keeps its sealed records
// (store.CredentialStore).
type Records interface {
	BackendCredential(ctx context.Context, name string) ([]byte, error)
	PutBackendCredential(ctx context.Context, name string, sealed []byte, at time.Time) error
	UpdateBackendCredential(ctx context.Context, name string, at time.Time, fn func(sealed []byte) ([]byte, error)) error
}

// SealedVault seals records before Records keeps them.
type SealedVault struct {
	Records Records
	box     *seal.Box
	// NotFound tells Records' "no record" error.
	NotFound func(error) bool
	// owner is bound into every seal beside the backend (people.go).
	owner string
}

// ForOwner is a vault of owner's own records, kept in records and sealed
// as v's are, owner bound in: no person's record opens as another's.
func (v *SealedVault) ForOwner(owner string, records Records) *SealedVault {
	return &SealedVault{Records: records, box: v.box, NotFound: v.NotFound, owner: owner}
}

// bound is what a record of backend is sealed to.
func (v *SealedVault) bound(backend string) string {
	if v.owner == "" {
		return backend
	}
	return "person\x00" + v.owner + "\x00" + backend
}

// NewSealedVault seals with key (32 bytes: AES-256).
func NewSealedVault(records Records, key []byte, notFound func(error) bool) (*SealedVault, error) {
	if len(key) != seal.KeySize {
		return nil, fmt.Errorf("oauth: the credentials key must be %d bytes, not %d", seal.KeySize, len(key))
	}
	box, err := seal.New(key)
	if err != nil {
		return nil, err
	}
	return &SealedVault{Records: records, box: box, NotFound: notFound}, nil
}

func (v *SealedVault) Load(ctx context.Context, backend string) ([]byte, error) {
	sealed, err := v.Records.BackendCredential(ctx, backend)
	if err != nil {
		if v.NotFound != nil && v.NotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return v.Open(backend, sealed)
}

func (v *SealedVault) Save(ctx context.Context, backend string, record []byte) error {
	return v.Records.PutBackendCredential(ctx, backend, v.Seal(backend, record), time.Now())
}

func (v *SealedVault) Update(ctx context.Context, backend string, fn func([]byte) ([]byte, error)) error {
	return v.Records.UpdateBackendCredential(ctx, backend, time.Now(), func(sealed []byte) ([]byte, error) {
		var record []byte
		if sealed != nil {
			var err error
			if record, err = v.Open(backend, sealed); err != nil {
				return nil, err
			}
		}
		next, err := fn(record)
		if err != nil || next == nil {
			return nil, err
		}
		return v.Seal(backend, next), nil
	})
}

// Seal is nonce‖ciphertext of record, bound to backend.
func (v *SealedVault) Seal(backend string, record []byte) []byte {
	return v.box.Seal(v.bound(backend), record)
}

// Open undoes Seal; a record sealed under another key or for another
// backend, or altered, is refused.
func (v *SealedVault) Open(backend string, sealed []byte) ([]byte, error) {
	out, err := v.box.Open(v.bound(backend), sealed)
	switch {
	case errors.Is(err, seal.ErrShort):
		return nil, errors.New("oauth: the sealed credentials are too short")
	case err != nil:
		return nil, errors.New("oauth: the sealed credentials do not open with this key (another key, another backend's, or altered)")
	}
	return out, nil
}

// MemoryVault keeps records in memory: they are gone at exit.
type MemoryVault struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (v *MemoryVault) Load(_ context.Context, backend string) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.m[backend], nil
}

func (v *MemoryVault) Update(_ context.Context, backend string, fn func([]byte) ([]byte, error)) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	next, err := fn(v.m[backend])
	if err != nil || next == nil {
		return err
	}
	if v.m == nil {
		v.m = map[string][]byte{}
	}
	v.m[backend] = next
	return nil
}

func (v *MemoryVault) Save(_ context.Context, backend string, record []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string][]byte{}
	}
	v.m[backend] = record
	return nil
}
