// client_default.go counts the client Conns that use the package's default
// HTTP client, so that the last one to close closes the idle connections
// that client keeps: a gateway that has closed every HTTP backend keeps no
// socket to them open. (When the default was http.DefaultClient, tests got
// this for free from httptest.Server.Close, which closes
// http.DefaultTransport's idle connections; a gateway test then found the
// relay's kept-alive connection to its backend still open.)

package mcphttp

import "sync/atomic"

var defaultClientUsers atomic.Int64

// useDefaultClient records one more Conn on the default client.
func useDefaultClient() { defaultClientUsers.Add(1) }

// releaseDefaultClient records that one such Conn has closed; the last
// closes the default client's idle connections. One opened meanwhile
// at worst dials again.
func releaseDefaultClient() {
	if defaultClientUsers.Add(-1) == 0 {
		defaultHTTPClient.CloseIdleConnections()
	}
}
