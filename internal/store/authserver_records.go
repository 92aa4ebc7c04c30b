// authserver_records.go is what the built-in OAuth authorization server
// keeps: the clients that registered dynamically (RFC 7591), the one-use
// authorization codes, and the grants a person consented to, each with its
// current refresh token and the one it replaced. Only hashes of codes and
// refresh tokens are kept, never the values.
//
// The rules live here once, in SQL both stores speak, over a transaction
// each store supplies (OAuthSQL.Tx). A code is redeemed once, and a second
// redemption revokes the grant the first one made (OAuth 2.1 §4.1.3). A
// refresh token is spent by its rotation, and presenting the one it
// replaced revokes the grant (§4.3.1). Each change is one conditional
// UPDATE, so two replicas racing cannot both win.

package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Ways an OAuth request is refused by what the store holds.
var (
	// ErrReused is a code redeemed before, or a refresh token already
	// rotated away; the grant it led to is revoked.
	ErrReused = errors.New("store: already used; its grant is revoked")
	// ErrExpired is a code or a grant past its expiry.
	ErrExpired = errors.New("store: expired")
	// ErrRevoked is a grant revoked before.
	ErrRevoked = errors.New("store: revoked")
	// ErrLimit is a registration refused because the store holds as many
	// registered clients as it may.
	ErrLimit = errors.New("store: limit reached")
)

// OAuthClient is a client registered dynamically.
type OAuthClient struct {
	ID           string
	Name         string
	RedirectURIs []string
	CreatedAt    time.Time
}

// OAuthCode is an authorization code as issued: what the person consented
// to, for whom, and the PKCE challenge its redemption must answer.
type OAuthCode struct {
	Hash        []byte // SHA-256 of the code
	ClientID    string
	RedirectURI string
	Challenge   string // S256 code_challenge
	Resource    string
	Scope       string
	Role        string
	Subject     string
	TokenID     string // the service token the person proved themselves with
	CreatedAt   time.Time
	ExpiresAt   time.Time
	UsedAt      time.Time // zero: not redeemed
	GrantID     string    // the grant its redemption made
}

// OAuthGrant is what a person consented to, as long as it lasts: the
// role a client acts with, and the refresh token that renews it.
type OAuthGrant struct {
	ID           string
	ClientID     string
	ClientName   string
	Subject      string
	TokenID      string
	Role         string
	Scope        string
	Resource     string
	RefreshHash  []byte // SHA-256 of the current refresh token
	PreviousHash []byte // of the one it replaced (nil: none yet)
	CreatedAt    time.Time
	RefreshedAt  time.Time // zero: never refreshed
	ExpiresAt    time.Time // the current refresh token's expiry
	RevokedAt    time.Time // zero: not revoked
}

// Active reports whether the grant may be used at now.
func (g OAuthGrant) Active(now time.Time) bool {
	return g.RevokedAt.IsZero() && now.Before(g.ExpiresAt)
}

// OAuthStore is the authorization server's part of a Store.
type OAuthStore interface {
	// RegisterOAuthClient saves c unless limit clients are registered
	// already (ErrLimit); ErrDuplicate for a taken id.
	RegisterOAuthClient(ctx context.Context, c OAuthClient, limit int) error
	// OAuthClient is a registered client; ErrNotFound.
	OAuthClient(ctx context.Context, id string) (OAuthClient, error)
	// CreateOAuthCode saves an issued code.
	CreateOAuthCode(ctx context.Context, c OAuthCode) error
	// OAuthCode is the code of hash, redeemed or not; ErrNotFound.
	OAuthCode(ctx context.Context, hash []byte) (OAuthCode, error)
	// RedeemOAuthCode marks the code of hash used at at and saves g, the
	// grant it makes, together. A code used before revokes the grant it
	// made (ErrReused); one past its expiry is ErrExpired.
	RedeemOAuthCode(ctx context.Context, hash []byte, g OAuthGrant, at time.Time) error
	// RotateOAuthRefresh replaces the grant's refresh token old by next,
	// valid until expires, and returns the grant. The token it replaced
	// presented again revokes the grant (ErrReused, with the grant); a revoked grant is
	// ErrRevoked, an expired one ErrExpired, an unknown token ErrNotFound.
	RotateOAuthRefresh(ctx context.Context, old, next []byte, at, expires time.Time) (OAuthGrant, error)
	// OAuthGrant is a grant by id; OAuthGrantByRefresh by its current
	// refresh token's hash. ErrNotFound.
	OAuthGrant(ctx context.Context, id string) (OAuthGrant, error)
	OAuthGrantByRefresh(ctx context.Context, hash []byte) (OAuthGrant, error)
	// OAuthGrants are every grant, oldest first.
	OAuthGrants(ctx context.Context) ([]OAuthGrant, error)
	// RevokeOAuthGrant revokes a grant at at (one revoked before keeps
	// its first time); ErrNotFound.
	RevokeOAuthGrant(ctx context.Context, id string, at time.Time) error
	// PruneOAuth deletes, as of now, what the server will never use
	// again (OAuthPrune's ages), and returns how much of each it deleted.
	PruneOAuth(ctx context.Context, now time.Time, p OAuthPrune) (OAuthPruned, error)
}

// OAuthPrune is how long what the authorization server keeps outlives
// its use. Without it, max_clients anonymous registrations turned
// registration off for ever, and every code and grant stayed.
type OAuthPrune struct {
	// IdleClient: a client registered this long ago that holds no grant
	// and no code (it never completed a sign-in) is deleted.
	IdleClient time.Duration
	// Code: a code this long past its expiry, used or not (a replay
	// within it still revokes its grant).
	Code time.Duration
	// Grant: a grant this long past its refresh token's expiry, or past
	// its revocation (the CLI and the console list it until then).
	Grant time.Duration
}

// OAuthPruned counts what PruneOAuth deleted.
type OAuthPruned struct{ Clients, Codes, Grants int64 }

// SQLTx is one transaction as both stores' drivers offer it, with ?
// placeholders (PostgreSQL's store numbers them) and ErrNotFound for a
// QueryRow that finds no row.
type SQLTx interface {
	Exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, func(), error)
}

// Row is one row to scan.
type Row interface{ Scan(dest ...any) error }

// OAuthSQL implements OAuthStore over a store's transactions: Tx runs fn
// in one and commits it when fn returns nil.
type OAuthSQL struct {
	Tx func(ctx context.Context, fn func(SQLTx) error) error
	// Read, if set, runs fn's reads without a transaction of Tx's (SQLite's
	// Tx takes the write lock); nil: Tx.
	Read func(ctx context.Context, fn func(SQLTx) error) error
	Name string // "sqlite" or "postgres", for errors
	// IsDuplicate tells a unique violation of the driver's.
	IsDuplicate func(error) bool
	// LockRow is what a SELECT ends with to lock the rows it reads until
	// the transaction ends (" FOR UPDATE" on PostgreSQL; SQLite's write
	// transactions are serial already).
	LockRow string
	// LockClients is a statement that makes registrations take turns until
	// the transaction ends, so that two of them cannot both see room under
	// the limit (PostgreSQL's LOCK TABLE; "" on SQLite, whose write
	// transactions are serial already).
	LockClients string
}

// NumberPlaceholders turns each ? of q into $1, $2, … in order, for
// PostgreSQL. The queries here hold no ? inside a literal.
func NumberPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// read runs fn with Read, else Tx.
func (s OAuthSQL) read(ctx context.Context, fn func(SQLTx) error) error {
	if s.Read != nil {
		return s.Read(ctx, fn)
	}
	return s.Tx(ctx, fn)
}

func (s OAuthSQL) errorf(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case s.IsDuplicate != nil && s.IsDuplicate(err):
		// The driver's message names the constraint, not the value.
		return fmt.Errorf("%s: %s: %w (%v)", s.Name, op, ErrDuplicate, err)
	}
	return fmt.Errorf("%s: %s: %w", s.Name, op, err)
}

const grantColumns = "id, client_id, client_name, subject, token_id, role, scope, resource, refresh_hash, previous_hash, created_at, refreshed_at, expires_at, revoked_at"

func scanGrant(r Row) (OAuthGrant, error) {
	var g OAuthGrant
	var created, refreshed, expires, revoked int64
	err := r.Scan(&g.ID, &g.ClientID, &g.ClientName, &g.Subject, &g.TokenID, &g.Role, &g.Scope, &g.Resource,
		&g.RefreshHash, &g.PreviousHash, &created, &refreshed, &expires, &revoked)
	if len(g.PreviousHash) == 0 {
		g.PreviousHash = nil
	}
	g.CreatedAt, g.RefreshedAt, g.ExpiresAt, g.RevokedAt = DecodeTime(created), DecodeTime(refreshed), DecodeTime(expires), DecodeTime(revoked)
	return g, err
}

func (s OAuthSQL) RegisterOAuthClient(ctx context.Context, c OAuthClient, limit int) error {
	return s.errorf("register oauth client", s.Tx(ctx, func(tx SQLTx) error {
		if s.LockClients != "" {
			if _, err := tx.Exec(ctx, s.LockClients); err != nil {
				return err
			}
		}
		n, err := tx.Exec(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, created_at)
			SELECT ?, ?, ?, ? WHERE (SELECT COUNT(*) FROM oauth_clients) < ?`,
			c.ID, c.Name, strings.Join(c.RedirectURIs, "\n"), EncodeTime(c.CreatedAt), limit)
		if err == nil && n == 0 {
			return ErrLimit
		}
		return err
	}))
}

func (s OAuthSQL) PruneOAuth(ctx context.Context, now time.Time, p OAuthPrune) (OAuthPruned, error) {
	var n OAuthPruned
	err := s.Tx(ctx, func(tx SQLTx) error {
		var err error
		if n.Codes, err = tx.Exec(ctx, `DELETE FROM oauth_codes WHERE expires_at < ?`, EncodeTime(now.Add(-p.Code))); err != nil {
			return err
		}
		grantEnd := EncodeTime(now.Add(-p.Grant))
		if n.Grants, err = tx.Exec(ctx, `DELETE FROM oauth_grants WHERE expires_at < ? OR (revoked_at <> 0 AND revoked_at < ?)`,
			grantEnd, grantEnd); err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, `DELETE FROM oauth_refresh_spent WHERE NOT EXISTS
			(SELECT 1 FROM oauth_grants g WHERE g.id = oauth_refresh_spent.grant_id)`); err != nil {
			return err
		}
		n.Clients, err = tx.Exec(ctx, `DELETE FROM oauth_clients WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.id)
			AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.client_id = oauth_clients.id)`, EncodeTime(now.Add(-p.IdleClient)))
		return err
	})
	return n, s.errorf("prune oauth", err)
}

func (s OAuthSQL) OAuthClient(ctx context.Context, id string) (OAuthClient, error) {
	var c OAuthClient
	err := s.Tx(ctx, func(tx SQLTx) error {
		var uris string
		var created int64
		if err := tx.QueryRow(ctx, `SELECT id, name, redirect_uris, created_at FROM oauth_clients WHERE id = ?`, id).
			Scan(&c.ID, &c.Name, &uris, &created); err != nil {
			return err
		}
		c.RedirectURIs, c.CreatedAt = strings.Split(uris, "\n"), DecodeTime(created)
		return nil
	})
	return c, s.errorf("oauth client", err)
}

func (s OAuthSQL) CreateOAuthCode(ctx context.Context, c OAuthCode) error {
	return s.errorf("create oauth code", s.Tx(ctx, func(tx SQLTx) error {
		_, err := tx.Exec(ctx, `INSERT INTO oauth_codes (hash, client_id, redirect_uri, challenge, resource, scope, role, subject, token_id, created_at, expires_at, used_at, grant_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '')`,
			c.Hash, c.ClientID, c.RedirectURI, c.Challenge, c.Resource, c.Scope, c.Role, c.Subject, c.TokenID,
			EncodeTime(c.CreatedAt), EncodeTime(c.ExpiresAt))
		return err
	}))
}

func (s OAuthSQL) OAuthCode(ctx context.Context, hash []byte) (OAuthCode, error) {
	var c OAuthCode
	err := s.Tx(ctx, func(tx SQLTx) error {
		var created, expires, used int64
		err := tx.QueryRow(ctx, `SELECT hash, client_id, redirect_uri, challenge, resource, scope, role, subject, token_id, created_at, expires_at, used_at, grant_id
			FROM oauth_codes WHERE hash = ?`, hash).
			Scan(&c.Hash, &c.ClientID, &c.RedirectURI, &c.Challenge, &c.Resource, &c.Scope, &c.Role, &c.Subject, &c.TokenID,
				&created, &expires, &used, &c.GrantID)
		c.CreatedAt, c.ExpiresAt, c.UsedAt = DecodeTime(created), DecodeTime(expires), DecodeTime(used)
		return err
	})
	return c, s.errorf("oauth code", err)
}

func (s OAuthSQL) RedeemOAuthCode(ctx context.Context, hash []byte, g OAuthGrant, at time.Time) error {
	return s.errorf("redeem oauth code", s.Tx(ctx, func(tx SQLTx) error {
		n, err := tx.Exec(ctx, `UPDATE oauth_codes SET used_at = ?, grant_id = ? WHERE hash = ? AND used_at = 0 AND expires_at > ?`,
			EncodeTime(at), g.ID, hash, EncodeTime(at))
		if err != nil {
			return err
		}
		if n == 1 {
			return insertGrant(ctx, tx, g)
		}
		var used int64
		var grant string
		if err := tx.QueryRow(ctx, `SELECT used_at, grant_id FROM oauth_codes WHERE hash = ?`, hash).Scan(&used, &grant); err != nil {
			return err
		}
		if used == 0 {
			return ErrExpired
		}
		if err := revokeGrant(ctx, tx, grant, at); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		return errCommit{ErrReused}
	}))
}

// errCommit is an error whose transaction still commits (the revocation a
// reuse causes must land although the request is refused).
type errCommit struct{ err error }

func (e errCommit) Error() string { return e.err.Error() }
func (e errCommit) Unwrap() error { return e.err }

// Committed reports whether err asks its transaction to commit, and the
// error to return after it does.
func Committed(err error) (error, bool) {
	var c errCommit
	if errors.As(err, &c) {
		return c.err, true
	}
	return err, false
}

func insertGrant(ctx context.Context, tx SQLTx, g OAuthGrant) error {
	_, err := tx.Exec(ctx, `INSERT INTO oauth_grants (`+grantColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.ClientID, g.ClientName, g.Subject, g.TokenID, g.Role, g.Scope, g.Resource, g.RefreshHash, g.PreviousHash,
		EncodeTime(g.CreatedAt), EncodeTime(g.RefreshedAt), EncodeTime(g.ExpiresAt), EncodeTime(g.RevokedAt))
	return err
}

func revokeGrant(ctx context.Context, tx SQLTx, id string, at time.Time) error {
	n, err := tx.Exec(ctx, `UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at = 0`, EncodeTime(at), id)
	if err != nil || n == 1 {
		return err
	}
	var exists int64
	return tx.QueryRow(ctx, `SELECT COUNT(*) FROM oauth_grants WHERE id = ? HAVING COUNT(*) > 0`, id).Scan(&exists)
}

func (s OAuthSQL) RotateOAuthRefresh(ctx context.Context, old, next []byte, at, expires time.Time) (OAuthGrant, error) {
	var g OAuthGrant
	err := s.Tx(ctx, func(tx SQLTx) error {
		n, err := tx.Exec(ctx, `UPDATE oauth_grants SET previous_hash = refresh_hash, refresh_hash = ?, refreshed_at = ?, expires_at = ?
			WHERE refresh_hash = ? AND revoked_at = 0 AND expires_at > ?`,
			next, EncodeTime(at), EncodeTime(expires), old, EncodeTime(at))
		if err != nil {
			return err
		}
		if n == 1 {
			if g, err = scanGrant(tx.QueryRow(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE refresh_hash = ?`, next)); err != nil {
				return err
			}
			// The chain: every token this grant spent, so that a replay
			// of any of them, however far back, revokes it.
			_, err = tx.Exec(ctx, `INSERT INTO oauth_refresh_spent (hash, grant_id, spent_at) VALUES (?, ?, ?)`, old, g.ID, EncodeTime(at))
			return err
		}
		var spentBy string
		switch err := tx.QueryRow(ctx, `SELECT grant_id FROM oauth_refresh_spent WHERE hash = ?`, old).Scan(&spentBy); {
		case err == nil:
			replaced, err := scanGrant(tx.QueryRow(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE id = ?`, spentBy))
			if err != nil {
				return err
			}
			if err := revokeGrant(ctx, tx, replaced.ID, at); err != nil {
				return err
			}
			g = replaced
			return errCommit{ErrReused}
		case !errors.Is(err, ErrNotFound):
			return err
		}
		replaced, err := scanGrant(tx.QueryRow(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE previous_hash = ?`, old))
		switch {
		case err == nil:
			if err := revokeGrant(ctx, tx, replaced.ID, at); err != nil {
				return err
			}
			g = replaced
			return errCommit{ErrReused}
		case !errors.Is(err, ErrNotFound):
			return err
		}
		current, err := scanGrant(tx.QueryRow(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE refresh_hash = ?`, old))
		switch {
		case err != nil:
			return err
		case !current.RevokedAt.IsZero():
			return ErrRevoked
		default:
			return ErrExpired
		}
	})
	return g, s.errorf("rotate oauth refresh token", err)
}

func (s OAuthSQL) OAuthGrant(ctx context.Context, id string) (OAuthGrant, error) {
	return s.grantWhere(ctx, "id", id)
}

func (s OAuthSQL) OAuthGrantByRefresh(ctx context.Context, hash []byte) (OAuthGrant, error) {
	return s.grantWhere(ctx, "refresh_hash", hash)
}

func (s OAuthSQL) grantWhere(ctx context.Context, column string, v any) (OAuthGrant, error) {
	var g OAuthGrant
	err := s.Tx(ctx, func(tx SQLTx) error {
		var err error
		g, err = scanGrant(tx.QueryRow(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE `+column+` = ?`, v))
		return err
	})
	return g, s.errorf("oauth grant", err)
}

func (s OAuthSQL) OAuthGrants(ctx context.Context) ([]OAuthGrant, error) {
	var out []OAuthGrant
	err := s.Tx(ctx, func(tx SQLTx) error {
		rows, done, err := tx.Query(ctx, `SELECT `+grantColumns+` FROM oauth_grants ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer done()
		for rows.Next() {
			g, err := scanGrant(rows)
			if err != nil {
				return err
			}
			out = append(out, g)
		}
		return rows.Err()
	})
	return out, s.errorf("oauth grants", err)
}

func (s OAuthSQL) RevokeOAuthGrant(ctx context.Context, id string, at time.Time) error {
	return s.errorf("revoke oauth grant "+id, s.Tx(ctx, func(tx SQLTx) error { return revokeGrant(ctx, tx, id, at) }))
}
