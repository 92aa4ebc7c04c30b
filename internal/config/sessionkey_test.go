// sessionkey_test.go pins how a session-sealing key is read: 64 hex
// digits, a file's newline ignored, and an error that never quotes it.

package config_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/config"
)

func TestParseSessionKey(t *testing.T) {
	good := strings.Repeat("0f", config.SessionKeySize)
	if k, err := config.ParseSessionKey(good + "\n"); err != nil || len(k) != config.SessionKeySize {
		t.Errorf("a file's key with its newline: %v", err)
	}
	secret := strings.Repeat("zz", config.SessionKeySize)
	for _, bad := range []string{"", good[:62], good + "00", secret} {
		_, err := config.ParseSessionKey(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("the error quotes the key: %v", err)
		}
	}
}

func TestClusterKeysAreRefusedByName(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/good.key"
	short := dir + "/short.key"
	writeFile(t, good, strings.Repeat("ab", 32)+"\n")
	writeFile(t, short, "hunter2")
	for _, c := range []struct {
		rule, yaml, key string
	}{
		{"a password in the Redis URL", "redis: {url: 'redis://:hunter2@127.0.0.1:6379/0'}", "redis.url"},
		{"a Redis URL of another scheme", "redis: {url: 'http://127.0.0.1:6379'}", "redis.url"},
		{"a Redis password file without a URL", "redis: {password_file: " + good + "}", "redis.password_file"},
		{"a key file that is not a key", "sessions: {key_file: " + short + "}", "sessions.key_file"},
		{"a previous key without a current one", "sessions: {previous_key_file: " + good + "}", "sessions.previous_key_file"},
		{"a key file that is not there", "sessions: {key_file: " + dir + "/none}", "sessions.key_file"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			t.Setenv(config.SessionKeyEnv, "")
			path := dir + "/c.yaml"
			writeFile(t, path, c.yaml+"\n")
			cfg, err := config.Load(path)
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), c.key) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("got %v, want an error naming %s and quoting no secret", err, c.key)
			}
		})
	}
	t.Setenv(config.SessionKeyEnv, strings.Repeat("cd", 32))
	path := dir + "/ok.yaml"
	writeFile(t, path, "redis: {url: 'redis://127.0.0.1:6379/0'}\nsessions: {previous_key_file: "+good+"}\n")
	cfg, err := config.Load(path)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	key, prev, err := cfg.Sessions.SessionKeys()
	if err != nil || key[0] != 0xcd || prev[0] != 0xab {
		t.Errorf("keys %x %x %v", key, prev, err)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
