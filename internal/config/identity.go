// identity.go is whom a backend sees calling. With identity: per_user,
// every call carries the calling principal's own credential. It is got
// one of three ways (credential). vault: their own key, stored sealed
// under the key that vault: names. exchange: their token, exchanged at the
// identity provider. oauth: their own authorization of the backend, its
// tokens sealed under vault's key too.

package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpgate/mcpgate/internal/upstream"
)

// BackendCredential is where a per_user backend's credentials come from.
type BackendCredential struct {
	// Vault: each person stores their own key for the backend (the
	// console's My credentials page, or mcpgate credentials set).
	Vault *VaultCredential `yaml:"vault"`
	// Exchange: the token each caller signed in with (a JWT of auth.jwt,
	// an access token of an auth.oauth issuer) is exchanged at the
	// identity provider's token endpoint (RFC 8693). The token it gives,
	// whose audience is the backend, is sent as the bearer (http, sse).
	Exchange *ExchangeConfig `yaml:"exchange"`
	// OAuth: each person authorizes the backend themselves at its
	// authorization server, from a link the gateway gives them, and their
	// token is sent as the bearer (http, sse). Empty ({}) for a client the
	// gateway registers (metadata document or dynamic registration), or a
	// client registered out of band: client_id, client_secret_from or
	// client_secret_file with issuer, auth_method, scopes.
	OAuth *BackendOAuth `yaml:"oauth"`
}

// ExchangeConfig is how the gateway exchanges a caller's token. The
// gateway is a client of the token endpoint (token_url, required), with
// the keys of a backend's oauth (client_id; client_secret_from or
// client_secret_file, or auth_method: private_key_jwt with a key; scopes).
type ExchangeConfig struct {
	BackendOAuth `yaml:",inline"`
	// Audience is the token's audience asked for (the backend's name at
	// the provider); Resource its resource (default: the backend's URL).
	Audience string `yaml:"audience"`
	Resource string `yaml:"resource"`
	// SubjectTokenType is what the caller's token is: access_token (the
	// default), jwt or id_token. RequestedTokenType is what is asked for
	// (default: the provider's choice): access_token, jwt, or id-jag.
	SubjectTokenType   string `yaml:"subject_token_type"`
	RequestedTokenType string `yaml:"requested_token_type"`
	// Authorization is the gateway's client at the backend's own
	// authorization server (client_id, a secret or a private key; issuer
	// to hold it to one), with requested_token_type id-jag. The ID-JAG
	// is the assertion of its JWT-bearer grant there (MCP's
	// enterprise-managed authorization).
	Authorization *BackendOAuth `yaml:"authorization"`
}

// VaultCredential names where a person's stored key goes.
type VaultCredential struct {
	// Header carries the key (http, sse).
	Header string `yaml:"header"`
	// Env is the variable the key is set in (stdio, process): the
	// backend runs one child per principal.
	Env string `yaml:"env"`
}

// VaultConfig configures the sealing of each person's stored credentials.
type VaultConfig struct {
	SealingKey `yaml:",inline"`
}

// SealingKey names a 32-byte key written as 64 hex digits: the
// environment variable KeyFrom holds it, or the file KeyFile. Secrets
// never sit in the YAML.
type SealingKey struct {
	// KeyFrom names the environment variable holding the key, 64 hex
	// digits.
	KeyFrom string `yaml:"key_from"`
	// KeyFile holds the key instead, 64 hex digits (a trailing newline
	// cut).
	KeyFile string `yaml:"key_file"`
}

// Key reads the key (nil: none named). Errors name section's key, never
// its value.
func (k SealingKey) Key(section string) ([]byte, error) {
	var text string
	switch {
	case k.KeyFrom != "" && k.KeyFile != "":
		return nil, bad(section, "name the key in key_from or key_file, not both")
	case k.KeyFrom != "":
		v, ok := os.LookupEnv(k.KeyFrom)
		if !ok {
			return nil, bad(section+".key_from", "the environment variable %s is not set", k.KeyFrom)
		}
		text = v
	case k.KeyFile != "":
		b, err := os.ReadFile(k.KeyFile)
		if err != nil {
			return nil, bad(section+".key_file", "%v", err)
		}
		text = string(b)
	default:
		return nil, nil
	}
	key, err := ParseSessionKey(text)
	if err != nil {
		return nil, bad(section+".key", "%s", strings.Replace(err.Error(), "a session key", "the key", 1))
	}
	return key, nil
}

// String keeps the key out of any print of the configuration.
func (k SealingKey) String() string {
	return fmt.Sprintf("{key_from:%s key_file:%s}", k.KeyFrom, k.KeyFile)
}

// PerUser reports whether any backend gives each principal their own
// credential.
func (c *Config) PerUser() bool {
	for _, b := range c.Backends {
		if b.Identity.PerUser() {
			return true
		}
	}
	return false
}

func (c *Config) validateBackendIdentity(key string, b BackendConfig) error {
	var header, env, way string
	cred := b.Credential
	if cred != nil {
		ways := 0
		for _, set := range []bool{cred.Vault != nil, cred.Exchange != nil, cred.OAuth != nil} {
			if set {
				ways++
			}
		}
		switch {
		case ways > 1:
			return bad(key+".credential", "name one way to get a credential: vault, exchange or oauth")
		case cred.Vault != nil:
			way, header, env = upstream.WayVault, cred.Vault.Header, cred.Vault.Env
		case cred.Exchange != nil:
			way = upstream.WayExchange
		case cred.OAuth != nil:
			way = upstream.WayOAuth
		default:
			return bad(key+".credential", "names no way to get a credential (vault, exchange or oauth)")
		}
	}
	if p := upstream.CheckIdentity(b.Kind, b.Identity, way, header, env); p != nil {
		return bad(key+"."+p.Key, "%s", p.Why)
	}
	switch way {
	case upstream.WayExchange:
		return validateExchange(key, b, cred.Exchange)
	case upstream.WayOAuth:
		if err := c.validatePersonalOAuth(key, b); err != nil {
			return err
		}
	}
	if way == upstream.WayVault || way == upstream.WayOAuth {
		if k, err := c.Vault.Key("vault"); err != nil {
			return err
		} else if k == nil {
			return bad(key+".credential."+way, "needs the key that seals people's credentials: vault.key_file or vault.key_from")
		}
	}
	return nil
}

// validatePersonalOAuth checks backend key's credential.oauth: a client
// the gateway registers, or one registered out of band, and a console
// where each person begins (authentication on).
func (c *Config) validatePersonalOAuth(key string, b BackendConfig) error {
	o := b.Credential.OAuth
	switch {
	case c.Auth.Disabled:
		return bad(key+".credential.oauth", "needs authentication on: each person authorizes the backend as themselves, from their own console page")
	case c.OAuthClient.Disabled:
		return bad(key+".credential.oauth", "needs the gateway's OAuth client: oauth_client.disabled is set")
	case b.OAuth != nil:
		return bad(key+".oauth", "not beside credential.oauth: each person's own authorization is the backend's only one")
	case o.Grant != "" && o.Grant != GrantAuthorizationCode:
		return bad(key+".credential.oauth.grant", "not used: each person signs in by the authorization code grant")
	}
	if _, ok := b.HeadersFrom["Authorization"]; ok {
		return bad(key+".headers_from.Authorization", "the backend's bearer is each person's own token: no Authorization header beside it")
	}
	if o.ClientID == "" && o.ClientSecretFrom == "" && o.ClientSecretFile == "" && o.AuthMethod == "" && o.TokenURL == "" &&
		o.PrivateKeyFrom == "" && o.PrivateKeyFile == "" && o.AssertionFile == "" && o.AssertionFrom == "" && o.SigningAlg == "" {
		// A client the gateway registers; scopes and issuer may be set.
		if o.Issuer == "" {
			return nil
		}
		return fetchableURL(key+".credential.oauth.issuer", o.Issuer)
	}
	return validateAuthorizationCodeClient(key, key+".credential.oauth", o, b)
}

// validateExchange checks backend key's credential exchange: a token
// endpoint, the gateway's client there, and token types RFC 8693 names.
func validateExchange(key string, b BackendConfig, x *ExchangeConfig) error {
	prefix := key + ".credential.exchange"
	switch {
	case x.Grant != "":
		return bad(prefix+".grant", "not used: the grant is the token exchange")
	case x.Issuer != "":
		return bad(prefix+".issuer", "not used: name the token endpoint in token_url")
	case x.TokenURL == "":
		return bad(prefix+".token_url", "required: the identity provider's token endpoint")
	}
	if err := fetchableURL(prefix+".token_url", x.TokenURL); err != nil {
		return err
	}
	if x.AssertionFile != "" || x.AssertionFrom != "" {
		// The gateway authenticates with its workload's own JWT (a client
		// assertion), read as jwt_bearer's assertion is.
		a := x.BackendOAuth
		a.Grant = GrantJWTBearer
		if err := validateOAuthClientAuth(prefix, &a); err != nil {
			return err
		}
	} else if err := validateOAuthClientAuth(prefix, &x.BackendOAuth); err != nil {
		return err
	}
	switch x.SubjectTokenType {
	case "", "access_token", "jwt", "id_token":
	default:
		return bad(prefix+".subject_token_type", "%q is not access_token, jwt or id_token", x.SubjectTokenType)
	}
	if t := x.RequestedTokenType; t != "" && t != "access_token" && t != "jwt" && t != "id-jag" {
		return bad(prefix+".requested_token_type", "%q is not access_token, jwt or id-jag", t)
	}
	switch a := x.Authorization; {
	case x.RequestedTokenType == "id-jag" && a == nil:
		return bad(prefix+".authorization", "required with id-jag: the gateway's client at the backend's authorization server, which takes the ID-JAG")
	case x.RequestedTokenType != "id-jag" && a != nil:
		return bad(prefix+".authorization", "goes with requested_token_type: id-jag")
	case a != nil && (a.Grant != "" || a.TokenURL != ""):
		return bad(prefix+".authorization", "the grant is JWT-bearer with the ID-JAG, at the token endpoint the backend's metadata names: no grant or token_url")
	case a != nil:
		if err := validateOAuthClientAuth(prefix+".authorization", a); err != nil {
			return err
		}
	}
	if _, ok := b.HeadersFrom["Authorization"]; ok {
		return bad(key+".headers_from.Authorization", "the backend's bearer is each caller's exchanged token: no Authorization header beside it")
	}
	if b.OAuth != nil {
		return bad(prefix, "the backend's bearer is each caller's exchanged token: no oauth beside it")
	}
	return nil
}
