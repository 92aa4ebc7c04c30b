// middleware.go is authentication as an http.Handler wrapper: every route
// of the server sits behind Wrap, so no request reaches MCP — a POST, the
// Streamable HTTP GET stream or a legacy SSE stream — without an identity.

package auth

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/bearer"
	"github.com/mcpgate/mcpgate/internal/tick"
	"github.com/mcpgate/mcpgate/mcp"
)

// RoleCheck reports whether a role name is known to the configuration.
// Roles are package policy's business; auth only asks.
type RoleCheck func(role string) bool

// Options configures an Authenticator.
type Options struct {
	Tokens *Tokens      // service tokens; nil: refused
	JWT    *JWTVerifier // JWTs; nil: refused
	// OAuth accepts access tokens of trusted authorization servers; nil:
	// none. Beside JWT, a token naming one of its issuers is its to check.
	OAuth *OAuthVerifier
	// ResourceMetadata is the URL of the gateway's Protected Resource
	// Metadata (RFC 9728), named in every challenge when set.
	ResourceMetadata string
	KnownRole        RoleCheck    // required: a credential with an unknown role is refused
	Logger           *slog.Logger // nil: discard
	Realm            string       // WWW-Authenticate realm; default "mcpgate"
	// Stream reports whether a request holds a stream open (nil: a GET),
	// which then ends when its credential is revoked or expires; every
	// other request is authenticated afresh. A 2026-07-28
	// subscriptions/listen is a POST that stays open.
	Stream func(*http.Request) bool
	// Active, when set, reports whether an OAuth access token's caller
	// may still act (its grant not revoked); it is asked every
	// activeEvery while a stream of theirs is open.
	Active func(context.Context, mcp.Identity, time.Time) bool
}

// activeEvery is how often an OAuth stream's grant is checked.
const activeEvery = 5 * time.Second

// Authenticator checks the bearer credential of every request.
type Authenticator struct {
	tokens    *Tokens
	jwt       *JWTVerifier
	oauth     *OAuthVerifier
	metadata  string // the challenge's resource_metadata parameter, or ""
	known     RoleCheck
	log       *slog.Logger
	challenge string // `Bearer realm="…"`
	stream    func(*http.Request) bool
	active    func(context.Context, mcp.Identity, time.Time) bool
}

// New checks o and returns an Authenticator. At least one of Tokens and
// JWT is required (NoAuth is the way to run without authentication), and
// so is KnownRole.
func New(o Options) (*Authenticator, error) {
	if o.Tokens == nil && o.JWT == nil && o.OAuth == nil {
		return nil, errors.New("auth: neither service tokens nor a JWT or OAuth verifier configured")
	}
	if o.KnownRole == nil {
		return nil, errors.New("auth: no role check configured")
	}
	if o.Realm == "" {
		o.Realm = "mcpgate"
	}
	// The realm is written inside a quoted string; refusing what would need
	// escaping is simpler than escaping it.
	if strings.ContainsFunc(o.Realm, func(r rune) bool { return r == '"' || r == '\\' || r < ' ' || r == 0x7f }) {
		return nil, errors.New("auth: realm must not contain quotes, backslashes or control characters")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	challenge := `Bearer realm="` + o.Realm + `"`
	if o.ResourceMetadata != "" {
		if strings.ContainsAny(o.ResourceMetadata, "\"\\ \t\r\n") {
			return nil, errors.New("auth: the resource metadata URL must not contain quotes, backslashes or spaces")
		}
		challenge += `, resource_metadata="` + o.ResourceMetadata + `"`
	}
	if o.Stream == nil {
		o.Stream = isGET
	}
	return &Authenticator{
		tokens:    o.Tokens,
		jwt:       o.JWT,
		oauth:     o.OAuth,
		metadata:  o.ResourceMetadata,
		known:     o.KnownRole,
		log:       o.Logger,
		challenge: challenge,
		stream:    o.Stream,
		active:    o.Active,
	}, nil
}

// Wrap returns next behind authentication. A request that passes reaches
// next with its identity in the context (mcp.IdentityFrom) and without its
// Authorization header, so that nothing downstream — a relay to a backend
// above all — can pass the credential on.
func (a *Authenticator) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, at, err := a.authenticate(r.Context(), r.Header, time.Now())
		if err != nil {
			a.refuse(w, r, at, err)
			return
		}
		a.log.LogAttrs(r.Context(), slog.LevelDebug, "authenticated",
			slog.String("scheme", at.scheme), slog.String("subject", id.Subject),
			slog.String("role", id.Role), slog.String("token_id", id.TokenID))
		ctx := mcp.WithIdentity(r.Context(), id)
		if a.stream(r) {
			var stop func()
			ctx, stop = a.untilRevoked(ctx, id, at)
			defer stop()
		}
		r = r.WithContext(ctx)
		r.Header = withoutAuthorization(r.Header)
		next.ServeHTTP(w, r)
	})
}

// Check authenticates a bearer secret given otherwise than in a header
// (the admin console's login form) exactly as Wrap would: the identity,
// and when the credential expires (zero: never).
func (a *Authenticator) Check(ctx context.Context, secret string, now time.Time) (mcp.Identity, time.Time, error) {
	id, at, err := a.authenticate(ctx, http.Header{"Authorization": {"Bearer " + secret}}, now)
	if err != nil {
		return mcp.Identity{}, time.Time{}, err
	}
	return id, at.expires, nil
}

// untilRevoked returns ctx ended when the credential is revoked or expires.
// A GET is how a client holds a stream open: the Streamable HTTP standalone
// stream, a legacy SSE session. Every POST is authenticated afresh. A
// stream would otherwise go on carrying messages to a credential refused a
// second after its revocation, or long past its exp. The stream's handler
// ends with its request's context.
func (a *Authenticator) untilRevoked(ctx context.Context, id mcp.Identity, at attempt) (context.Context, func()) {
	var cancel context.CancelFunc
	if at.expires.IsZero() {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithDeadline(ctx, at.expires)
	}
	if at.scheme == "oauth" && a.active != nil {
		// A grant is revoked in the store, by any replica: asked again
		// while the stream lasts.
		go tick.Every(ctx, activeEvery, func(now time.Time) bool {
			if a.active(ctx, id, now) {
				return true
			}
			a.log.Info("stream closed: its grant was revoked", "token_id", at.tokenID)
			cancel()
			return false
		})
		return ctx, cancel
	}
	if at.scheme != "token" || a.tokens == nil {
		return ctx, cancel
	}
	revoked := a.tokens.Revoked(at.tokenID)
	go func() {
		select {
		case <-revoked:
			a.log.Info("stream closed: its token was revoked", "token_id", at.tokenID)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func isGET(r *http.Request) bool { return r.Method == http.MethodGet }

// withoutAuthorization is h without its Authorization header, deleted in
// place. The map is the server's own request's, which a handler should not
// modify; but net/http reads only Connection, Expect and the like from it
// once the handler has begun, and no middleware outside this one reads
// the credential after it. A copy of the map cost two allocations on
// every request.
func withoutAuthorization(h http.Header) http.Header {
	delete(h, "Authorization")
	return h
}

// attempt is what may be logged about a credential: never the credential.
type attempt struct {
	scheme  string    // "token" or "jwt"; "" when none was presented
	tokenID string    // a service token's id, once it was found
	role    string    // the role, once the credential was verified
	expires time.Time // when the verified credential stops being valid (zero: never)
}

func (a *Authenticator) authenticate(ctx context.Context, h http.Header, now time.Time) (mcp.Identity, attempt, error) {
	cred, err := bearer.Token(h)
	if err != nil {
		return mcp.Identity{}, attempt{}, err
	}
	var (
		id mcp.Identity
		at attempt
	)
	if strings.HasPrefix(cred, TokenPrefix) {
		at.scheme = "token"
		if a.tokens == nil {
			return id, at, errNoTokens
		}
		rec, err := a.tokens.VerifyFresh(ctx, cred, now)
		at.tokenID = rec.ID
		if err != nil {
			return id, at, err
		}
		id = mcp.Identity{Subject: rec.Name, Role: rec.Role, TokenID: rec.ID, Principal: rec.ID}
		at.expires = rec.ExpiresAt
	} else if is := a.oauthIssuer(cred); a.oauth != nil && (a.jwt == nil || is != nil) {
		at.scheme = "oauth"
		if id, at.expires, err = a.oauth.verify(ctx, is, cred, now); err != nil {
			return mcp.Identity{}, at, err
		}
		if is.local == nil { // another issuer's: a backend may exchange it
			id.Presented = mcp.Secret(cred)
		}
		at.tokenID = id.TokenID
	} else {
		at.scheme = "jwt"
		if a.jwt == nil {
			return id, at, errNoJWT
		}
		if id, at.expires, err = a.jwt.verify(ctx, cred, now); err != nil {
			return mcp.Identity{}, at, err
		}
		id.Presented = mcp.Secret(cred)
		at.tokenID = id.TokenID
	}
	at.role = id.Role
	if !a.known(id.Role) {
		return mcp.Identity{}, at, ErrUnknownRole
	}
	return id, at, nil
}

// oauthIssuer is the trusted OAuth issuer cred names, or nil (also
// without OAuth).
func (a *Authenticator) oauthIssuer(cred string) *oauthIssuer {
	if a.oauth == nil {
		return nil
	}
	return a.oauth.issuer(cred)
}

// refuse answers 401. The body is plain JSON, not a JSON-RPC error. The
// request has not been read, may not be JSON-RPC at all (the GET of an
// event stream), and has no id to answer. MCP clients act on the status and
// the WWW-Authenticate header (RFC 6750 §3), as the MCP authorization
// specification has them do.
func (a *Authenticator) refuse(w http.ResponseWriter, r *http.Request, at attempt, err error) {
	why := reasonFor(err)
	attrs := []slog.Attr{
		slog.String("reason", why.code),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("remote", r.RemoteAddr),
	}
	if at.scheme != "" {
		attrs = append(attrs, slog.String("scheme", at.scheme))
	}
	if at.tokenID != "" {
		attrs = append(attrs, slog.String("token_id", at.tokenID))
	}
	if at.role != "" {
		attrs = append(attrs, slog.String("role", at.role))
	}
	a.log.LogAttrs(r.Context(), slog.LevelInfo, "authentication refused", attrs...)

	if errors.Is(err, ErrInsufficientScope) {
		// RFC 6750 §3.1 and the MCP specification's scope challenge: 403,
		// with the scopes that would grant the least role.
		challenge := `Bearer error="insufficient_scope", scope="` + strings.Join(a.oauth.least, " ") + `"`
		if a.metadata != "" {
			challenge += `, resource_metadata="` + a.metadata + `"`
		}
		writeRefusal(w, http.StatusForbidden, challenge, "insufficient_scope", why.message)
		return
	}
	challenge := a.challenge
	if a.oauth != nil && !why.presented() && len(a.oauth.least) > 0 {
		challenge += `, scope="` + strings.Join(a.oauth.least, " ") + `"`
	}
	if why.presented() {
		challenge += `, error="invalid_token", error_description="` + why.message + `"`
	}
	writeUnauthorized(w, challenge, why.message)
}

func writeUnauthorized(w http.ResponseWriter, challenge, message string) {
	writeRefusal(w, http.StatusUnauthorized, challenge, "unauthorized", message)
}

func writeRefusal(w http.ResponseWriter, status int, challenge, code, message string) {
	body, _ := json.Marshal(struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}{code, message})
	h := w.Header()
	h.Set("WWW-Authenticate", challenge)
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
