// Package store is mcpgate's persistent state behind one small interface:
// service tokens (only their hashes), the audit log, and the built-in
// OAuth authorization server's clients, codes and grants. The embedded SQLite
// implementation (store/sqlite) is the default; store/postgres is the one
// replicas share. Both run the contract tests of store/storetest.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned for a token id that does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrDuplicate is returned (wrapped) by CreateToken when the id or the hash
// is already taken, so that a caller can tell a collision from a broken
// database and draw a fresh token instead of failing.
var ErrDuplicate = errors.New("store: duplicate")

// ErrRefused is returned (wrapped) by AppendAudit and AppendAuditThrough
// when the store refused what the records hold, not when it could not be
// reached or was busy: the same records would be refused again.
var ErrRefused = errors.New("store: records refused")

// Token is a service token as stored: never the token itself, only the
// SHA-256 hash of it.
type Token struct {
	ID        string    // public id, shown in listings and audit records ("tok_…")
	Name      string    // what the token is for
	Role      string    // role name as configured
	Hash      []byte    // SHA-256 of the whole token string
	CreatedAt time.Time // UTC
	ExpiresAt time.Time // zero: never
	RevokedAt time.Time // zero: not revoked
}

// Active reports whether the token may be used at now.
func (t Token) Active(now time.Time) bool {
	return t.RevokedAt.IsZero() && (t.ExpiresAt.IsZero() || now.Before(t.ExpiresAt))
}

// AuditRecord is one gated call. It never holds argument values or
// credentials.
type AuditRecord struct {
	Time     time.Time     // when the call arrived, UTC
	Subject  string        // identity's subject
	TokenID  string        // credential id ("" for none)
	Role     string        // caller's role
	Kind     string        // "tool", "resource" or "prompt"
	Name     string        // tool or prompt name, resource URI
	Backend  string        // backend that served it ("" for a native entry)
	Outcome  string        // the engine's class of its end (mcp.Outcome): ok, tool_error, forbidden, rate_limited, invalid, error
	Code     int64         // JSON-RPC error code, 0 for a result
	Duration time.Duration // time to answer
	// Origin is the backend's own name for the tool or prompt, where the
	// gateway renamed it (a prefix, shaping; "" otherwise).
	Origin string
	// Upstream is whom the call was made as at the backend, when not as
	// the gateway: "vault:BACKEND" for a per_user backend's stored key.
	Upstream string
	// Rule is the policy rule ("interceptor:NAME": the interceptor) that
	// denied the call ("": none did).
	Rule string
	// Redacted is what the redactor took out of the answer, as
	// pattern=count pairs ("": nothing).
	Redacted string
	// Hooks is what interceptors came to other than allowing or denying,
	// as interceptor:outcome (mutate, error_open), space-separated.
	Hooks string
}

// Store is what mcpgate keeps between runs.
type Store interface {
	// CreateToken saves a new token. Its ID and Hash must be unique;
	// ErrDuplicate otherwise.
	CreateToken(ctx context.Context, t Token) error
	// Tokens returns every token, revoked and expired ones included, oldest
	// first.
	Tokens(ctx context.Context) ([]Token, error)
	// RevokeToken marks a token revoked at the given time; ErrNotFound if
	// no token has that id.
	RevokeToken(ctx context.Context, id string, at time.Time) error

	// AppendAudit writes records in one transaction.
	AppendAudit(ctx context.Context, records []AuditRecord) error
	// TailAudit returns the latest n records, oldest first.
	TailAudit(ctx context.Context, n int) ([]AuditRecord, error)
	// QueryAudit returns one page of the records q selects, newest
	// first; ErrBadCursor for an After no page gave.
	QueryAudit(ctx context.Context, q AuditQuery) (AuditPage, error)

	// The built-in authorization server's clients, codes and grants
	// (authserver_records.go).
	OAuthStore
	// The gateway's sealed credentials towards its backends
	// (credentials.go).
	CredentialStore
	// Each person's own credentials for per_user backends (personal.go).
	PersonalCredentialStore
	ConsoleStore
	// The catalogue's pins (pins.go).
	PinStore

	// Ping reports whether the store answers now.
	Ping(ctx context.Context) error
	Close() error
}
