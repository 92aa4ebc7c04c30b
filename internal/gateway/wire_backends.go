// wire_backends.go builds what a proxy or process backend adds to its Spec:
// the begin's arguments as JSON, and the secrets' values. These are read
// from the gateway's environment and from files now, so that a missing one
// refuses the configuration with its key named, and never its value.

package gateway

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

// wireSpec fills s's Arguments, Secrets and ProxyCommand from b; what src
// cannot read it leaves to src to report.
func wireSpec(key string, b config.BackendConfig, s *backends.Spec, src *sources) error {
	if b.Kind != upstream.KindProxy && b.Kind != upstream.KindProcess {
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
		if v, ok := src.env(key+".postgres_from", b.PostgresFrom); ok {
			addr, err := config.PostgresAddr(v, true)
			if err != nil {
				return fmt.Errorf("%s.postgres_from: the value of %s %v", key, b.PostgresFrom, err)
			}
			s.Postgres = addr
		}
	}
	if b.PostgresFile != "" {
		if v, ok := src.file(key+".postgres_file", b.PostgresFile); ok {
			addr, err := config.PostgresAddr(v, true)
			if err != nil {
				return fmt.Errorf("%s.postgres_file: the content of %s %v", key, b.PostgresFile, err)
			}
			s.Postgres = addr
		}
	}
	s.Daemon = b.Daemon
	if b.TokenFrom != "" || b.TokenFile != "" {
		s.WireToken, _, _ = src.either(key+".token", b.TokenFrom, b.TokenFile)
	}
	if b.TLS != nil {
		cfg, err := wireTLS(key, b.TLS)
		if err != nil {
			src.errs = append(src.errs, err)
		}
		s.WireTLS = cfg
	}
	for _, name := range slices.Sorted(maps.Keys(b.SecretsFrom)) {
		if v, ok := src.env(key+".secrets_from."+name, b.SecretsFrom[name]); ok {
			setSecret(s, name, v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.SecretFiles)) {
		if v, ok := src.file(key+".secret_files."+name, b.SecretFiles[name]); ok {
			setSecret(s, name, v)
		}
	}
	return nil
}

// wireTLS is how the gateway meets a wss:// proxy: the CA its
// certificate is checked against (none: the system's) and the gateway's
// client certificate (mutual TLS). Errors name the key and the file.
func wireTLS(key string, t *config.WireTLS) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pool, err := proxy.CertPool(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%s.tls.ca_file: %w", key, err)
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%s.tls.cert_file: the certificate %s or its key %s: %w", key, t.CertFile, t.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func setSecret(s *backends.Spec, name, value string) {
	if s.Secrets == nil {
		s.Secrets = map[string]string{}
	}
	s.Secrets[name] = value
}

// sources reads the values a configuration names — the gateway's
// environment variables, files — and gathers every one that cannot be
// read, so that one run names them all (by key, variable and file, never
// a value).
type sources struct{ errs []error }

// env is the variable from's value; key is where the file names it.
func (c *sources) env(key, from string) (string, bool) {
	v, ok := os.LookupEnv(from)
	if !ok {
		c.errs = append(c.errs, fmt.Errorf("%s: environment variable %s is not set", key, from))
	}
	return v, ok
}

// file is the content of the file at path, a trailing newline cut.
func (c *sources) file(key, path string) (string, bool) {
	v, err := os.ReadFile(path)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s: %w", key, err)) // names the file, never its content
		return "", false
	}
	return strings.TrimRight(string(v), "\r\n"), true
}

// either is a value named by key_from (an environment variable, from) or
// else key_file (a file, file), and the key it was read at.
func (c *sources) either(key, from, file string) (v, where string, ok bool) {
	if from != "" {
		v, ok = c.env(key+"_from", from)
		return v, key + "_from", ok
	}
	v, ok = c.file(key+"_file", file)
	return v, key + "_file", ok
}

// err is every value that could not be read, or nil.
func (c *sources) err() error { return errors.Join(c.errs...) }
