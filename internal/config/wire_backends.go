// wire_backends.go is what the wire's backends add to a backend. It holds
// the tools begin's arguments (any YAML value, sent as JSON) and the
// secrets fed to the proxy. The secrets are named here, their values read
// from the gateway's environment or from files when the backend is built,
// never written in the YAML in clear. A process backend also names the
// proxy to start.
//
// A proxy backend is one framed connection; a proxy serves one at a time,
// and a later one re-attaches to the container begun (docs/wire.md 3.2), so a
// gateway that restarts finds its backend again. keepalive and
// keepalive_timeout are the connection's pings: a proxy whose host
// vanished is noticed within their sum (and the proxy does the same with
// a vanished gateway; a process backend's proxy is given them).

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate/internal/upstream"
)

// WireBackend is the part of a Backend only proxy and process backends
// use.
type WireBackend struct {
	// Arguments are the tools begin's arguments: any YAML value, sent as
	// JSON (proxy).
	Arguments any `yaml:"arguments"`
	// SecretsFrom feeds secret NAME the value of the gateway's environment
	// variable SecretsFrom[NAME] (proxy; a process backend's program takes
	// its values in its environment: env_from, env_files).
	SecretsFrom map[string]string `yaml:"secrets_from"`
	// SecretFiles feeds secret NAME the content of the file
	// SecretFiles[NAME], a trailing newline cut (proxy).
	SecretFiles map[string]string `yaml:"secret_files"`
	// ProxyCommand is the proxy to start beside the program (process;
	// default: this mcpgate's `proxy`).
	ProxyCommand []string `yaml:"proxy_command"`
	// KeepAlive is how long the connection may be quiet before a ping,
	// KeepAliveTimeout how long a pong may take (proxy, process; default
	// 30s and 20s; keepalive 0s: no pings).
	KeepAlive        *Duration `yaml:"keepalive"`
	KeepAliveTimeout *Duration `yaml:"keepalive_timeout"`
	// Postgres is the database the program's connections are paired
	// with (docs/wire.md 3.8): host:port, or a postgres:// URL without
	// credentials (the program's driver authenticates itself; the
	// gateway only dials). Unset: the program's connections are declined.
	Postgres string `yaml:"postgres"`
	// PostgresFrom names the gateway's environment variable that holds
	// the database instead (the same forms; a URL's credentials, if any,
	// are dropped: the gateway never authenticates, so it never needs them).
	PostgresFrom string `yaml:"postgres_from"`
	// PostgresFile names a file that holds it instead (a trailing newline
	// cut), as secret_files does for secrets.
	PostgresFile string `yaml:"postgres_file"`
	// Daemon is the ws:// (or wss://) endpoint the program's daemon
	// connections are relayed to, message for message (docs/wire.md 3.9).
	// Unset: they are declined.
	Daemon string `yaml:"daemon"`

	// TLS is a wss:// proxy's (proxy): the CA its certificate is checked
	// against (default: the system's), and the gateway's own certificate
	// and key for a proxy that admits only clients with one (mutual TLS).
	TLS *WireTLS `yaml:"tls"`
	// TokenFrom names the gateway's environment variable, TokenFile a file
	// (a trailing newline cut), holding the bearer token the proxy asks of
	// every request (proxy; never in clear in the YAML).
	TokenFrom string `yaml:"token_from"`
	TokenFile string `yaml:"token_file"`

	// Secrets exists only to be refused with a useful message.
	Secrets map[string]string `yaml:"secrets"`
}

// WireTLS is how the gateway meets a wss:// proxy: PEM files.
type WireTLS struct {
	// CAFile holds the certificates the proxy's is checked against
	// (default: the system's).
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are the gateway's client certificate and key,
	// for a proxy that admits only clients with one (--client-ca).
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// ArgumentsJSON is the begin's arguments as JSON; nil when none are set.
func (b BackendConfig) ArgumentsJSON() ([]byte, error) {
	if b.Arguments == nil {
		return nil, nil
	}
	return json.Marshal(b.Arguments)
}

// validateWireBackend checks a backend reached over the wire (kinds proxy
// and process): the pairs, the secrets, the begin's arguments, and each
// kind's own keys.
func validateWireBackend(key string, b BackendConfig) error {
	if err := validateKeepAlive(key, b); err != nil {
		return err
	}
	if b.Postgres != "" {
		if _, err := b.PostgresAddr(); err != nil {
			return bad(key+".postgres", "%v", err)
		}
	}
	if n := btoi(b.Postgres != "") + btoi(b.PostgresFrom != "") + btoi(b.PostgresFile != ""); n > 1 {
		return bad(key+".postgres", "postgres, postgres_from and postgres_file exclude each other")
	}
	if b.Daemon != "" {
		u, err := url.Parse(b.Daemon)
		switch {
		case err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "":
			return bad(key+".daemon", "%q is not a ws:// or wss:// URL", b.Daemon)
		case u.User != nil:
			return bad(key+".daemon", "must not carry credentials")
		}
	}
	if len(b.Secrets) > 0 {
		return bad(key+".secrets", "values in clear are not allowed; name the gateway's environment variables in secrets_from, or files in secret_files")
	}
	kind := validateProxyBackend
	if b.Kind == upstream.KindProcess {
		kind = validateProcessBackend
	}
	if err := kind(key, b); err != nil {
		return err
	}
	if len(b.HeadersFrom) > 0 {
		return bad(key+".headers_from", "not used by kind %s", b.Kind)
	}
	if _, err := b.ArgumentsJSON(); err != nil {
		return bad(key+".arguments", "cannot be sent as JSON: %v", err)
	}
	return validateSecretSources(key, b)
}

func validateProxyBackend(key string, b BackendConfig) error {
	u, _ := url.Parse(b.URL) // upstream.CheckTarget took it
	if b.TLS != nil {
		switch {
		case u.Scheme != "wss":
			return bad(key+".tls", "needs a wss:// url")
		case (b.TLS.CertFile == "") != (b.TLS.KeyFile == ""):
			return bad(key+".tls", "cert_file and key_file go together")
		}
	}
	if b.TokenFrom != "" && b.TokenFile != "" {
		return bad(key+".token_from", "token_from and token_file exclude each other")
	}
	if len(b.Command) > 0 {
		return bad(key+".command", "not used by kind proxy")
	}
	if len(b.ProxyCommand) > 0 {
		return bad(key+".proxy_command", "not used by kind proxy")
	}
	if len(b.EnvFrom) > 0 {
		return bad(key+".env_from", "not used by kind proxy")
	}
	if len(b.EnvFiles) > 0 {
		return bad(key+".env_files", "not used by kind proxy")
	}
	return nil
}

func validateProcessBackend(key string, b BackendConfig) error {
	if b.URL != "" {
		return bad(key+".url", "not used by kind process")
	}
	if err := validateEnv(key, b); err != nil {
		return err
	}
	if err := refuseProxyKeys(key, b); err != nil {
		return err
	}
	// The program is started here and speaks MCP over HTTP to its
	// proxy: no begin reaches it, and no secrets feed.
	const env = "its program is started here and reads its values from its environment: env_from, env_files"
	switch {
	case b.Arguments != nil:
		return bad(key+".arguments", "not used by kind process: no begin reaches its program (the arguments are a container's, kind proxy)")
	case len(b.SecretsFrom) > 0:
		return bad(key+".secrets_from", "not used by kind process: %s", env)
	case len(b.SecretFiles) > 0:
		return bad(key+".secret_files", "not used by kind process: %s", env)
	}
	return nil
}

// validateSecretSources checks each secret names one source.
func validateSecretSources(key string, b BackendConfig) error {
	for name, from := range b.SecretsFrom {
		if name == "" {
			return bad(key+".secrets_from", "a secret needs a name")
		}
		if from == "" {
			return bad(key+".secrets_from."+name, "names no environment variable")
		}
	}
	for name, path := range b.SecretFiles {
		if name == "" {
			return bad(key+".secret_files", "a secret needs a name")
		}
		if path == "" {
			return bad(key+".secret_files."+name, "names no file")
		}
		if _, dup := b.SecretsFrom[name]; dup {
			return bad(key+".secret_files."+name, "also in secrets_from; give each secret one source")
		}
	}
	return nil
}

// refuseWireKeys refuses the wire's keys on the other kinds.
func refuseWireKeys(key string, b BackendConfig) error {
	switch {
	case b.Arguments != nil:
		return bad(key+".arguments", "not used by kind %s", b.Kind)
	case len(b.SecretsFrom) > 0:
		return bad(key+".secrets_from", "not used by kind %s", b.Kind)
	case len(b.SecretFiles) > 0:
		return bad(key+".secret_files", "not used by kind %s", b.Kind)
	case len(b.Secrets) > 0:
		return bad(key+".secrets", "not used by kind %s (and values in clear are never allowed)", b.Kind)
	case len(b.ProxyCommand) > 0:
		return bad(key+".proxy_command", "not used by kind %s", b.Kind)
	case b.KeepAlive != nil:
		return bad(key+".keepalive", "not used by kind %s", b.Kind)
	case b.KeepAliveTimeout != nil:
		return bad(key+".keepalive_timeout", "not used by kind %s", b.Kind)
	case b.Postgres != "":
		return bad(key+".postgres", "not used by kind %s", b.Kind)
	case b.PostgresFrom != "":
		return bad(key+".postgres_from", "not used by kind %s", b.Kind)
	case b.PostgresFile != "":
		return bad(key+".postgres_file", "not used by kind %s", b.Kind)
	case b.Daemon != "":
		return bad(key+".daemon", "not used by kind %s", b.Kind)
	}
	return refuseProxyKeys(key, b)
}

// refuseProxyKeys refuses the keys of a proxy reached over the network on
// every other kind (a process backend's proxy is its own child, on
// loopback).
func refuseProxyKeys(key string, b BackendConfig) error {
	switch {
	case b.Kind == upstream.KindProxy:
		return nil
	case b.TLS != nil:
		return bad(key+".tls", "not used by kind %s", b.Kind)
	case b.TokenFrom != "":
		return bad(key+".token_from", "not used by kind %s", b.Kind)
	case b.TokenFile != "":
		return bad(key+".token_file", "not used by kind %s", b.Kind)
	}
	return nil
}

// validateKeepAlive checks the pings' durations.
func validateKeepAlive(key string, b BackendConfig) error {
	for name, d := range map[string]*Duration{"keepalive": b.KeepAlive, "keepalive_timeout": b.KeepAliveTimeout} {
		switch {
		case d == nil:
		case d.invalid != "":
			return bad(key+"."+name, "%q is not a duration (write 30s, 1m)", d.invalid)
		case d.Duration < 0:
			return bad(key+"."+name, "must not be negative")
		case name == "keepalive_timeout" && d.Duration == 0:
			return bad(key+"."+name, "must be more than 0s (keepalive: 0s turns the pings off)")
		}
	}
	return nil
}

// PostgresAddr is the host:port of the postgres key.
func (b BackendConfig) PostgresAddr() (string, error) { return PostgresAddr(b.Postgres, false) }

// PostgresAddr is the host:port of a database named host:port or by a
// postgres:// URL; a URL's credentials are refused, unless dropCredentials
// (a value read from the environment, never written in the file).
func PostgresAddr(v string, dropCredentials bool) (string, error) {
	given := v
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
			if dropCredentials {
				return "", errors.New("is not host:port or a postgres:// URL") // it may hold a secret: not quoted
			}
			return "", fmt.Errorf("%q is not host:port or a postgres:// URL", v)
		}
		if u.User != nil && !dropCredentials {
			return "", errors.New("must not carry credentials: the program's driver authenticates itself, and the gateway only dials")
		}
		v = u.Host
		if u.Port() == "" {
			v = net.JoinHostPort(u.Hostname(), "5432")
		}
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" || port == "" {
		if dropCredentials {
			return "", errors.New("is not host:port or a postgres:// URL") // it may hold a secret: not quoted
		}
		return "", fmt.Errorf("%q is not host:port or a postgres:// URL", given)
	}
	return v, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
