// request.go holds the checks every MCP POST goes through on either HTTP
// transport: media types, body size, and reading the body once.

package mcphttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// acceptsBoth reports whether an Accept header lists both media types a
// Streamable HTTP POST must accept. Like the TypeScript SDK, wildcards do
// not count: a client must say it can read an event stream.
func acceptsBoth(accept string) bool {
	return acceptsType(accept, "application/json") && acceptsType(accept, "text/event-stream")
}

func acceptsType(accept, want string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		mt := strings.TrimSpace(part)
		if i := strings.IndexByte(mt, ';'); i >= 0 {
			mt = strings.TrimSpace(mt[:i])
		}
		if strings.EqualFold(mt, want) {
			return true
		}
	}
	return false
}

// prefersStream reports whether the client ranks text/event-stream above
// application/json: by q-value, then by the order it listed them. A client
// that prefers JSON (the SDKs list it first) gets a plain JSON answer
// unless the server must send something before the answer.
func prefersStream(accept string) bool {
	bestJSON, bestSSE := -1.0, -1.0
	posJSON, posSSE := -1, -1
	i := -1
	for part := range strings.SplitSeq(accept, ",") {
		i++
		mtRaw, params, _ := strings.Cut(part, ";")
		mt := strings.ToLower(strings.TrimSpace(mtRaw))
		q := 1.0
		for f := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
			if ok && strings.EqualFold(k, "q") {
				if n, err := strconv.ParseFloat(v, 64); err == nil {
					q = n
				}
			}
		}
		switch {
		case mt == "application/json" && posJSON < 0:
			bestJSON, posJSON = q, i
		case mt == "text/event-stream" && posSSE < 0:
			bestSSE, posSSE = q, i
		}
	}
	if bestSSE != bestJSON {
		return bestSSE > bestJSON
	}
	return posSSE >= 0 && posSSE < posJSON
}

// isJSONContentType reports whether ct names application/json, with any
// parameters (charset). It does not allocate, unlike mime.ParseMediaType:
// it runs on every POST.
func isJSONContentType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// errBodyTooLarge is returned by readBody for a body over the limit.
var (
	errBodyTooLarge = errors.New("request body too large")
	errBodyTimeout  = errors.New("request body too slow")
)

// readBody reads the whole body, refusing (not truncating) one over max.
//
// The whole body must arrive within timeout: a client dripping one byte a
// second would otherwise hold a connection and a goroutine for as long as
// it liked (the server bounds only the headers). errBodyTimeout says it
// did not.
func readBody(w http.ResponseWriter, r *http.Request, max int64, timeout time.Duration) ([]byte, error) {
	if r.ContentLength > max {
		return nil, errBodyTooLarge
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
		// Cleared once read: the handler may stream its answer for longer,
		// and net/http's background read watches the connection meanwhile.
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	// net/http reads a body of announced length to that length and no
	// further, and that length was checked above. Only a body of unknown
	// length needs the limit kept as it is read.
	src := r.Body
	if r.ContentLength < 0 {
		src = http.MaxBytesReader(w, r.Body, max)
	}
	body, err := readAllSized(src, r.ContentLength, max+1)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok || int64(len(body)) > max {
		return nil, errBodyTooLarge
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return nil, errBodyTimeout
	}
	if err == nil {
		// Read to its end. Closed, net/http does not read it once more
		// after the handler to discard what is left (nothing).
		_ = r.Body.Close()
	}
	return body, err
}

// writeBodyError answers a body readBody refused: 413 too large, 408 too
// slow, 400 otherwise.
func writeBodyError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errBodyTooLarge):
		writeJSONError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest, "Payload Too Large")
	case errors.Is(err, errBodyTimeout):
		w.Header().Set("Connection", "close")
		writeJSONError(w, http.StatusRequestTimeout, jsonrpc.CodeInvalidRequest, "Request Timeout: the body did not arrive in time")
	default:
		writeJSONError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "Bad Request: could not read body")
	}
}

// writePlainBodyError answers, in plain text, a body readBody refused: 413
// too large, 408 too slow (the connection closed: the rest of the body
// may still be coming), 400 otherwise. For routes whose answers are not
// JSON-RPC (the legacy messages endpoint, Bounded).
func writePlainBodyError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errBodyTooLarge):
		w.Header().Set("Connection", "close")
		http.Error(w, "Payload Too Large", http.StatusRequestEntityTooLarge)
	case errors.Is(err, errBodyTimeout):
		w.Header().Set("Connection", "close")
		http.Error(w, "Request Timeout: the body did not arrive in time", http.StatusRequestTimeout)
	default:
		http.Error(w, "Bad Request: could not read the body", http.StatusBadRequest)
	}
}

// readAllSized is io.ReadAll of at most limit bytes. Its first buffer is
// sized by the announced length, one byte over so that EOF needs no
// growth. io.ReadAll's 512 bytes and doubling allocated more than the
// small messages of a relay. The length sizes the buffer only: what is
// read, and any error, are those of io.ReadAll of io.LimitReader(r,
// limit), without making the LimitReader when the length is known. An
// implausible length is not trusted. A body of unknown length (chunked) is
// read into a pooled buffer and copied out at its size: io.ReadAll's
// growing buffer allocated about twice a large body.
func readAllSized(r io.Reader, length, limit int64) ([]byte, error) {
	if length <= 0 || length > 1<<20 {
		buf := unsizedBodies.Get().(*bytes.Buffer)
		buf.Reset()
		_, err := buf.ReadFrom(io.LimitReader(r, limit))
		b := append(make([]byte, 0, buf.Len()), buf.Bytes()...)
		if buf.Cap() <= maxPooledBody {
			unsizedBodies.Put(buf)
		}
		return b, err
	}
	b := make([]byte, 0, min(length, limit)+1)
	for int64(len(b)) < limit {
		n, err := r.Read(b[len(b):int(min(int64(cap(b)), limit))])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
	return b, nil
}

// unsizedBodies are the buffers bodies of unknown length are read into;
// one that grew past maxPooledBody is left to the collector.
var unsizedBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 1 << 20

// writeJSONError answers an HTTP-level refusal with a JSON-RPC error body,
// as the TypeScript SDK does, so clients can show a useful message.
func writeJSONError(w http.ResponseWriter, status int, code int64, msg string) {
	writeJSON(w, status, jsonrpc.AppendError(nil, nil, &jsonrpc.Error{Code: code, Message: msg}))
}

// writeParseError answers a body that is not a valid message with 400 and
// the JSON-RPC error jsonrpc.Parse chose.
func writeParseError(w http.ResponseWriter, err error) {
	var pe *jsonrpc.ParseError
	if !errors.As(err, &pe) {
		pe = &jsonrpc.ParseError{Code: jsonrpc.CodeParseError, Message: "parse error"}
	}
	writeJSON(w, http.StatusBadRequest, pe.Response())
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// sessionLimit is the refusal of a session past the per-identity cap.
func sessionLimit(limit int) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeRateLimited,
		fmt.Sprintf("too many sessions: this identity already holds %d (the limit); end one with DELETE, or wait for idle ones to expire", limit),
		map[string]any{"kind": mcp.KindSessionLimit, "limit": limit})
}

// refuseStream answers a stream the gate did not admit: 429 with
// Retry-After for a rate limit, 403 otherwise, the gate's error as the
// body.
func refuseStream(w http.ResponseWriter, err error) {
	je, ok := err.(*jsonrpc.Error)
	if !ok {
		je = jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error")
	}
	status := http.StatusForbidden
	if je.Code == jsonrpc.CodeRateLimited {
		status = http.StatusTooManyRequests
		if secs, err := jsonrpc.Lookup(je.Data, "retryAfterSeconds"); err == nil && len(secs) > 0 {
			w.Header().Set("Retry-After", string(secs))
		}
	}
	writeJSON(w, status, jsonrpc.AppendError(nil, nil, je))
}
