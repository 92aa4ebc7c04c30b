// backends.go relays the configured backends into the gateway's server.
// Each becomes a backends.Spec, with its secrets read from the gateway's
// environment. The Set that keeps them connected is reported on /readyz,
// which any prober may read, so it shows state and never a secret.

package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/mcp"
)

// backendSpec turns one configured backend into a Spec; key names it in
// errors ("backends[1]").
func backendSpec(key string, b config.BackendConfig, bo *backendOAuth, out *egress.Policy) (backends.Spec, error) {
	s := backends.Spec{Name: b.Name, Kind: b.Kind, Command: b.Command, URL: b.URL, Prefix: b.Prefix, MinRole: b.MinRole}
	s.Session, s.SessionIdleTimeout, s.SessionMax = b.Session, b.SessionIdleTimeout.Duration, b.SessionMax
	s.CallTimeout, s.MaxMessageBytes, s.ValidateArguments = b.CallTimeoutOrDefault(), b.MaxMessageBytes, b.ValidateArguments
	s.Era = eraFor(b.Era)
	s.Identity = b.Identity
	if c := b.Credential; c != nil && c.Vault != nil {
		s.CredentialHeader, s.CredentialEnv = c.Vault.Header, c.Vault.Env
	}
	for _, r := range b.MinRoles {
		s.MinRoles = append(s.MinRoles, backends.RoleRule{Kind: r.Kind, Name: r.Name, Role: r.Role})
	}
	for _, r := range b.ShortDescriptions {
		s.Shorts = append(s.Shorts, backends.ShortRule{Kind: r.Kind, Name: r.Name, Description: r.Description})
	}
	s.DeriveShort = b.DeriveShort
	s.Shapes = shapes(key, b)
	if b.Prefix == config.NoPrefix {
		s.Prefix = catalogue.NoPrefix
	}
	var src sources
	for _, name := range slices.Sorted(maps.Keys(b.EnvFrom)) {
		if v, ok := src.env(key+".env_from."+name, b.EnvFrom[name]); ok {
			s.Env = append(s.Env, name+"="+v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.EnvFiles)) {
		if v, ok := src.file(key+".env_files."+name, b.EnvFiles[name]); ok {
			s.Env = append(s.Env, name+"="+v)
		}
	}
	for _, h := range slices.Sorted(maps.Keys(b.HeadersFrom)) {
		if v, ok := src.env(key+".headers_from."+h, b.HeadersFrom[h]); ok {
			if s.Header == nil {
				s.Header = http.Header{}
			}
			s.Header.Set(h, v)
		}
	}
	if o := b.OAuth; o != nil && o.Grant != config.GrantAuthorizationCode {
		s.OAuth = clientCredentials(key+".oauth", o, &src, out)
	}
	if bo != nil && wantsAuthorization(b) {
		pre, scopes, issuer := authorizationClient(key+".oauth", b.OAuth, &src)
		s.Authorization = bo.authorization(b.Name, b.URL, pre, scopes, issuer)
	}
	if c := b.Credential; c != nil && c.OAuth != nil {
		if bo == nil {
			return s, fmt.Errorf("%s.credential.oauth: each person's authorization needs the gateway's OAuth client (oauth_client.disabled is set)", key)
		}
		pre, scopes, issuer := authorizationClient(key+".credential.oauth", c.OAuth, &src)
		s.People = bo.people(b.Name, b.URL, pre, scopes, issuer)
	}
	if c := b.Credential; c != nil && c.Exchange != nil {
		x := c.Exchange
		client := x.BackendOAuth
		if client.AssertionFile != "" || client.AssertionFrom != "" {
			client.Grant = config.GrantJWTBearer // read as jwt_bearer's is: a client assertion here
		}
		if cc := clientCredentials(key+".credential.exchange", &client, &src, out); cc != nil {
			s.CredentialHeader = "Authorization" // "Bearer " and the caller's exchanged token
			s.Exchange = &oauthclient.TokenExchange{Client: *cc, Audience: x.Audience, Resource: cmp.Or(x.Resource, b.URL),
				SubjectTokenType:   oauthclient.TokenType(cmp.Or(x.SubjectTokenType, "access_token")),
				RequestedTokenType: oauthclient.TokenType(x.RequestedTokenType)}
			if a := x.Authorization; a != nil {
				s.Exchange.Grant = clientCredentials(key+".credential.exchange.authorization", a, &src, out)
			}
		}
	}
	if err := wireSpec(key, b, &s, &src); err != nil {
		return s, err
	}
	if err := src.err(); err != nil {
		return s, err
	}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("%s: %w", key, err)
	}
	return s, nil
}

// authorizationClient is o's client of the authorization code grant (at
// key; o nil: one the gateway registers): the client registered out of
// band (nil: none), its secret read, the scopes and the issuer.
func authorizationClient(key string, o *config.BackendOAuth, src *sources) (*oauthclient.Registration, []string, string) {
	if o == nil {
		return nil, nil, ""
	}
	var pre *oauthclient.Registration
	if o.ClientID != "" {
		pre = &oauthclient.Registration{ClientID: o.ClientID, AuthMethod: o.AuthMethod}
		if o.ClientSecretFrom != "" || o.ClientSecretFile != "" {
			pre.ClientSecret, _, _ = src.either(key+".client_secret", o.ClientSecretFrom, o.ClientSecretFile)
		}
	}
	return pre, o.Scopes, o.Issuer
}

// clientCredentials is o's client of a token endpoint (a backend's
// client credentials or JWT-bearer grant, a credential's exchange, named
// by key), its secret, key or assertion read (nil when one could not be:
// src says why).
func clientCredentials(key string, o *config.BackendOAuth, src *sources, out *egress.Policy) *oauthclient.ClientCredentials {
	cc := &oauthclient.ClientCredentials{ClientID: o.ClientID, Scopes: o.Scopes, TokenURL: o.TokenURL, AuthMethod: o.AuthMethod,
		SigningAlg: o.SigningAlg, Issuer: o.Issuer, Outbound: out}
	switch {
	case o.Grant == config.GrantJWTBearer && o.AssertionFrom != "":
		assertion, _, ok := src.either(key+".assertion", o.AssertionFrom, "")
		if !ok {
			return nil
		}
		cc.Assertion = func() (string, error) { return assertion, nil }
	case o.Grant == config.GrantJWTBearer:
		// Read now, to refuse a configuration that cannot work, and again
		// at each token request: the platform renews the file.
		path := o.AssertionFile
		if _, _, ok := src.either(key+".assertion", "", path); !ok {
			return nil
		}
		cc.Assertion = func() (string, error) {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf("%s: %w", key+".assertion_file", err)
			}
			return strings.TrimSpace(string(b)), nil
		}
	case o.AuthMethod == oauthclient.PrivateKeyJWT:
		pemText, where, ok := src.either(key+".private_key", o.PrivateKeyFrom, o.PrivateKeyFile)
		if !ok {
			return nil
		}
		var err error
		if cc.PrivateKey, err = oauthclient.ParsePrivateKey([]byte(pemText), o.SigningAlg); err != nil {
			src.errs = append(src.errs, fmt.Errorf("%s: %w", where, err))
			return nil
		}
	default:
		var ok bool
		if cc.ClientSecret, _, ok = src.either(key+".client_secret", o.ClientSecretFrom, o.ClientSecretFile); !ok {
			return nil
		}
	}
	return cc
}

// eraFor is the backends.Spec era of a configured one.
func eraFor(era string) mcp.Era {
	switch era {
	case config.EraSession:
		return mcp.EraSession
	case config.EraSessionless:
		return mcp.EraSessionless
	}
	return mcp.EraAuto
}

// backendSpecs builds every configured backend's Spec before anything
// starts, so that a missing secret refuses New: every one missing, in
// every backend, named at once.
func backendSpecs(bs []config.BackendConfig, bo *backendOAuth, out *egress.Policy) ([]backends.Spec, error) {
	specs := make([]backends.Spec, 0, len(bs))
	var errs []error
	for i, b := range bs {
		s, err := backendSpec(fmt.Sprintf("backends[%d]", i), b, bo, out)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		specs = append(specs, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return specs, nil
}

// specNames are the specs' names, in order.
func specNames(specs []backends.Spec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// readiness is the body of /readyz.
type readiness struct {
	Ready bool `json:"ready"`
	// Starting: requests that read the catalogue are held until every
	// backend has had its first chance to come up (startup.go).
	Starting bool            `json:"starting"`
	Backends []backendStatus `json:"backends"`
}

type backendStatus struct {
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	Up        bool      `json:"up"`
	Since     time.Time `json:"since"`
	Restarts  int       `json:"restarts"`
	LastError string    `json:"lastError"`
}

// WaitReady waits until every backend is up, or ctx ends; it reports
// whether they are (what /readyz answers 200 to).
func (g *Gateway) WaitReady(ctx context.Context) bool {
	if g.backends == nil {
		return true
	}
	for {
		changed := g.backends.Changed()
		up := true
		for _, s := range g.backends.States() {
			up = up && s.Up
		}
		if up {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-changed:
		}
	}
}

// serveReadyz answers 200 when every backend is up (or there is none) and
// 503 otherwise. LastError comes scrubbed of header and env values by the
// backend package.
func (g *Gateway) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	r := readiness{Ready: true, Starting: g.starting(), Backends: []backendStatus{}}
	if g.backends != nil {
		for _, s := range g.backends.States() {
			r.Ready = r.Ready && s.Up
			r.Backends = append(r.Backends, backendStatus{Name: s.Name, Kind: s.Kind, Up: s.Up,
				Since: s.Since.UTC(), Restarts: s.Restarts, LastError: s.LastError})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !r.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(r)
}

// shapes are the backend's tools and prompts rules as the catalogue takes
// them, each named by its key; values are JSON (config checked that they
// encode).
func shapes(key string, b config.BackendConfig) catalogue.Shapes {
	var out catalogue.Shapes
	raw := func(v any) json.RawMessage { j, _ := json.Marshal(v); return j }
	raws := func(m map[string]any) map[string]json.RawMessage {
		if len(m) == 0 {
			return nil
		}
		out := make(map[string]json.RawMessage, len(m))
		for k, v := range m {
			out[k] = raw(v)
		}
		return out
	}
	for i, r := range b.Tools {
		s := catalogue.Shape{Key: fmt.Sprintf("%s.tools[%d]", key, i), Name: r.Name, Hide: r.Hide, Rename: r.Rename,
			Description: r.Description, Title: r.Title, Fixed: raws(r.Arguments.Fixed), Defaults: raws(r.Arguments.Defaults),
			HideArgs: r.Arguments.Hide}
		if len(r.Annotations) > 0 {
			s.Annotations = raw(r.Annotations)
		}
		out.Tools = append(out.Tools, s)
	}
	for i, r := range b.Prompts {
		out.Prompts = append(out.Prompts, catalogue.Shape{Key: fmt.Sprintf("%s.prompts[%d]", key, i), Name: r.Name, Hide: r.Hide,
			Rename: r.Rename, Description: r.Description, Fixed: raws(r.Arguments.Fixed)})
	}
	return out
}
