package upstream

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Relisten is the pause before a subscriptions/listen stream that a
// 2026-07-28 server ended is opened again.
const Relisten = time.Second

// ListenParams are the params of the subscriptions/listen a relay keeps
// open on a 2026-07-28 server: every list change, which a session server
// would have told unasked, and the resources subscribed to (sorted).
func ListenParams(subscriptions []string) json.RawMessage {
	b := []byte(`{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true`)
	if len(subscriptions) > 0 {
		uris := slices.Sorted(slices.Values(subscriptions))
		b = append(b, `,"resourceSubscriptions":[`...)
		for i, uri := range uris {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonrpc.AppendString(b, uri)
		}
		b = append(b, ']')
	}
	return append(b, "}}"...)
}
