// cluster.go is what several replicas of one gateway share beyond the
// store: Redis (redis: {url, password_file}, or --redis) and the key that
// seals session ids (sessions.key_file, sessions.previous_key_file, or
// MCPGATE_SESSION_KEY). Secrets never sit in the YAML: the password and
// the keys come from files or the environment.

package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// RedisConfig configures the optional Redis.
type RedisConfig struct {
	// URL is redis://HOST:PORT/DB (rediss:// for TLS), without a password.
	URL string `yaml:"url"`
	// PasswordFile holds the password (a trailing newline cut); without it
	// MCPGATE_REDIS_PASSWORD is read, and else there is none.
	PasswordFile string `yaml:"password_file"`
}

// Sessions configures sealed session ids.
type Sessions struct {
	// KeyFile holds the sealing key, 64 hex digits; MCPGATE_SESSION_KEY
	// gives it instead. Without either, session ids are random and a
	// session lives on the replica that opened it. Keys derived from it
	// also seal a 2026-07-28 caller's requestState, so that its retry
	// opens on any replica.
	KeyFile string `yaml:"key_file"`
	// PreviousKeyFile holds the key before the last rotation: ids sealed
	// with it are still accepted.
	PreviousKeyFile string `yaml:"previous_key_file"`
	// MaxAge bounds how long a sealed id is accepted after it was issued
	// when there is no Redis to say whether it is still open (default 24h).
	MaxAge Duration `yaml:"max_age"`
}

// SessionKeySize is the length of a session-sealing key in bytes.
const SessionKeySize = 32

// ParseSessionKey reads a key written as 64 hex digits (surrounding space
// ignored, as a file's trailing newline is). The error never quotes the
// key.
func ParseSessionKey(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	if len(text) != 2*SessionKeySize {
		return nil, fmt.Errorf("a session key is %d hex digits, not %d characters", 2*SessionKeySize, len(text))
	}
	key, err := hex.DecodeString(text)
	if err != nil {
		return nil, errors.New("a session key is hex digits only")
	}
	return key, nil
}

// SessionKeyEnv names the environment variable holding the sealing key.
const SessionKeyEnv = "MCPGATE_SESSION_KEY"

// RedisPasswordEnv names the environment variable holding Redis's password.
const RedisPasswordEnv = "MCPGATE_REDIS_PASSWORD"

// RedisPassword reads the password (never quoted in an error).
func (r RedisConfig) RedisPassword() (string, error) {
	if r.PasswordFile == "" {
		return os.Getenv(RedisPasswordEnv), nil
	}
	b, err := os.ReadFile(r.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("redis.password_file: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// SessionKeys reads the sealing key and the previous one (nil: none).
// Errors name the file or the variable, never a key.
func (s Sessions) SessionKeys() (key, previous []byte, err error) {
	text, from := os.Getenv(SessionKeyEnv), SessionKeyEnv
	if s.KeyFile != "" {
		b, err := os.ReadFile(s.KeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("sessions.key_file: %w", err)
		}
		text, from = string(b), "sessions.key_file"
	}
	if text != "" {
		if key, err = ParseSessionKey(text); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", from, err)
		}
	}
	if s.PreviousKeyFile != "" {
		if key == nil {
			return nil, nil, bad("sessions.previous_key_file", "needs a current key (sessions.key_file or "+SessionKeyEnv+")")
		}
		b, err := os.ReadFile(s.PreviousKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("sessions.previous_key_file: %w", err)
		}
		if previous, err = ParseSessionKey(string(b)); err != nil {
			return nil, nil, fmt.Errorf("sessions.previous_key_file: %w", err)
		}
	}
	return key, previous, nil
}

func (c *Config) validateCluster() error {
	if c.Redis.URL != "" {
		u, err := url.Parse(c.Redis.URL)
		switch {
		case err != nil || u.Host == "":
			return bad("redis.url", "not a redis://HOST:PORT/DB URL")
		case u.Scheme != "redis" && u.Scheme != "rediss":
			return bad("redis.url", "the scheme is %q, not redis or rediss", u.Scheme)
		}
		if _, has := u.User.Password(); has {
			return bad("redis.url", "must not carry a password: set %s, or redis.password_file", RedisPasswordEnv)
		}
	} else if c.Redis.PasswordFile != "" {
		return bad("redis.password_file", "needs redis.url")
	}
	if c.Sessions.MaxAge.invalid != "" {
		return bad("sessions.max_age", "%q is not a duration", c.Sessions.MaxAge.invalid)
	}
	if c.Sessions.MaxAge.Duration < 0 {
		return bad("sessions.max_age", "must not be negative")
	}
	_, _, err := c.Sessions.SessionKeys()
	return err
}
