// export_test.go lends the external tests (package backend_test) what the
// internal ones already have, so that neither writes it again.

package backend

// ServeKillableProxy is serveKillableProxy.
var ServeKillableProxy = serveKillableProxy
