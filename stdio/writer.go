// writer.go puts outgoing messages on the stream, one whole message per
// line. Handlers answer concurrently, so every write happens under one
// lock: two messages never interleave. A relayed payload may arrive
// pretty-printed; its line breaks are JSON whitespace and are compacted
// away, which touches nothing but whitespace.

package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// lineWriter writes messages as lines. It is an mcp.Sink.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer // the line being written, reused
	err error        // the first write failure; the stream is unusable after it
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{w: w} }

// Send writes msg as one line, in a single Write call. A message already
// cancelled is not written.
func (lw *lineWriter) Send(ctx context.Context, msg []byte) error {
	return lw.sendParts(ctx, jsonrpc.Parts{Head: msg})
}

// sendParts is Send for a message in parts, joined in the line's buffer.
func (lw *lineWriter) sendParts(ctx context.Context, a jsonrpc.Parts) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	if err := appendLine(&lw.buf, a); err != nil {
		return err
	}
	_, err := lw.w.Write(lw.buf.Bytes())
	if lw.buf.Cap() > retainLimit {
		lw.buf = bytes.Buffer{}
	}
	if err != nil {
		lw.err = fmt.Errorf("stdio: write: %w", err)
		return lw.err
	}
	return nil
}

// appendLine fills dst with a on one line followed by "\n". Only a
// message with a line break pays for compaction; the rest is copied.
func appendLine(dst *bytes.Buffer, a jsonrpc.Parts) error {
	dst.Reset()
	if !hasLineBreak(a.Head) && !hasLineBreak(a.Rest) {
		dst.Grow(a.Len() + 1)
		_, _ = a.WriteTo(dst)
	} else if err := json.Compact(dst, a.Bytes()); err != nil {
		dst.Reset()
		return fmt.Errorf("%w: %w", ErrMultiline, err)
	}
	dst.WriteByte('\n')
	return nil
}

func hasLineBreak(b []byte) bool {
	return bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0
}
