// stdio.go serves the gateway to a client that launched it: one session on
// stdin and stdout, as the configured local identity (a process that can
// start the gateway needs no credential to talk to it).

package gateway

import (
	"context"
	"io"

	"github.com/mcpgate/mcpgate/stdio"
)

// ServeStdio serves one session on in and out until in ends or ctx does.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	g.stdioSessions.Add(1)
	defer g.stdioSessions.Add(-1)
	id := g.localIdentity()
	id.View = g.viewFor(id)
	return stdio.Serve(ctx, g.server, in, out, stdio.Options{Logger: g.log, Identity: id, Sessionless: g.cfg.HTTP.SessionlessOn()})
}
