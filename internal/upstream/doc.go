// Package upstream is what the gateway's backends and the container proxy
// share when they speak to one MCP server on a caller's behalf: how long
// to wait before reaching it again (Backoff).
package upstream
