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
	var header, env string
	vault := b.Credential != nil && b.Credential.Vault != nil
	if vault {
		header, env = b.Credential.Vault.Header, b.Credential.Vault.Env
	}
	if b.Credential != nil && !vault {
		return bad(key+".credential", "names no way to get a credential (vault)")
	}
	if p := upstream.CheckIdentity(b.Kind, b.Identity, vault, header, env); p != nil {
		return bad(key+"."+p.Key, "%s", p.Why)
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
