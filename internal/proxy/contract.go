// contract.go is the client of the container contract (docs/wire.md §5): a
// program that wants the begin's arguments and the secrets serves POST
// /register and POST /secrets beside its MCP server. What the program
// answers is relayed as it wrote it when it is JSON; what is not JSON is
// wrapped in the proxy's own error object, so the gateway always gets one
// JSON value.

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate/internal/textcut"
)

const (
	// maxAnswerBytes bounds a program's answer; a longer one is unreadable.
	maxAnswerBytes = 4 << 20
	// maxErrorText bounds the text of a non-JSON refusal we relay.
	maxErrorText = 1024
)

// Contract talks to a program at its base URL (http://127.0.0.1:$PORT).
type Contract struct {
	base string
	http *http.Client
}

// NewContract returns a client of the program at base (see ContractURL).
// client nil means http.DefaultClient.
func NewContract(base string, client *http.Client) *Contract {
	if client == nil {
		client = http.DefaultClient
	}
	return &Contract{base: strings.TrimSuffix(base, "/"), http: client}
}

// Register asks the program to accept the begin's arguments. A 2xx answer
// is the program's JSON (nil when the body is empty); a non-2xx is a
// refusal — the program's body when it is JSON, else
// {"kind":"program","status":N,"error":"<text>"}. err means no answer could
// be had or read: the program is unreachable, or a 2xx body is not JSON.
func (c *Contract) Register(ctx context.Context, arguments json.RawMessage) (answer, refusal json.RawMessage, err error) {
	if len(bytes.TrimSpace(arguments)) == 0 {
		arguments = json.RawMessage("null")
	}
	if !json.Valid(arguments) {
		return nil, nil, errors.New("proxy: register: the arguments are not JSON")
	}
	body := append(append([]byte(`{"arguments":`), arguments...), '}')
	status, answer, err := c.post(ctx, "/register", body)
	if err != nil {
		return nil, nil, err
	}
	if status/100 != 2 {
		return nil, refusalOf(status, answer), nil
	}
	if len(answer) == 0 {
		return nil, nil, nil
	}
	if !json.Valid(answer) {
		return nil, nil, fmt.Errorf("proxy: register: the program answered %d with a body that is not JSON", status)
	}
	return answer, nil, nil
}

// FeedSecrets hands the program the secrets' values. nil, nil is Fed; a
// refusal is as for Register, with every value the program echoes in it
// replaced by [redacted]. The values appear in no error.
func (c *Contract) FeedSecrets(ctx context.Context, values map[string]string) (refusal json.RawMessage, err error) {
	body, err := json.Marshal(values)
	if err != nil {
		return nil, errors.New("proxy: secrets: the values cannot be encoded")
	}
	status, answer, err := c.post(ctx, "/secrets", body)
	if err != nil {
		return nil, err
	}
	if status/100 == 2 {
		return nil, nil
	}
	return refusalOf(status, redact(answer, values)), nil
}

// post sends body and returns the status and the body of the answer,
// trimmed of surrounding whitespace. The error quotes the URL and the
// transport's reason, never the request body.
func (c *Contract) post(ctx context.Context, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("proxy: %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("proxy: the program did not answer POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	switch {
	case err != nil:
		return 0, nil, fmt.Errorf("proxy: reading the program's answer to POST %s: %w", path, err)
	case len(answer) > maxAnswerBytes:
		return 0, nil, fmt.Errorf("proxy: the program's answer to POST %s is over %d bytes", path, maxAnswerBytes)
	}
	return resp.StatusCode, bytes.TrimSpace(answer), nil
}

// refusalOf is the error value for a non-2xx answer.
func refusalOf(status int, body []byte) json.RawMessage {
	if len(body) > 0 && json.Valid(body) {
		return body
	}
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if cut := textcut.Bytes(text, maxErrorText); len(cut) < len(text) {
		text = cut + "…"
	}
	if text == "" {
		text = http.StatusText(status)
	}
	b := fmt.Appendf(nil, `{"kind":"program","status":%d,"error":`, status)
	return append(appendJSONString(b, text), '}')
}
