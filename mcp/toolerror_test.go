// toolerror_test.go pins the tool-failure contract (seed 003, spec §5):
// five classes, typed errors before message matching, detail bounded at
// 300 runes, fixed field order, and hints that never name an argument.

package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/mcp"
)

// timeoutErr is a net.Error that timed out, as a dialer reports it.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o wait exceeded" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

func TestClassifyToolError(t *testing.T) {
	var syntaxErr *json.SyntaxError
	errors.As(json.Unmarshal([]byte(`{"a":`), &struct{}{}), &syntaxErr)
	_, notExist := os.Open("/definitely/not/here")

	tests := []struct {
		name      string
		err       error
		class     string
		retryable bool
	}{
		// Typed errors.
		{"context.DeadlineExceeded is timeout", context.DeadlineExceeded, mcp.ToolErrTimeout, true},
		{"a wrapped deadline is timeout", fmt.Errorf("query: %w", context.DeadlineExceeded), mcp.ToolErrTimeout, true},
		{"os.ErrDeadlineExceeded is timeout", os.ErrDeadlineExceeded, mcp.ToolErrTimeout, true},
		{"a net.Error that timed out is timeout", &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, mcp.ToolErrTimeout, true},
		{"ECONNREFUSED in a *net.OpError is backend_unavailable",
			&net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}},
			mcp.ToolErrBackendUnavailable, true},
		{"ECONNRESET is backend_unavailable", fmt.Errorf("read: %w", syscall.ECONNRESET), mcp.ToolErrBackendUnavailable, true},
		{"ErrBackendUnavailable is backend_unavailable", fmt.Errorf("ch: %w", mcp.ErrBackendUnavailable), mcp.ToolErrBackendUnavailable, true},
		{"a wrapped ErrBadArgs is bad_args", fmt.Errorf("range_ns: %w", mcp.ErrBadArgs), mcp.ToolErrBadArgs, false},
		{"a *json.SyntaxError is bad_args", fmt.Errorf("decode: %w", syntaxErr), mcp.ToolErrBadArgs, false},
		{"a *json.UnmarshalTypeError is bad_args", json.Unmarshal([]byte(`{"n":"x"}`), &struct{ N int }{}), mcp.ToolErrBadArgs, false},
		{"fs.ErrNotExist is not_found", fs.ErrNotExist, mcp.ToolErrNotFound, false},
		{"a *fs.PathError for a missing file is not_found", notExist, mcp.ToolErrNotFound, false},
		{"ErrNotFound is not_found", mcp.ErrNotFound, mcp.ToolErrNotFound, false},
		{"a custom *ToolError keeps its class", &mcp.ToolError{Class: mcp.ToolErrBackendUnavailable, Detail: "x"}, mcp.ToolErrBackendUnavailable, true},
		{"a wrapped *ToolError keeps its class", fmt.Errorf("tool: %w", &mcp.ToolError{Class: mcp.ToolErrNotFound}), mcp.ToolErrNotFound, false},
		{"nil is internal", nil, mcp.ToolErrInternal, false},
		// Message-only errors, the last resort.
		{"'request timed out' is timeout", errors.New("request timed out"), mcp.ToolErrTimeout, true},
		{"'Timeout' in capitals is timeout", errors.New("Gateway Timeout"), mcp.ToolErrTimeout, true},
		{"'connection refused' is backend_unavailable", errors.New("dial tcp 10.0.0.1:9000: connection refused"), mcp.ToolErrBackendUnavailable, true},
		{"'user not found' is not_found", errors.New("user not found"), mcp.ToolErrNotFound, false},
		{"'x is required' is bad_args", errors.New("x is required"), mcp.ToolErrBadArgs, false},
		{"'boom' is internal", errors.New("boom"), mcp.ToolErrInternal, false},
		// Typed errors win over the message.
		{"ErrNotFound saying timeout is not_found", fmt.Errorf("lookup timeout: %w", mcp.ErrNotFound), mcp.ToolErrNotFound, false},
		{"ErrBadArgs saying connection refused is bad_args", fmt.Errorf("connection refused?: %w", mcp.ErrBadArgs), mcp.ToolErrBadArgs, false},
		{"a *ToolError saying not found keeps its class", &mcp.ToolError{Class: mcp.ToolErrTimeout, Detail: "not found"}, mcp.ToolErrTimeout, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mcp.ClassifyToolError(tt.err)
			if got.Class != tt.class || got.Retryable != tt.retryable {
				t.Fatalf("class %q retryable %v, want %q %v", got.Class, got.Retryable, tt.class, tt.retryable)
			}
			if got.Hint == "" {
				t.Fatal("no hint")
			}
			var te *mcp.ToolError
			if tt.err != nil && !errors.As(tt.err, &te) && got.Detail != tt.err.Error() {
				t.Fatalf("detail %q, want the error text %q", got.Detail, tt.err.Error())
			}
		})
	}
}

// A ToolError a tool builds itself must still come out as one of the five
// classes with a hint: a class the contract does not know would leave the
// model with nothing to act on.
func TestCustomToolErrorIsNormalised(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		class string
		hint  string
		retry bool
	}{
		{"a custom hint and retryable are kept",
			&mcp.ToolError{Class: mcp.ToolErrBackendUnavailable, Retryable: false, Hint: "Use the cached report instead."},
			mcp.ToolErrBackendUnavailable, "Use the cached report instead.", false},
		{"an empty class is classified from the detail",
			&mcp.ToolError{Detail: "upstream timed out"}, mcp.ToolErrTimeout, "", true},
		{"an unknown class falls back to a known one",
			&mcp.ToolError{Class: "exploded", Detail: "kaboom"}, mcp.ToolErrInternal, "", false},
		{"an unknown class falls back to what the detail says",
			&mcp.ToolError{Class: "slow", Detail: "deadline exceeded"}, mcp.ToolErrTimeout, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mcp.ClassifyToolError(tt.err)
			if got.Class != tt.class || got.Retryable != tt.retry {
				t.Fatalf("got %+v, want class %q retryable %v", got, tt.class, tt.retry)
			}
			if got.Hint == "" || (tt.hint != "" && got.Hint != tt.hint) {
				t.Fatalf("hint %q, want %q", got.Hint, tt.hint)
			}
			var wire mcp.ToolError
			if err := json.Unmarshal([]byte(mcp.ToolErrorJSON(tt.err)), &wire); err != nil || wire != got {
				t.Fatalf("wire form %s differs from %+v", mcp.ToolErrorJSON(tt.err), got)
			}
		})
	}
}

func TestToolErrorDetailIsBounded(t *testing.T) {
	tests := []struct {
		name string
		msg  string
	}{
		{"400 two-byte runes", strings.Repeat("é", 400)},
		{"400 four-byte runes", strings.Repeat("😀", 400)},
		{"ASCII with a rune straddling byte 300", strings.Repeat("a", 299) + strings.Repeat("✓", 100)},
		{"exactly 300 runes", strings.Repeat("é", 300)},
		{"301 runes", strings.Repeat("é", 301)},
		{"short", "é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := errors.New(tt.msg)
			d := mcp.ClassifyToolError(err).Detail
			if n := utf8.RuneCountInString(d); n > 300 {
				t.Fatalf("detail is %d runes", n)
			}
			if !utf8.ValidString(d) {
				t.Fatalf("detail is not valid UTF-8: %q", d)
			}
			if utf8.RuneCountInString(tt.msg) <= 300 {
				if d != tt.msg {
					t.Fatalf("a short detail was changed: %q", d)
				}
				return
			}
			if !strings.HasPrefix(tt.msg, strings.TrimSuffix(d, "…")) {
				t.Fatal("the detail is not a prefix of the message")
			}
			wire := mcp.ToolErrorJSON(err)
			if !json.Valid([]byte(wire)) || !utf8.ValidString(wire) {
				t.Fatalf("wire form is not valid: %q", wire)
			}
		})
	}
	t.Run("a custom ToolError's detail is bounded too", func(t *testing.T) {
		d := mcp.ClassifyToolError(&mcp.ToolError{Class: mcp.ToolErrInternal, Detail: strings.Repeat("é", 400)}).Detail
		if n := utf8.RuneCountInString(d); n > 300 {
			t.Fatalf("detail is %d runes", n)
		}
	})
}

func TestToolErrorJSONFieldOrder(t *testing.T) {
	for _, err := range []error{errors.New("boom"), fmt.Errorf("x: %w", context.DeadlineExceeded), &mcp.ToolError{Class: mcp.ToolErrNotFound, Hint: "h", Detail: "d"}} {
		wire := mcp.ToolErrorJSON(err)
		dec := json.NewDecoder(strings.NewReader(wire))
		var keys []string
		if tok, _ := dec.Token(); tok != json.Delim('{') {
			t.Fatalf("not an object: %s", wire)
		}
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, fmt.Sprint(k))
			if _, err := dec.Token(); err != nil { // the value: a string or a bool
				t.Fatalf("%s: %v", wire, err)
			}
		}
		if got := strings.Join(keys, ","); got != "error,retryable,hint,detail" {
			t.Fatalf("%s: fields %s, want error,retryable,hint,detail", wire, got)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(wire)); err != nil || compact.String() != wire {
			t.Fatalf("not compact JSON: %s", wire)
		}
	}
	t.Run("detail is omitted when empty", func(t *testing.T) {
		if wire := mcp.ToolErrorJSON(nil); strings.Contains(wire, "detail") {
			t.Fatalf("%s", wire)
		}
	})
}

var (
	quotedIdent = regexp.MustCompile(`'[A-Za-z_][A-Za-z0-9_.]*'`)
	codeLike    = regexp.MustCompile(`\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b`)
)

func TestHintsAreGenericEnglish(t *testing.T) {
	classes := []error{
		context.DeadlineExceeded, mcp.ErrBackendUnavailable, mcp.ErrBadArgs, mcp.ErrNotFound, errors.New("boom"),
	}
	seen := map[string]bool{}
	for _, err := range classes {
		te := mcp.ClassifyToolError(err)
		seen[te.Class] = true
		h := te.Hint
		t.Run(te.Class, func(t *testing.T) {
			if strings.TrimSpace(h) == "" {
				t.Fatal("empty hint")
			}
			if strings.ContainsAny(h, "`\"") || quotedIdent.MatchString(h) {
				t.Fatalf("hint quotes an identifier: %q", h)
			}
			if m := codeLike.FindString(h); m != "" {
				t.Fatalf("hint names %q, which looks like an argument: %q", m, h)
			}
			for _, r := range h {
				if r > utf8.RuneSelf && r != '…' && r != '’' {
					t.Fatalf("hint is not plain English: %q", h)
				}
			}
			if h[0] < 'A' || h[0] > 'Z' || !strings.HasSuffix(h, ".") {
				t.Fatalf("hint is not a sentence: %q", h)
			}
		})
	}
	if len(seen) != 5 {
		t.Fatalf("classes covered %v, want all five", seen)
	}
}
