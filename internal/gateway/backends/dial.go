// dial.go reaches a backend server by its kind: a child process over
// stdio, or an HTTP endpoint with the spec's static headers.

package backends

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/stdio"
)

// dial returns a connection to the backend. A stdio child lives until the
// Conn is closed or ctx ends; closing it ends the child's process group.
// c, when set, is a per_user principal's own credential: a value goes in
// the header or variable the spec names; an authorization sends its
// tokens.
func (b *Backend) dial(ctx context.Context, c credential) (mcp.Conn, error) {
	s := b.spec
	if c.value != "" {
		s = s.withCredential(c.value)
	}
	if c.authz != nil {
		s.Authorization, s.People = c.authz, nil
	}
	switch s.Kind {
	case upstream.KindStdio:
		var env []string
		if len(s.Env) > 0 {
			env = append(os.Environ(), s.Env...)
		}
		return stdio.Command(ctx, s.Command[0], s.Command[1:], stdio.CommandOptions{
			Name: s.Name, NameInLogger: true, Env: env, Logger: b.log, MaxLineBytes: s.MaxMessageBytes,
		})
	case upstream.KindHTTP:
		return mcphttp.DialStreamable(ctx, s.URL, b.httpOptions(s))
	case upstream.KindSSE:
		dctx, cancel := context.WithTimeout(ctx, b.opts.StartTimeout)
		defer cancel()
		return mcphttp.DialSSE(dctx, s.URL, b.httpOptions(s))
	case upstream.KindProxy:
		dctx, cancel := context.WithTimeout(ctx, b.opts.StartTimeout)
		defer cancel()
		return b.dialWire(dctx, s.URL)
	case upstream.KindProcess:
		return b.startProcess(ctx, s.Env)
	}
	return nil, fmt.Errorf("backend %s: unknown kind %q", s.Name, s.Kind)
}

// withCredential is s with a principal's credential in its header or
// variable (the spec's own headers and environment are not changed).
func (s Spec) withCredential(value string) Spec {
	if s.CredentialHeader != "" {
		s.Header = s.Header.Clone()
		if s.Header == nil {
			s.Header = http.Header{}
		}
		s.Header.Set(s.CredentialHeader, value)
	}
	if s.CredentialEnv != "" {
		s.Env = append(slices.Clip(s.Env), s.CredentialEnv+"="+value)
	}
	return s
}

// httpOptions are an http or sse backend's client options (s is its spec,
// with a principal's credential when it has one): its headers, and its
// OAuth client's access tokens when it has one.
func (b *Backend) httpOptions(s Spec) mcphttp.ClientOptions {
	o := mcphttp.ClientOptions{HTTPClient: b.http, Header: s.Header, Logger: b.log, MaxMessageBytes: s.MaxMessageBytes}
	switch {
	case b.oauthClient != nil:
		o.HTTPClient = b.oauthClient()
	case s.Authorization != nil:
		o.WrapTransport = s.Authorization.Wrap
	case s.People != nil:
		o.WrapTransport = s.People.Wrap
	}
	return o
}
