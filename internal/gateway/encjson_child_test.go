// encjson_child_test.go is a small MCP server written the way many Go MCP
// servers are: each request decoded with encoding/json into typed structs,
// whose field matching ignores case. It is the backend of the hostile-keys
// tests (hostile_keys_test.go), over stdio (as a child process: the test
// binary with bkChildEnv=ejRoleStdio) and over Streamable HTTP (in the
// test process). It appends every tool it runs and every URI it reads to
// a journal file, so that a test sees what reached it.
//
// Every identifier here starts with "ej" so that it cannot collide with
// the other tests of this package.

package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
)

// ejRoleStdio, as the value of bkChildEnv, makes the test binary this
// server on stdin and stdout; its one argument is the journal's path.
const ejRoleStdio = "encoding-json"

// ejServer answers MCP requests decoded by encoding/json.
type ejServer struct {
	journal string
	mu      sync.Mutex
}

type ejRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// record appends one line to the journal.
func (s *ejServer) record(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.journal, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

// answer returns the response to one message, or nil for a notification.
func (s *ejServer) answer(raw []byte) []byte {
	var req ejRequest
	if err := json.Unmarshal(raw, &req); err != nil || req.ID == nil {
		return nil
	}
	var result any
	switch req.Method {
	case "initialize":
		result = map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{}, "resources": map[string]any{}},
			"serverInfo":      map[string]any{"name": "encoding-json", "version": "1"},
		}
	case "ping":
		result = map[string]any{}
	case "tools/list":
		tool := func(name string) map[string]any {
			return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
		}
		typed := tool("typed")
		typed["inputSchema"] = map[string]any{"type": "object", "required": []any{"path"},
			"properties": map[string]any{"path": map[string]any{"type": "string"}}}
		broken := tool("broken")
		broken["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "#/nowhere"}}}
		result = map[string]any{"tools": []any{tool("public"), tool("secret"), tool("huge"), typed, broken}}
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		_ = json.Unmarshal(req.Params, &p)
		s.record("tool " + p.Name)
		text := "ran " + p.Name
		if n, ok := p.Arguments["bytes"].(float64); ok && p.Name == "huge" {
			text = strings.Repeat("x", int(n)) // an answer as large as asked
		}
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	case "resources/list":
		result = map[string]any{"resources": []any{map[string]any{"uri": "file:///etc/hostname", "name": "hostname"}}}
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(req.Params, &p)
		s.record("read " + p.URI)
		result = map[string]any{"contents": []any{map[string]any{"uri": p.URI, "text": "contents of " + p.URI}}}
	case "resources/templates/list":
		result = map[string]any{"resourceTemplates": []any{}}
	case "prompts/list":
		result = map[string]any{"prompts": []any{}}
	default:
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"error": map[string]any{"code": -32601, "message": "method not found"}})
		return out
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	return out
}

// serveStdio answers line by line until stdin ends.
func (s *ejServer) serveStdio(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if reply := s.answer(sc.Bytes()); reply != nil {
			if _, err := out.Write(append(reply, '\n')); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// ServeHTTP is Streamable HTTP at its plainest: each POST answered with
// JSON, a session id issued at initialize, no standalone stream.
func (s *ejServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	reply := s.answer(body)
	if reply == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Mcp-Session-Id", "ej-session")
	_, _ = w.Write(reply)
}
