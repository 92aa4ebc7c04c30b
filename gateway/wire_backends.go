// wire_backends.go builds what a proxy or process backend adds to its
// Spec: the begin's arguments as JSON and the secrets' values, read from
// the gateway's environment and from files now, so that a missing one
// refuses the configuration with its key named (and never its value).

package gateway

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpgate/mcpgate/backend"
	"github.com/mcpgate/mcpgate/config"
)

// wireSpec fills s's Arguments, Secrets and ProxyCommand from b.
func wireSpec(key string, b config.Backend, s *backend.Spec) error {
	if b.Kind != config.BackendProxy && b.Kind != config.BackendProcess {
		return nil
	}
	args, err := b.ArgumentsJSON()
	if err != nil {
		return fmt.Errorf("%s.arguments: cannot be sent as JSON: %v", key, err)
	}
	s.Arguments, s.ProxyCommand = args, b.ProxyCommand
	if b.KeepAlive != nil {
		s.KeepAlive = b.KeepAlive.Duration
		if s.KeepAlive == 0 {
			s.KeepAlive = -1 // 0s in the file: no pings
		}
	}
	if b.KeepAliveTimeout != nil {
		s.KeepAliveTimeout = b.KeepAliveTimeout.Duration
	}
	if b.Postgres != "" {
		s.Postgres, _ = b.PostgresAddr() // checked by config
	}
	if b.PostgresFrom != "" {
		v, ok := os.LookupEnv(b.PostgresFrom)
		if !ok {
			return fmt.Errorf("%s.postgres_from: environment variable %s is not set", key, b.PostgresFrom)
		}
		addr, err := config.PostgresAddr(v, true)
		if err != nil {
			return fmt.Errorf("%s.postgres_from: the value of %s %v", key, b.PostgresFrom, err)
		}
		s.Postgres = addr
	}
	if b.PostgresFile != "" {
		v, err := os.ReadFile(b.PostgresFile)
		if err != nil {
			return fmt.Errorf("%s.postgres_file: %w", key, err) // names the file, never its content
		}
		addr, err := config.PostgresAddr(strings.TrimRight(string(v), "\r\n"), true)
		if err != nil {
			return fmt.Errorf("%s.postgres_file: the content of %s %v", key, b.PostgresFile, err)
		}
		s.Postgres = addr
	}
	s.Daemon = b.Daemon
	for name, from := range b.SecretsFrom {
		v, ok := os.LookupEnv(from)
		if !ok {
			return fmt.Errorf("%s.secrets_from.%s: environment variable %s is not set", key, name, from)
		}
		setSecret(s, name, v)
	}
	for name, path := range b.SecretFiles {
		v, err := os.ReadFile(path)
		if err != nil {
			// The error names the file, never its content.
			return fmt.Errorf("%s.secret_files.%s: %w", key, name, err)
		}
		setSecret(s, name, strings.TrimRight(string(v), "\r\n"))
	}
	return nil
}

func setSecret(s *backend.Spec, name, value string) {
	if s.Secrets == nil {
		s.Secrets = map[string]string{}
	}
	s.Secrets[name] = value
}
