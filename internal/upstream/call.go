package upstream

// Call is what an observer of the relay is told of one call going out to
// a backend: whose it is, how the backend is reached, and the protocol
// revision spoken on the call's session.
type Call struct {
	Backend string
	Kind    Kind
	Version string
}

// Transport is the network transport of a kind, in OpenTelemetry's terms:
// "pipe" for a process spoken to on its standard streams, "tcp" for the
// others.
func (k Kind) Transport() string {
	if k == KindStdio {
		return "pipe"
	}
	return "tcp"
}
