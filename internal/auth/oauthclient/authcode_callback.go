// authcode_callback.go takes the authorization server's answer: the state
// and iss checked, the code redeemed with the PKCE verifier for the
// backend's resource.

package oauthclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpgate/mcpgate/internal/egress"
)

// Callback completes the authorization the state names, with the
// authorization server's answer q: state compared exactly and used once,
// iss compared exactly (RFC 9207), the code redeemed with the PKCE
// verifier. The error says why not, without a secret.
func (a *Authorization) Callback(ctx context.Context, q url.Values) error {
	if !a.signedState(q.Get("state")) {
		return errors.New("the state is not one this gateway made for this backend")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	p := a.rec.Pending
	switch {
	case p == nil:
		return errors.New("no authorization is waiting for this backend (it finished, or it was never begun)")
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(p.State)) != 1:
		return errors.New("the state does not match the authorization waiting")
	}
	a.rec.Pending = nil // one use, whatever follows
	err := a.complete(ctx, p, q)
	if err != nil {
		a.fail(ctx, err.Error())
	} else {
		a.rec.Failure, a.rec.Refused, a.logged = "", "", ""
		if a.authzed != nil {
			close(a.authzed)
			a.authzed = nil
		}
	}
	a.save(ctx)
	return err
}

func (a *Authorization) complete(ctx context.Context, p *pending, q url.Values) error {
	switch iss, has := q.Get("iss"), q.Has("iss"); {
	case !a.now().Before(p.Expires):
		return errors.New("the authorization link expired; a new one is made at the backend's next refusal")
	case q.Get("error") != "":
		return fmt.Errorf("the authorization server answered %s %s", egress.Summary(q.Get("error")), egress.Summary(q.Get("error_description")))
	case has && iss != p.Issuer:
		return fmt.Errorf("the answer's iss %s is not the authorization server's issuer %s (RFC 9207)", egress.Summary(iss), egress.Summary(p.Issuer))
	case !has && p.IssRequired:
		return fmt.Errorf("the answer carries no iss, though %s says it sends one (RFC 9207)", egress.Summary(p.Issuer))
	case q.Get("code") == "":
		return errors.New("the answer carries no code")
	}
	reg := a.rec.Clients[p.Issuer]
	cfg := oauth2.Config{ClientID: reg.ClientID, ClientSecret: reg.ClientSecret, RedirectURL: p.RedirectURI,
		Endpoint: oauth2.Endpoint{AuthURL: p.AuthEndpoint, TokenURL: p.TokenEndpoint, AuthStyle: authStyle(reg.AuthMethod)}}
	if reg.AuthMethod == "none" {
		cfg.ClientSecret = ""
	}
	client := a.http()
	if p.DPoP {
		key, err := a.rec.DPoPKey.private()
		if err != nil {
			return err
		}
		client = a.dpopClient(key)
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, client), q.Get("code"),
		oauth2.VerifierOption(p.Verifier), oauth2.SetAuthURLParam("resource", p.Resource))
	if err != nil {
		return fmt.Errorf("redeeming the code at %s: %w", egress.Summary(p.Issuer), redactRetrieve(err))
	}
	if tok.AccessToken == "" {
		return fmt.Errorf("the token endpoint of %s answered no access token", egress.Summary(p.Issuer))
	}
	a.rec.Token = &tokenSet{Issuer: p.Issuer, TokenEndpoint: p.TokenEndpoint, Resource: p.Resource,
		Access: tok.AccessToken, Refresh: tok.RefreshToken, Expiry: tok.Expiry, Scope: p.Scope,
		DPoP: p.DPoP && strings.EqualFold(tok.TokenType, "DPoP")}
	a.log().Info("backend authorized", "issuer", egress.Summary(p.Issuer), "scope", egress.Summary(p.Scope), "refresh_token", tok.RefreshToken != "")
	return nil
}

func authStyle(method string) oauth2.AuthStyle {
	if method == "client_secret_basic" {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// tokenRequest is a refresh at the token endpoint, with the client's
// authentication and the resource named (RFC 8707 §2.2), which
// golang.org/x/oauth2's refresh does not send.
func (a *Authorization) tokenRequest(ctx context.Context, reg Registration, endpoint string, form url.Values, key *ecdsa.PrivateKey) (*oauth2.Token, error) {
	req, err := clientRequest(ctx, reg, endpoint, form)
	if err != nil {
		return nil, err
	}
	client := a.http()
	if key != nil {
		client = a.dpopClient(key)
	}
	resp, err := client.Do(req)
	err = egress.Err(err)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil && resp.StatusCode == http.StatusOK {
		return nil, errors.New("the token endpoint answered no JSON")
	}
	if resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return nil, fmt.Errorf("the token endpoint answered %d %s %s", resp.StatusCode, egress.Summary(out.Error), egress.Summary(out.Description))
	}
	tok := &oauth2.Token{AccessToken: out.AccessToken, TokenType: out.TokenType, RefreshToken: out.RefreshToken}
	if out.ExpiresIn > 0 {
		tok.Expiry = a.now().Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	return tok, nil
}

// clientRequest is a POST of form to an authorization server's endpoint
// with reg's client authentication (RFC 6749 §2.3.1; none: its client_id).
func clientRequest(ctx context.Context, reg Registration, endpoint string, form url.Values) (*http.Request, error) {
	switch reg.AuthMethod {
	case "client_secret_post":
		form.Set("client_id", reg.ClientID)
		form.Set("client_secret", reg.ClientSecret)
	case "none":
		form.Set("client_id", reg.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if reg.AuthMethod == "client_secret_basic" {
		req.SetBasicAuth(url.QueryEscape(reg.ClientID), url.QueryEscape(reg.ClientSecret))
	}
	return req, nil
}
