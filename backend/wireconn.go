// wireconn.go is how a proxy or process backend reaches its `mcpgate
// proxy`: one framed connection made an mcp.Conn by package wiremcp, begun
// with the spec's arguments and fed its secrets. What the proxy answers of
// them is scrubbed of the secrets' values before anyone sees it.
//
// The proxy accepts one framed connection in its life and refuses every
// later one with HTTP 409. A restart of a proxy backend therefore re-dials
// a proxy that will refuse it unless the proxy itself was restarted; the
// backend stays down, with the 409 as its last error, until that happens.
// (A process backend restarts the proxy with the program, so it always
// meets a fresh one.)

package backend

import (
	"context"
	"errors"

	"github.com/mcpgate/mcpgate/wiremcp"
)

// dialWire dials the proxy at url for this backend; ctx bounds the dial,
// the begin, the secrets and the Info.
func (b *Backend) dialWire(ctx context.Context, url string) (*wiremcp.Conn, error) {
	s := b.spec
	c, err := wiremcp.Dial(ctx, url, wiremcp.DialOptions{
		Options: wiremcp.Options{Arguments: s.Arguments, ReadLimit: int64(s.MaxMessageBytes)},
		Name:    s.Name, Secrets: s.Secrets, Logger: b.log,
	})
	var re *wiremcp.RefusedError
	if errors.As(err, &re) {
		re.Value = scrub(re.Value, s.secrets())
	}
	return c, err
}
