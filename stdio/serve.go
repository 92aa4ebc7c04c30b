// serve.go is the server end: one MCP session on a reader and a writer.
// Each request is served in its own goroutine, so a slow tool never holds
// up another call, and the client's answers to our own requests (sampling,
// elicitation) are read and delivered while the tool that asked waits.
// Notifications and responses are handled inline, in stream order.

package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Serve answers one session of s: messages are read from in, one per line,
// and answers and server-initiated messages are written to out.
//
// Serve returns nil at the end of in, once every request in flight has
// been answered. When ctx ends it cancels the requests in flight, waits for
// their handlers, and returns ctx.Err(). A Read blocked on in is unblocked
// through SetReadDeadline where in has one (pipes, sockets); otherwise the
// goroutine reading in ends with that Read, discarding what it returns.
// The session is closed before Serve returns.
//
// At the end of in, a handler still waiting on the client (a sampling
// request, say) can no longer be answered: its call fails at once with
// mcp.ErrClientGone.
func Serve(ctx context.Context, s *mcp.Server, in io.Reader, out io.Writer, opts Options) error {
	opts = opts.withDefaults()
	ctx = mcp.WithIdentity(ctx, opts.Identity)
	w := newLineWriter(out)
	c := &serveConn{
		server:      s,
		sessionless: opts.Sessionless,
		session:     s.NewSession(mcp.SessionOptions{Out: w, Identity: opts.Identity, Transport: "stdio"}),
		out:         w,
		log:         opts.Logger,
		maxLine:     opts.MaxLineBytes,
	}
	defer c.session.Close()

	readDone := make(chan error, 1)
	go func() { readDone <- c.readLoop(ctx, newLineReader(in, opts.MaxLineBytes)) }()
	var err error
	select {
	case err = <-readDone:
		c.session.EndInput()
	case <-ctx.Done():
		err = ctx.Err()
		unblockRead(in)
	}
	c.drain()
	if opts.Sessionless {
		s.EndTasks() // mcp/tasks.go: its tasks end with the connection
	}
	return err
}

// serveConn is the state of one Serve call.
type serveConn struct {
	server      *mcp.Server
	sessionless bool // 2026-07-28 requests are served too
	session     *mcp.Session
	out         *lineWriter
	log         *slog.Logger
	maxLine     int

	mu      sync.Mutex
	stopped bool           // no new work may start
	work    sync.WaitGroup // messages being handled
}

// readLoop reads and dispatches lines until the input ends or Serve stops.
func (c *serveConn) readLoop(ctx context.Context, lines *lineReader) error {
	for {
		line, err := lines.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && !errors.Is(err, ErrLineTooLong):
			return fmt.Errorf("stdio: read: %w", err)
		}
		if !c.begin() {
			return nil
		}
		if err != nil {
			c.log.Warn("stdio: message over the line limit", "limit", c.maxLine)
			c.send(ctx, tooLongResponse(c.maxLine))
			c.work.Done()
			continue
		}
		c.dispatch(ctx, bytes.Clone(line)) // requests outlive the reader's buffer
	}
}

// begin registers one unit of work, unless Serve is stopping.
func (c *serveConn) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return false
	}
	c.work.Add(1)
	return true
}

// drain stops new work and waits for the work in flight.
func (c *serveConn) drain() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.work.Wait()
}

// dispatch handles one line, holding a unit of work begun for it.
func (c *serveConn) dispatch(ctx context.Context, data []byte) {
	if jsonrpc.IsBatch(data) {
		c.batch(ctx, data)
		return
	}
	m, err := jsonrpc.Parse(data)
	if err == nil && c.sessionless {
		if sr, ok := mcp.ReadSessionless(m); ok {
			c.serveSessionless(ctx, &sr, m)
			return
		}
	}
	switch {
	case err != nil:
		c.log.Debug("stdio: unparsable message", "err", err)
		c.send(ctx, parseErrorResponse(err))
		c.work.Done()
	case m.IsRequest():
		go func() {
			defer c.work.Done()
			c.sendAnswer(ctx, c.session.Answer(ctx, m, c.out))
		}()
	default:
		c.session.Handle(ctx, m, c.out)
		c.work.Done()
	}
}

// batch serves a JSON-RPC batch where the negotiated revision allows one.
func (c *serveConn) batch(ctx context.Context, data []byte) {
	if !mcp.AllowsBatch(c.session.Version()) {
		c.send(ctx, mcp.BatchRefused())
		c.work.Done()
		return
	}
	msgs, errs, err := jsonrpc.ParseBatch(data)
	if err != nil {
		c.send(ctx, parseErrorResponse(err))
		c.work.Done()
		return
	}
	go func() {
		defer c.work.Done()
		c.send(ctx, c.session.HandleBatch(ctx, msgs, errs, c.out))
	}()
}

// send writes an answer; nil means there is none.
func (c *serveConn) send(ctx context.Context, msg []byte) {
	c.sendAnswer(ctx, jsonrpc.Parts{Head: msg})
}

// sendAnswer writes an answer in parts (a long result from where it
// lies); zero Parts mean there is none.
func (c *serveConn) sendAnswer(ctx context.Context, a jsonrpc.Parts) {
	if a.Head == nil {
		return
	}
	if err := c.out.sendParts(ctx, a); err != nil {
		c.log.Debug("stdio: answer not written", "err", err)
	}
}

func parseErrorResponse(err error) []byte {
	var pe *jsonrpc.ParseError
	if errors.As(err, &pe) {
		return pe.Response()
	}
	return jsonrpc.AppendError(nil, nil, jsonrpc.Errorf(jsonrpc.CodeParseError, "parse error"))
}

// tooLongResponse answers a line over the limit. Its id could not be read
// (the line was never buffered), so the answer goes to id null.
func tooLongResponse(limit int) []byte {
	data := []byte(`{"maxBytes":` + strconv.Itoa(limit) + `}`)
	return jsonrpc.AppendError(nil, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
		"invalid request: message exceeds "+strconv.Itoa(limit)+" bytes", json.RawMessage(data)))
}

// unblockRead ends a Read pending on r, where r supports deadlines.
func unblockRead(r io.Reader) {
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = d.SetReadDeadline(time.Now())
	}
}

// serveSessionless serves one 2026-07-28 message beside the session, on
// its own goroutine for a request; a refusal (a revision not served, no
// client capabilities, an unknown method) is answered as its error. It
// holds the unit of work begun for the message.
func (c *serveConn) serveSessionless(ctx context.Context, sr *mcp.Sessionless, m *jsonrpc.Message) {
	if refusal := c.server.CheckSessionless(sr); refusal != nil {
		if m.IsRequest() {
			c.send(ctx, jsonrpc.AppendError(nil, m.ID, refusal.Err))
		}
		c.work.Done()
		return
	}
	if !m.IsRequest() {
		c.work.Done() // a notification: nothing to serve
		return
	}
	go func() {
		defer c.work.Done()
		c.sendAnswer(ctx, c.server.AnswerSessionless(ctx, sr, c.out))
	}()
}
