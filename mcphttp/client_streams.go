// client_streams.go is how a StreamableConn reads event streams. One is the
// stream answering one POST, resumed with GET and Last-Event-ID when it
// breaks before its answers came. The other is the standalone GET stream,
// kept open with backoff for as long as the connection lives.

package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate/internal/tick"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

const (
	// A response stream that breaks is resumed this many times before
	// its requests are answered with an error.
	maxResumes = 5
	// Reconnection delays grow from retryBase to retryMax.
	retryBase = 250 * time.Millisecond
	retryMax  = 30 * time.Second
)

// readResponseStream reads a POST's event stream in the background until
// every request it carries is answered, resuming it with GET and
// Last-Event-ID when it breaks early and the server gave event ids.
func (c *StreamableConn) readResponseStream(out outgoing, body io.ReadCloser, cancel context.CancelFunc) {
	if !c.track() {
		drain(body)
		cancel()
		return
	}
	go func() {
		defer c.wg.Done()
		defer cancel()
		waiting := idSet(out.requests)
		lastID, _, tooLarge := c.consume(body, waiting, "")
		if tooLarge {
			// An event over the limit is gone for good: resuming would
			// not bring it back small. The calls still waiting fail now.
			c.log.Warn("mcphttp client: an event over the size limit; its stream's calls are failed", "limit", c.opts.MaxMessageBytes)
			for _, id := range waiting {
				c.deliver(mcp.TooLargeAnswer(id, c.opts.MaxMessageBytes))
			}
			return
		}
		// A sessionless stream is not resumed: 2026-07-28 has no GET.
		for attempt := 0; len(waiting) > 0 && lastID != "" && attempt < maxResumes && !c.Sessionless(); attempt++ {
			if !c.pause(attempt) {
				return
			}
			resp, err := c.http.Do(c.newGET(c.ctx, lastID))
			if err != nil || resp.StatusCode != http.StatusOK {
				if resp != nil {
					drain(resp.Body)
				}
				continue
			}
			var n int
			if lastID, n, _ = c.consume(resp.Body, waiting, lastID); n > 0 {
				attempt = -1 // progress: the next break starts afresh
			}
		}
		if len(waiting) > 0 && c.ctx.Err() == nil {
			c.fail(values(waiting), 0, "response stream ended before the response")
		}
	}()
}

// consume reads events until the stream ends, pushing each message and
// crossing answered requests off waiting (nil for the standalone
// stream). It returns the last event id seen (lastID if none), the
// number of messages delivered, and whether it ended on an event over
// MaxMessageBytes.
func (c *StreamableConn) consume(body io.ReadCloser, waiting map[string]jsonrpc.ID, lastID string) (string, int, bool) {
	defer body.Close()
	r := sse.NewReader(body, c.opts.MaxMessageBytes)
	for n := 0; ; {
		ev, err := r.Next()
		if id := r.LastEventID(); id != "" {
			lastID = id
		}
		if d := r.Retry(); d > 0 {
			c.mu.Lock()
			c.retry = d
			c.mu.Unlock()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && c.ctx.Err() == nil {
				c.log.Debug("mcphttp client: event stream broke", "err", err)
			}
			return lastID, n, errors.Is(err, sse.ErrTooLarge)
		}
		if ev.Name != "" && ev.Name != "message" {
			continue
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			// A priming event (SEP-1699): an id to resume from, and no
			// message.
			continue
		}
		if !eachMessage(ev.Data, func(m *jsonrpc.Message) {
			if isAnswer(m) {
				delete(waiting, m.ID.Key())
			}
			c.deliver(m)
		}) {
			c.log.Warn("mcphttp client: an event that is not JSON-RPC dropped")
			continue
		}
		n++
		if waiting != nil && len(waiting) == 0 {
			return lastID, n, false // all answered: the server is done with this stream
		}
	}
}

// listen starts the standalone GET stream once, after initialization.
//
// It returns once the server has answered the first GET (the stream is
// open, or refused), at most after streamWait. A server may send a request
// of its own on the stream (sampling, elicitation) as soon as the first
// call arrives. One sent before the stream was open was lost. The TS SDK's
// servers do exactly that.
func (c *StreamableConn) listen(ctx context.Context) {
	c.mu.Lock()
	start := !c.listening
	c.listening = true
	c.mu.Unlock()
	if !start || !c.track() {
		return
	}
	opened := make(chan struct{})
	go func() {
		defer c.wg.Done()
		c.listenLoop(opened)
	}()
	t := time.NewTimer(streamWait)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C:
	case <-ctx.Done():
	case <-c.ctx.Done():
	}
}

// streamWait bounds how long the first call waits for the standalone
// stream to open.
const streamWait = 2 * time.Second

// listenLoop keeps the standalone stream open while the connection is,
// reconnecting with Last-Event-ID and backoff when it drops. 405 means the
// server offers no such stream, which is fine. The delay grows with every
// attempt that delivered nothing, so a server that ends each stream at
// once is not hammered.
func (c *StreamableConn) listenLoop(opened chan struct{}) {
	lastID := ""
	for failures := 0; ; {
		resp, err := c.http.Do(c.newGET(c.ctx, lastID))
		if opened != nil {
			close(opened) // answered, or failed: the first call may go
			opened = nil
		}
		switch {
		case c.ctx.Err() != nil:
			if err == nil {
				drain(resp.Body)
			}
			return
		case err != nil:
			c.log.Debug("mcphttp client: standalone stream failed", "err", err)
		case resp.StatusCode == http.StatusOK && mediaType(resp.Header.Get("Content-Type")) == "text/event-stream":
			var n int
			if lastID, n, _ = c.consume(resp.Body, nil, lastID); n > 0 {
				failures = 0
			}
		default:
			drain(resp.Body)
			if !c.retryable(resp) {
				return
			}
		}
		failures++
		if !c.pause(failures) {
			return
		}
	}
}

// retryable says whether a refused standalone GET is worth retrying. A
// 404 means the session expired only when the GET named one: a server
// that issued none (a stateless one) answers 404 or 405 for "no such
// stream", and ending the connection for it made its backend flap.
func (c *StreamableConn) retryable(resp *http.Response) bool {
	status := resp.StatusCode
	switch {
	case status == http.StatusMethodNotAllowed,
		status == http.StatusNotFound && resp.Request.Header.Get(HeaderSessionID) == "":
		c.log.Debug("mcphttp client: server offers no standalone stream", "status", status)
		return false
	case status == http.StatusNotFound:
		c.inbox.end(ErrSessionExpired)
		return false
	case status >= 500 || status == http.StatusTooManyRequests:
		return true
	default: // including a 200 that is not an event stream
		c.log.Warn("mcphttp client: standalone stream refused", "status", status)
		return false
	}
}

// pause waits before reconnection attempt n, reporting false if the
// connection closed meanwhile. The wait is the server's SSE retry when it
// gave one; else the first attempt is immediate and later ones back off.
func (c *StreamableConn) pause(n int) bool {
	c.mu.Lock()
	d := c.retry
	c.mu.Unlock()
	switch {
	case d > 0:
	case n <= 0:
		return c.ctx.Err() == nil
	default:
		d = min(retryBase<<min(n-1, 10), retryMax)
	}
	return tick.Sleep(d, c.ctx.Done())
}

// track counts a stream reader, unless the connection is closed.
func (c *StreamableConn) track() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	return true
}
