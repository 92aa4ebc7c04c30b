package upstream

import "encoding/json"

// relayedCapabilities are what a relaying client declares: the gateway
// and the proxy pass a server's sampling, elicitation and roots requests
// on to their own callers.
const relayedCapabilities = `{"roots":{},"sampling":{},"elicitation":{}}`

// ClientCapabilities are the capabilities a relaying client declares to
// its server (a fresh copy each call).
func ClientCapabilities() json.RawMessage { return json.RawMessage(relayedCapabilities) }
