// logging.go is MCP's logging utility: the eight syslog levels a client
// chooses among with logging/setLevel, below which the server stays quiet.

package mcp

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// LogLevel is an MCP (syslog) severity.
type LogLevel string

const (
	LevelDebug     LogLevel = "debug"
	LevelInfo      LogLevel = "info"
	LevelNotice    LogLevel = "notice"
	LevelWarning   LogLevel = "warning"
	LevelError     LogLevel = "error"
	LevelCritical  LogLevel = "critical"
	LevelAlert     LogLevel = "alert"
	LevelEmergency LogLevel = "emergency"
)

var levelRank = map[LogLevel]int32{
	LevelDebug: 1, LevelInfo: 2, LevelNotice: 3, LevelWarning: 4,
	LevelError: 5, LevelCritical: 6, LevelAlert: 7, LevelEmergency: 8,
}

// Rank orders the levels: 1 for debug, the most verbose, up to 8 for
// emergency; 0 for a word that is not a level.
func (l LogLevel) Rank() int { return int(levelRank[l]) }

// Known reports whether l is one of the eight levels.
func (l LogLevel) Known() bool {
	_, ok := levelRank[l]
	return ok
}

func serveSetLevel(_ context.Context, r *Request) (json.RawMessage, error) {
	var p struct {
		Level LogLevel `json:"level"`
	}
	if err := decodeParams(r.Params, &p); err != nil {
		return nil, err
	}
	rank, ok := levelRank[p.Level]
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: unknown log level",
			map[string]any{"level": p.Level})
	}
	if r.Session != nil { // a stateless client's level has nowhere to stay
		r.Session.logLevel.Store(rank)
	}
	return emptyResult, nil
}

// logs reports whether a message at level passes the session's threshold.
// Before any setLevel every level passes.
func (s *Session) logs(level LogLevel) bool {
	return levelRank[level] >= s.logLevel.Load()
}
