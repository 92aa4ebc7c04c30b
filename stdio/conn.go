// conn.go is the client end: an mcp.Conn over the two pipes of a stdio
// server. One goroutine reads lines and hands them to Read, so that Read
// can honour its context and Close can release a Read that waits.

package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Conn carries MCP messages to a stdio server and back. It implements
// mcp.Conn. Build one with Command (a child process) or NewConn (pipes).
type Conn struct {
	out   *lineWriter
	stdin io.Closer
	// stdout is closed by Close to end the reading goroutine; nil when the
	// reader cannot be closed (the goroutine then ends with its next Read).
	stdout io.Closer
	log    *slog.Logger

	msgs    chan *jsonrpc.Message // read messages, handed over one at a time
	eof     chan struct{}         // closed when reading has ended
	readErr error                 // why reading ended; set before eof is closed
	reading sync.WaitGroup

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error

	proc *process // the child, for Command; nil for NewConn
}

// NewConn returns a Conn that writes messages to w and reads them from r.
// Close closes w, and r too when it is an io.Closer.
func NewConn(r io.Reader, w io.WriteCloser) *Conn {
	return newConn(r, w, DefaultMaxLineBytes, slog.New(slog.DiscardHandler))
}

func newConn(r io.Reader, w io.WriteCloser, maxLine int, log *slog.Logger) *Conn {
	c := &Conn{
		out:    newLineWriter(w),
		stdin:  w,
		log:    log,
		msgs:   make(chan *jsonrpc.Message),
		eof:    make(chan struct{}),
		closed: make(chan struct{}),
	}
	lines := newLineReader(r, maxLine)
	if rc, ok := r.(io.Closer); ok {
		c.stdout = rc
		c.reading.Go(func() { c.readLoop(lines) })
	} else {
		go c.readLoop(lines)
	}
	return c
}

// readLoop reads lines until the stream ends, parsing each once (a batch
// line into its messages; a line that is not JSON-RPC is logged and
// dropped). Once the Conn is closed it goes on reading and dropping them,
// so that a server shutting down never blocks on a full pipe that nobody
// empties.
func (c *Conn) readLoop(lines *lineReader) {
	defer close(c.eof)
	for {
		line, err := lines.Next()
		if errors.Is(err, ErrLineTooLong) {
			// The message is lost. When it was an answer, its call fails
			// at once, saying why; anything else is only logged.
			id, ok := jsonrpc.TruncatedResponseID(lines.Truncated())
			if !ok {
				c.log.Warn("stdio: message over the line limit dropped", "limit", lines.max)
				continue
			}
			c.log.Warn("stdio: answer over the line limit; its call is failed", "limit", lines.max, "id", string(id))
			select {
			case c.msgs <- mcp.TooLargeAnswer(id, lines.max):
			case <-c.closed:
			}
			continue
		}
		if err != nil {
			c.readErr = err
			return
		}
		c.hand(bytes.Clone(line))
	}
}

// hand parses one line as a message, or a batch of them, and hands each to
// Read.
func (c *Conn) hand(line []byte) {
	give := func(m *jsonrpc.Message) {
		select {
		case c.msgs <- m:
		case <-c.closed:
		}
	}
	if jsonrpc.IsBatch(line) {
		msgs, errs, err := jsonrpc.ParseBatch(line)
		if err != nil {
			c.log.Warn("stdio: bad batch from the server", "err", err)
			return
		}
		for i, m := range msgs {
			if errs[i] == nil {
				give(m)
			}
		}
		return
	}
	m, err := jsonrpc.Parse(line)
	if err != nil {
		c.log.Warn("stdio: bad message from the server", "err", err)
		return
	}
	give(m)
}

// Write sends one message as one line, long params from where they lie.
func (c *Conn) Write(ctx context.Context, m *jsonrpc.Message) error {
	if c.isClosed() {
		return ErrClosed
	}
	err := c.out.sendParts(ctx, m.Parts())
	if err != nil && c.isClosed() {
		return ErrClosed
	}
	return err
}

// Read returns the next message; the caller owns it. It returns io.EOF
// once the server's output has ended or the Conn is closed.
func (c *Conn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	if c.isClosed() {
		return nil, io.EOF
	}
	select {
	case m := <-c.msgs:
		return m, nil
	case <-c.eof:
		return nil, c.endErr()
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// endErr says why reading ended: the end of the stream, or a failure.
func (c *Conn) endErr() error {
	if c.isClosed() || errors.Is(c.readErr, io.EOF) {
		return io.EOF
	}
	return fmt.Errorf("stdio: read: %w", c.readErr)
}

func (c *Conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// Close ends the connection: a pending Read returns io.EOF, the server's
// stdin is closed, and for a child process the shutdown described in the
// package documentation runs before Close returns. It is safe to call more
// than once and from any goroutine.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		err := c.stdin.Close()
		if c.proc != nil {
			c.proc.shutdown()
		}
		if c.stdout != nil {
			_ = c.stdout.Close()
		}
		c.reading.Wait()
		if c.proc != nil {
			c.proc.stopLogging()
		}
		if err != nil && !errors.Is(err, io.ErrClosedPipe) {
			c.closeErr = fmt.Errorf("stdio: close: %w", err)
		}
	})
	return c.closeErr
}

// closeWhenDone closes c when ctx ends first.
func (c *Conn) closeWhenDone(ctx context.Context) {
	select {
	case <-ctx.Done():
		_ = c.Close()
	case <-c.closed:
	}
}

// Done is closed when the child process has exited (Command), or when the
// Conn is closed (NewConn). It lets a supervisor notice a backend that
// died on its own.
func (c *Conn) Done() <-chan struct{} {
	if c.proc != nil {
		return c.proc.exited
	}
	return c.closed
}

// ExitErr is how the child process ended, as exec.Cmd.Wait reports it (nil
// for a clean exit, and for NewConn). It is meaningful once Done is closed.
func (c *Conn) ExitErr() error {
	if c.proc == nil {
		return nil
	}
	select {
	case <-c.proc.exited:
		return c.proc.exitErr
	default:
		return nil
	}
}

// Pid is the child's process id, which is also its process group id (0
// for NewConn).
func (c *Conn) Pid() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.pid
}
