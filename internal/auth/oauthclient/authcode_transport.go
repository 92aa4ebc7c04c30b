// authcode_transport.go sends a backend's requests with the token the
// authorization holds, answers its refusals (a 401, a 403 for a scope, a
// DPoP nonce) and renews the token with the refresh token.

package oauthclient

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/h1"
)

// Wrap is base sending the backend's access token, and meeting its
// authorization challenges.
func (a *Authorization) Wrap(base http.RoundTripper) http.RoundTripper {
	return &authTransport{a: a, base: base}
}

type authTransport struct {
	a    *Authorization
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	token, key := t.a.accessToken(req.Context())
	resp, err := t.send(req, token, key)
	return t.answered(req, resp, err, token, key)
}

// Post sends a POST as its parts through base's Post when no token is
// held: a backend that has asked for none, the usual case, costs no
// request. A refusal is met as RoundTrip meets it, with a request made
// for it then.
func (t *authTransport) Post(ctx context.Context, u *url.URL, header http.Header, body h1.Body) (*http.Response, error) {
	token, key := t.a.accessToken(ctx)
	p, ok := t.base.(h1.Poster)
	if !ok || token != "" {
		req := h1.PostRequest(ctx, u, header, body)
		resp, err := t.send(req, token, key)
		return t.answered(req, resp, err, token, key)
	}
	resp, err := p.Post(ctx, u, header, body)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	return t.answered(h1.PostRequest(ctx, u, header, body), resp, nil, "", nil)
}

// answered meets the backend's refusal of req, sent with token and key:
// a DPoP nonce asked for, a token refreshed, a challenge noted.
func (t *authTransport) answered(req *http.Request, resp *http.Response, err error, token string, key *ecdsa.PrivateKey) (*http.Response, error) {
	a, ctx := t.a, req.Context()
	sent := token
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	ch, ok := oauthmeta.ParseChallenge(resp.Header.Values("WWW-Authenticate"))
	if !ok {
		return resp, nil
	}
	// again sends the request once more, with token; it answers false
	// when the body cannot be sent again (resp stays the refusal).
	again := func(token string, key *ecdsa.PrivateKey) (bool, error) {
		body, ok := replayBody(req)
		if !ok {
			return false, nil
		}
		drain(resp)
		retry := req.Clone(ctx)
		retry.Body = body
		if resp, err = t.send(retry, token, key); err != nil {
			return true, err
		}
		ch, _ = oauthmeta.ParseChallenge(resp.Header.Values("WWW-Authenticate"))
		return true, nil
	}
	if resp.StatusCode == http.StatusUnauthorized && key != nil && ch.Scheme == "DPoP" && ch.Error == "use_dpop_nonce" &&
		resp.Header.Get("DPoP-Nonce") != "" {
		// RFC 9449 §9: the same request, its proof with the nonce given.
		if sentAgain, err := again(token, key); !sentAgain || err != nil {
			return resp, err
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
	}
	if resp.StatusCode == http.StatusUnauthorized && token != "" && ch.Error != "use_dpop_nonce" {
		// Expired early or revoked: a refresh, then the request once more.
		if fresh, key := a.refreshAfter(ctx, token); fresh != "" {
			if sentAgain, err := again(fresh, key); err != nil {
				return resp, err
			} else if sentAgain {
				sent = fresh
				if resp.StatusCode != http.StatusUnauthorized {
					return resp, nil
				}
			}
		}
	}
	if ch, ok = oauthmeta.ParseChallenge(resp.Header.Values("WWW-Authenticate")); !ok {
		return resp, nil
	}
	a.challenged(ctx, resp.StatusCode, ch, sent)
	return resp, nil
}

// send sends req with token (sendToken), noting the nonce the backend
// gives.
func (t *authTransport) send(req *http.Request, token string, key *ecdsa.PrivateKey) (*http.Response, error) {
	return sendToken(t.base, req, token, key, &t.a.nonces, t.a.now())
}

// CloseIdleConnections closes the base transport's, as http.Client's
// does for a transport that offers it.
func (t *authTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// accessToken is the token to send ("": none yet), refreshed first when
// it is about to expire, and the key it is bound to (nil: a bearer token).
func (a *Authorization) accessToken(ctx context.Context) (string, *ecdsa.PrivateKey) {
	if a.ready.Load() && !a.engaged.Load() {
		return "", nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// With no token, look again: another replica may have finished the
	// admin's authorization.
	a.load(ctx, a.rec.Token == nil && a.engaged.Load())
	t := a.rec.Token
	if t == nil {
		return "", nil
	}
	if !t.Expiry.IsZero() && a.now().Add(30*time.Second).After(t.Expiry) {
		if t.Refresh == "" || !a.refresh(ctx) {
			return "", nil
		}
	}
	return a.current()
}

// current is the token held and its key (under a.mu).
func (a *Authorization) current() (string, *ecdsa.PrivateKey) {
	t := a.rec.Token
	if t == nil {
		return "", nil
	}
	if !t.DPoP {
		return t.Access, nil
	}
	key, err := a.rec.DPoPKey.private()
	if err != nil {
		a.fail(context.Background(), err.Error())
		return "", nil
	}
	return t.Access, key
}

// refreshAfter renews the token the backend refused (unless another
// request did already) and returns the new one ("": none) and its key.
func (a *Authorization) refreshAfter(ctx context.Context, refused string) (string, *ecdsa.PrivateKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	t := a.rec.Token
	switch {
	case t == nil:
		return "", nil
	case t.Access != refused:
		return a.current()
	case t.Refresh == "" || !a.refresh(ctx):
		return "", nil
	}
	return a.current()
}

// refresh renews the token with its refresh token (under a.mu); a refusal
// drops the token set, so that the admin is asked again. It runs inside the
// vault's Update. A replica that comes second finds the token the first one
// got, and uses it. It does not present a refresh token the authorization
// server has rotated away, which a server that detects reuse answers by
// revoking the grant.
func (a *Authorization) refresh(ctx context.Context) bool {
	stale := a.rec.Token.Access
	refreshed := false
	update := func(raw []byte) ([]byte, error) {
		var rec record
		if raw != nil {
			if err := json.Unmarshal(raw, &rec); err != nil {
				return nil, err
			}
		} else if a.vault() == nil {
			rec = a.rec
		}
		a.rec = rec
		t := rec.Token
		switch {
		case t == nil:
			return nil, nil // dropped meanwhile: the admin is asked again
		case t.Access != stale:
			refreshed = true // another request or replica did it
			return nil, nil
		}
		reg, ok := rec.Clients[t.Issuer]
		if !ok {
			a.rec.Token = nil
			return json.Marshal(a.rec)
		}
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.Refresh}, "resource": {t.Resource}}
		var key *ecdsa.PrivateKey
		if t.DPoP {
			k, err := rec.DPoPKey.private()
			if err != nil {
				a.fail(ctx, err.Error())
				a.rec.Token = nil
				return json.Marshal(a.rec)
			}
			key = k // RFC 9449 §5: a bound token is refreshed with a proof of the same key
		}
		tok, err := a.tokenRequest(ctx, reg, t.TokenEndpoint, form, key)
		if err != nil {
			a.fail(ctx, fmt.Sprintf("refreshing the token at %s failed: %v", t.Issuer, err))
			a.rec.Token = nil
			return json.Marshal(a.rec)
		}
		next := *t
		next.Access, next.Expiry, next.DPoP = tok.AccessToken, tok.Expiry, strings.EqualFold(tok.TokenType, "DPoP")
		if tok.RefreshToken != "" {
			next.Refresh = tok.RefreshToken // rotated
		}
		a.rec.Token, refreshed = &next, true
		a.log().Info("backend token refreshed", "issuer", egress.Summary(t.Issuer))
		return json.Marshal(a.rec)
	}
	var err error
	if a.vault() == nil {
		_, err = update(nil)
	} else {
		err = a.vault().Update(ctx, a.Backend, update)
	}
	if err != nil {
		a.log().Error("backend credentials not updated", "err", err)
		return false
	}
	return refreshed && a.rec.Token != nil
}
