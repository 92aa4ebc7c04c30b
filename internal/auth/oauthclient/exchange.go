// exchange.go is the gateway exchanging a caller's token for one of a
// backend's (OAuth 2.0 Token Exchange, RFC 8693). A person signed in to
// the gateway with their identity provider's token. The gateway presents
// it to that provider's token endpoint as the subject token, authenticated
// as its own client (a secret, or a JWT it signs). It gets back a token of
// the same person whose audience is the backend. The backend so sees who
// is asking, with that person's rights, and never the token they gave the
// gateway.

package oauthclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpgate/mcpgate/internal/egress"
)

// The RFC 8693 grant and the token types it names (§3).
const (
	TokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeJWT       = "urn:ietf:params:oauth:token-type:jwt"
	TokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	// TokenTypeIDJAG is an identity assertion JWT authorization grant
	// (ID-JAG): what MCP's enterprise-managed authorization exchanges a
	// person's ID token for, to present at a server's authorization server.
	TokenTypeIDJAG      = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeURNPrefix  = "urn:ietf:params:oauth:token-type:"
	defaultExchangeLife = time.Hour // a token whose answer says nothing of its life
)

// TokenExchange exchanges callers' tokens at one token endpoint.
type TokenExchange struct {
	// Client is the gateway at the token endpoint: Client.TokenURL (required),
	// its id, and how it authenticates (a secret, or private_key_jwt).
	Client ClientCredentials
	// SubjectTokenType is what the caller's token is (TokenTypeAccess,
	// TokenTypeJWT or TokenTypeIDToken; default TokenTypeAccess), and
	// RequestedTokenType what is asked for ("": the server's choice).
	SubjectTokenType, RequestedTokenType string
	// Audience and Resource name the backend (RFC 8693 §2.1; either may
	// be empty, not both).
	Audience, Resource string
	// Grant, with RequestedTokenType TokenTypeIDJAG, is the gateway's
	// client at the backend's authorization server, found from
	// Resource's metadata (Grant.Issuer, if set, must be it). The ID-JAG,
	// whose audience is that server's issuer unless Audience says, is the
	// assertion of its JWT-bearer grant; the access token it grants is
	// what Exchange returns.
	Grant *ClientCredentials
}

// Exchanged is a token got by exchange: the access token and when it
// expires.
type Exchanged struct {
	Token   string
	Expires time.Time
}

// Exchange presents subject (the caller's token) and returns the token
// the server gives for it. Errors name the step and the server's error
// code, never a token or the secret.
func (x TokenExchange) Exchange(ctx context.Context, subject string) (Exchanged, error) {
	if subject == "" {
		return Exchanged{}, errors.New("oauth: token exchange: no subject token")
	}
	if x.Grant == nil {
		tok, err := x.exchangeAt(ctx, subject, x.Audience)
		if err != nil {
			return Exchanged{}, err
		}
		return exchanged(tok), nil
	}
	g := x.Grant
	hc := g.Outbound.Client(x.Resource, g.Issuer)
	tokenURL, issuer, _, err := discoverTokenEndpoint(context.WithValue(ctx, oauth2.HTTPClient, hc), hc, x.Resource, g.Issuer)
	if err != nil {
		return Exchanged{}, err
	}
	jag, err := x.exchangeAt(ctx, subject, cmp.Or(x.Audience, issuer))
	if err != nil {
		return Exchanged{}, err
	}
	params := url.Values{"grant_type": {JWTBearerGrant}, "assertion": {jag.AccessToken}, "resource": {x.Resource}}
	cfg, err := tokenClient(*g, tokenURL, params)
	if err != nil {
		return Exchanged{}, err
	}
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err != nil {
		return Exchanged{}, fmt.Errorf("oauth: the ID-JAG's JWT-bearer grant at %s: %s", egress.Summary(issuer),
			without(redactRetrieve(err).Error(), jag.AccessToken))
	}
	return exchanged(tok), nil
}

// exchangeAt is the exchange at the token endpoint (RFC 8693) for audience.
func (x TokenExchange) exchangeAt(ctx context.Context, subject, audience string) (*oauth2.Token, error) {
	params := url.Values{
		"grant_type":         {TokenExchangeGrant},
		"subject_token":      {subject},
		"subject_token_type": {cmp.Or(x.SubjectTokenType, TokenTypeAccess)},
	}
	for k, v := range map[string]string{"requested_token_type": x.RequestedTokenType, "audience": audience, "resource": x.Resource} {
		if v != "" {
			params.Set(k, v)
		}
	}
	cfg, err := tokenClient(x.Client, x.Client.TokenURL, params)
	if err != nil {
		return nil, err
	}
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, x.Client.Outbound.Client(x.Client.TokenURL)))
	if err != nil {
		return nil, fmt.Errorf("oauth: token exchange at %s: %s", x.Client.TokenURL, without(redactRetrieve(err).Error(), subject))
	}
	return tok, nil
}

// tokenClient is c at tokenURL asking with params. It authenticates by
// its secret (in the header, or the body for client_secret_post), by a
// JWT it signs (private_key_jwt, for tokenURL), or by its workload's own
// JWT (c.Assertion: a client assertion, RFC 7523 §2.2).
func tokenClient(c ClientCredentials, tokenURL string, params url.Values) (clientcredentials.Config, error) {
	style := oauth2.AuthStyleInHeader
	if c.AuthMethod == "client_secret_post" || c.AuthMethod == PrivateKeyJWT || c.Assertion != nil {
		style = oauth2.AuthStyleInParams
	}
	cfg := clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: tokenURL, Scopes: c.Scopes, AuthStyle: style}
	if c.Assertion != nil {
		a, err := c.Assertion()
		if err != nil {
			return cfg, fmt.Errorf("oauth: the workload's assertion: %w", err)
		}
		params.Set("client_assertion_type", clientAssertionType)
		params.Set("client_assertion", a)
		cfg.ClientSecret = ""
	}
	if c.AuthMethod == PrivateKeyJWT {
		m, err := signingMethod(c.PrivateKey, c.SigningAlg)
		if err != nil {
			return cfg, err
		}
		assertion, err := clientAssertion(c.ClientID, tokenURL, c.PrivateKey, m)()
		if err != nil {
			return cfg, err
		}
		for k, v := range assertion {
			params[k] = v
		}
		cfg.ClientSecret = ""
	}
	cfg.EndpointParams = params
	return cfg, nil
}

// without is msg with secret cut out: a server's error description may
// quote the token it was sent.
func without(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "[redacted]")
}

// exchanged is tok as Exchange returns it: an hour's life when the
// answer named none.
func exchanged(tok *oauth2.Token) Exchanged {
	exp := tok.Expiry
	if exp.IsZero() {
		exp = time.Now().Add(defaultExchangeLife)
	}
	return Exchanged{Token: tok.AccessToken, Expires: exp}
}

// TokenType is RFC 8693's URN of a short token type name (access_token,
// jwt, id_token, id-jag), or name itself when it is a URN already.
func TokenType(name string) string {
	if name == "" || len(name) > 4 && name[:4] == "urn:" {
		return name
	}
	return tokenTypeURNPrefix + name
}
