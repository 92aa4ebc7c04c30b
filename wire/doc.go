// Package wire speaks the container wire: the binary WebSocket protocol
// between a gateway (the client, which dials) and the proxy that sits
// beside a tool container's MCP server (the server, which is dialled).
//
// # The model
//
// The wire has two forms on one port.
//
// The per-path form is one WebSocket per exchange: the client sends one
// binary message (an MCP method's params) and the server answers with one
// binary message, a [Response], and closes. [CallPath], [SubscribePath],
// [ServePath] and [ServeSubscription] are that form.
//
// The framed form is one long-lived WebSocket at "/" carrying many
// exchanges at once. Every binary message is one [Frame]: a type, a scope
// number, a channel number and a payload. The client opens a scope with a
// request frame and reads the scope's responses until its finish; inside an
// open scope either side opens channels the same way. [Client] and [Serve]
// are the two roles of that multiplexer: a [Scope] or [Channel] is read as
// a stream with Next, and a [Handler] answers through a [Responder]. A
// channel that carries a byte stream (a pair) is read with
// [Channel.CopyNext], which gives each long response's buffer back for the
// next, and [Responder.Pump] writes one. The client's frames reach the
// socket in one write each ([JoinFrames]).
//
// The multiplexer knows nothing of payloads. The payload codecs —
// [ScopeRequest], [BeginAnswer], [ChannelRequest], [ProxyChannelRequest],
// [Response], [InfoAnswer], [SecretsAnswer] — each have an Append and a Decode that are
// each other's inverse, and every way a decode fails is a typed error
// (errors.go).
//
// # Raw JSON
//
// JSON carried by a payload (MCP params and results, error values, the Info
// document, the secrets' values) is validated but never re-encoded. Decoded
// values hold the bytes as they arrived. Unknown fields, _meta and integers
// beyond a float64 so survive a relay byte for byte. Decoded values alias
// the bytes they were decoded from.
//
// # A dozen lines
//
//	c, err := wire.Dial(ctx, "ws://127.0.0.1:14979/", nil)
//	if err != nil { … }
//	defer c.Close()
//	scope, err := c.Open(ctx, wire.BeginTools{Arguments: args}.Append(nil))
//	answer, err := scope.Next(ctx) // [0] Begun, or [1] and an error
//	ch, err := scope.OpenChannel(ctx, wire.McpListTools{Params: []byte("null")}.Append(nil))
//	payload, err := ch.Next(ctx)
//	resp, err := wire.DecodeResponse(payload)
package wire
