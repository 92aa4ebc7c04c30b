// wireconn.go is how a proxy or process backend reaches its `mcpgate
// proxy`: one framed connection made an mcp.Conn by package wiremcp, begun
// with the spec's arguments and fed its secrets. What the proxy answers of
// them is scrubbed of the secrets' values before anyone sees it.
//
// The proxy serves one framed connection at a time (HTTP 409 to another
// while it is open), and a later connection re-attaches to the container
// begun. A restart of a proxy backend, or of the gateway, re-dials and
// finds the backend again once the old connection has ended. That is at
// once when it was closed, and within the keepalive when its peer vanished.

package backends

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wiremcp"
)

// dialWire dials the proxy at url for this backend; ctx bounds the dial,
// the begin, the secrets and the Info.
func (b *Backend) dialWire(ctx context.Context, url string) (*wiremcp.Conn, error) {
	s := b.spec
	o := wiremcp.DialOptions{
		Options: wiremcp.Options{Arguments: s.Arguments, ReadLimit: int64(s.MaxMessageBytes),
			KeepAlive: s.KeepAlive, KeepAliveTimeout: s.KeepAliveTimeout},
		Name: s.Name, Secrets: s.Secrets, Logger: b.log, Daemon: s.Daemon,
	}
	if s.WireTLS != nil || s.WireToken != "" {
		o.Dial = &websocket.DialOptions{}
		if s.WireTLS != nil {
			// One connection at a time, no keep-alive to share: the
			// transport lives as long as the framed connection does.
			o.Dial.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: s.WireTLS, Proxy: http.ProxyFromEnvironment}}
		}
		if s.WireToken != "" {
			o.Dial.HTTPHeader = http.Header{"Authorization": {"Bearer " + s.WireToken}}
		}
	}
	if s.Postgres != "" {
		o.Postgres = func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", s.Postgres)
		}
	}
	c, err := wiremcp.Dial(ctx, url, o)
	var re *wiremcp.RefusedError
	if errors.As(err, &re) {
		re.Value = scrub(re.Value, s.secrets())
	}
	return c, err
}
