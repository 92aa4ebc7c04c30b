// Package telemetry is mcpgate's OpenTelemetry tracing. It makes one server
// span per MCP request the gateway handles, and under it a span of the
// gate's decision and a client span per call relayed to a backend (with
// the backend's kind and era). The caller's W3C trace context is taken
// from the HTTP request or the request's _meta, so that the gateway's
// spans join the caller's trace. A container proxy makes a server span of
// each exchange it relays under the gateway's client span (relay.go).
// Spans are exported over OTLP/HTTP by a batching exporter that the gateway
// flushes and stops when it closes.
//
// Spans carry names, never values: the method, the catalogue's name of the
// entry reached (a resource template's pattern, not the URI read), the
// backend, the outcome and the JSON-RPC code. Arguments, results, error
// messages, session ids and credentials are never recorded, since a trace
// store is read by more people than the gateway's callers trust with them.
//
// A Tracer that is off starts nothing and wraps nothing: the gateway does
// not install its observer, so tracing off costs nothing per request.
// There is no global state: the provider, propagator and exporter belong to
// the Tracer, never to the otel package's globals.
package telemetry
