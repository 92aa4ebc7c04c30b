// authcode_forget.go forgets a backend's authorization at an admin's word:
// the refresh token revoked at its server, the tokens dropped.

package oauthclient

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/egress"
)

// Forget drops the backend's authorization: its tokens, the link waiting
// and the DPoP key. The refresh token is revoked first at the authorization
// server (RFC 7009) when it names a revocation endpoint. The backend's next
// refusal then asks an admin to authorize anew. The client registrations
// are kept. It answers whether there was a token, and, when the revocation
// failed, why (the record is dropped anyway).
func (a *Authorization) Forget(ctx context.Context) (hadToken bool, revokeErr error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	var dropped *tokenSet
	drop := func(rec *record) {
		dropped = rec.Token
		rec.Token, rec.Pending, rec.Failure, rec.Refused, rec.DPoPKey, rec.Issuer = nil, nil, "", "", "", ""
	}
	if a.vault() == nil {
		drop(&a.rec)
	} else if err := a.vault().Update(ctx, a.Backend, func(old []byte) ([]byte, error) {
		var rec record
		if old != nil {
			if err := json.Unmarshal(old, &rec); err != nil {
				return nil, err
			}
		}
		drop(&rec)
		a.rec = rec
		return json.Marshal(rec)
	}); err != nil {
		return false, err
	}
	a.logged = ""
	who := "an admin"
	if a.Owner != "" {
		who = "its person"
	}
	a.log().Warn("backend authorization forgotten: its next refusal asks "+who+" again", "had_token", dropped != nil)
	if dropped == nil {
		return false, nil
	}
	return true, a.revoke(ctx, dropped)
}

// revoke asks t's authorization server to revoke t's refresh token (or,
// without one, its access token), if it names a revocation endpoint.
func (a *Authorization) revoke(ctx context.Context, t *tokenSet) error {
	as, err := oauthmeta.DiscoverAuthorizationServer(ctx, a.http(), t.Issuer)
	if err != nil || as.RevocationEndpoint == "" {
		return err
	}
	if err := oauthmeta.CheckFetchURL(as.RevocationEndpoint); err != nil {
		return fmt.Errorf("the revocation endpoint of %s: %w", egress.Summary(t.Issuer), err)
	}
	form := url.Values{"token": {t.Access}, "token_type_hint": {"access_token"}}
	if t.Refresh != "" {
		form = url.Values{"token": {t.Refresh}, "token_type_hint": {"refresh_token"}}
	}
	req, err := clientRequest(ctx, a.rec.Clients[t.Issuer], as.RevocationEndpoint, form)
	if err != nil {
		return err
	}
	resp, err := a.http().Do(req)
	err = egress.Err(err)
	if err != nil {
		return fmt.Errorf("revoking at %s: %w", egress.Summary(t.Issuer), err)
	}
	drain(resp)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revoking at %s: the revocation endpoint answered %d", egress.Summary(t.Issuer), resp.StatusCode)
	}
	return nil
}

// dpopClient is the gateway's client for token requests with proofs of key.
func (a *Authorization) dpopClient(key *ecdsa.PrivateKey) *http.Client {
	base := a.http()
	c := *base
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &dpopTokenTransport{base: rt, key: key, nonces: &a.nonces, now: a.now}
	return &c
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
