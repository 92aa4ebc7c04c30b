// identity.go is whom a backend sees calling. With identity: per_user,
// every call carries the calling principal's own credential. For now that
// is credential.vault: each person's own key, stored sealed under the key
// that vault: names, and sent as the header or environment variable
// credential.vault names.

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
	vault := cred != nil && cred.Vault != nil
	switch {
	case vault && cred.Exchange != nil:
		return bad(key+".credential", "name one way to get a credential: vault or exchange")
	case vault:
		way, header, env = upstream.WayVault, cred.Vault.Header, cred.Vault.Env
	case cred != nil && cred.Exchange != nil:
		way = upstream.WayExchange
	case cred != nil:
		return bad(key+".credential", "names no way to get a credential (vault or exchange)")
	}
	if p := upstream.CheckIdentity(b.Kind, b.Identity, way, header, env); p != nil {
		return bad(key+"."+p.Key, "%s", p.Why)
	}
	if way == upstream.WayExchange {
		return validateExchange(key, b, cred.Exchange)
	}
	if vault {
		if k, err := c.Vault.Key("vault"); err != nil {
			return err
		} else if k == nil {
			return bad(key+".credential.vault", "needs the key that seals people's credentials: vault.key_file or vault.key_from")
		}
	}
	return nil
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
