// mcpclient.go is the load generator's own MCP client over Streamable
// HTTP: initialize once, then tools/call as fast as it can. It is a few
// lines over net/http on purpose — the same thin client in front of every
// path, so that the client's own cost is equal for all and small.

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// protocolVersion is the MCP revision the client asks for.
const protocolVersion = "2025-06-18"

// session is one MCP session of the load generator.
type session struct {
	hc     *http.Client
	url    string
	token  string // bearer token, or empty
	id     string // Mcp-Session-Id, once initialized
	nextID atomic.Int64
	body   []byte // reused request buffer (one caller per session)
}

func newSession(hc *http.Client, url, token string) *session {
	return &session{hc: hc, url: url, token: token}
}

// initialize opens the session: initialize, then notifications/initialized.
func (s *session) initialize(ctx context.Context) error {
	params := `{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"mcpgate-bench","version":"1"}}`
	if _, err := s.request(ctx, "initialize", params); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if err := s.notify(ctx, "notifications/initialized"); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	return nil
}

// call makes one tools/call and checks that a result came back.
func (s *session) call(ctx context.Context, params string) error {
	ans, err := s.request(ctx, "tools/call", params)
	if err != nil {
		return err
	}
	if !bytes.Contains(ans, []byte(`"result"`)) {
		return fmt.Errorf("tools/call: no result: %.200s", ans)
	}
	return nil
}

// close ends the session with DELETE, as a polite client does.
func (s *session) close(ctx context.Context) {
	if s.id == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	s.headers(req)
	if resp, err := s.hc.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

func (s *session) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
}

func (s *session) notify(ctx context.Context, method string) error {
	body := `{"jsonrpc":"2.0","method":"` + method + `"}`
	resp, err := s.post(ctx, []byte(body))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// request posts one request and returns the JSON-RPC response to it,
// whether it came as application/json or on an SSE stream.
func (s *session) request(ctx context.Context, method, params string) ([]byte, error) {
	id := strconv.FormatInt(s.nextID.Add(1), 10)
	s.body = append(s.body[:0], `{"jsonrpc":"2.0","id":`...)
	s.body = append(s.body, id...)
	s.body = append(s.body, `,"method":"`...)
	s.body = append(s.body, method...)
	s.body = append(s.body, `","params":`...)
	s.body = append(s.body, params...)
	s.body = append(s.body, '}')
	resp, err := s.post(ctx, s.body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, bytes.TrimSpace(b))
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		s.id = sid
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return answerOnStream(resp.Body, id)
	}
	return io.ReadAll(resp.Body)
}

func (s *session) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	s.headers(req)
	return s.hc.Do(req)
}

// answerOnStream reads SSE events until the response with id arrives
// (a server may send notifications on the request's stream first).
func answerOnStream(r io.Reader, id string) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	want := []byte(`"id":` + id)
	for sc.Scan() {
		line := sc.Bytes()
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		if bytes.Contains(data, want) && (bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"error"`))) {
			return bytes.Clone(bytes.TrimSpace(data)), nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("the stream ended without the answer")
}

// newHTTPClient is one client shared by every session of a path, with
// enough idle connections kept for every caller.
func newHTTPClient(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns * 2
	t.MaxIdleConnsPerHost = conns * 2
	t.MaxConnsPerHost = 0
	t.DisableCompression = true
	return &http.Client{Transport: t}
}
