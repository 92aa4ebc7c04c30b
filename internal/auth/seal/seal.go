// Package seal seals values at rest with AES-256-GCM under one key. Each
// value is bound to what it belongs to (a backend, a principal and a
// backend), so that a sealed value moved to another's place does not open.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// KeySize is the length of a sealing key in bytes (AES-256).
const KeySize = 32

// Errors Open returns.
var (
	ErrShort   = errors.New("seal: the sealed value is too short")
	ErrNotOpen = errors.New("seal: the sealed value does not open with this key (another key, another owner's, or altered)")
)

// Box seals and opens under one key.
type Box struct{ aead cipher.AEAD }

// New returns a Box sealing under key (KeySize bytes).
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: the key must be %d bytes, not %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal is nonce‖ciphertext of plain, bound to owner.
func (b *Box) Seal(owner string, plain []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	_, _ = rand.Read(nonce)
	return b.aead.Seal(nonce, nonce, plain, []byte(owner))
}

// Open undoes Seal. A value sealed under another key or for another
// owner, or altered, is refused.
func (b *Box) Open(owner string, sealed []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, ErrShort
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte(owner))
	if err != nil {
		return nil, ErrNotOpen
	}
	return out, nil
}

// Derive is a key of KeySize bytes for one purpose, made from key: the
// SHA-256 of purpose, a NUL and key. Each use of a configured key gets its
// own, so that no value made for one purpose passes for another's, and
// key itself seals and signs nothing.
func Derive(key []byte, purpose string) []byte {
	sum := sha256.Sum256(append(append([]byte(purpose), 0), key...))
	return sum[:]
}
