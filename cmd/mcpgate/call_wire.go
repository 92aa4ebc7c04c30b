// call_wire.go is how `mcpgate call` asks — on the framed connection or in
// the per-path form, with package wire alone — and how it prints each kind
// of answer. Answers are printed as the bytes that arrived; only a
// notification is compacted, so that each one is a single line.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// caller prints answers on out and explanations on errOut.
type caller struct {
	out, errOut io.Writer
	count       int // notifications to print before stopping; 0: no limit
}

// framed begins the proxy's framed connection with arguments, waits for
// Begun, and asks on one channel of the begun scope.
func (c *caller) framed(ctx context.Context, base string, arguments []byte, a ask) error {
	s, err := wiremcp.Begin(ctx, base, wiremcp.Options{Arguments: arguments})
	var refused *wiremcp.RefusedError
	switch {
	case errors.As(err, &refused):
		c.print([]byte(refused.Value))
		return exitWith(exitRefused, "the begin was refused")
	case err != nil:
		return unanswered("the tools begin", err)
	}
	defer s.Close()
	switch a.name {
	case askNotifications:
		ch, err := s.Notifications(ctx)
		if err != nil {
			return noAnswer("sending the request", err)
		}
		return c.notifications(ctx, func(ctx context.Context) (wire.Response, error) {
			p, err := ch.Next(ctx)
			if err != nil {
				return wire.Response{}, err
			}
			return wire.DecodeResponse(p)
		})
	case askInfo:
		return c.info(s.Info(ctx))
	case askSecrets:
		return c.secrets(s.FeedRawSecrets(ctx, a.params), a)
	}
	resp, err := s.Exchange(ctx, a.name, a.params)
	if err != nil {
		return unanswered(a.name, err)
	}
	return c.answer(resp)
}

// perPath asks on the ask's own path.
func (c *caller) perPath(ctx context.Context, base string, a ask) error {
	if a.name == askNotifications {
		sub, err := wire.SubscribePath(ctx, base)
		if err != nil {
			return noAnswer("connecting", err)
		}
		defer sub.Close()
		return c.notifications(ctx, sub.Next)
	}
	resp, err := wire.CallPath(ctx, base, wiremcp.Path(a.name), a.params)
	switch {
	case errors.Is(err, wire.ErrNotServed):
		return exitWith(exitNotServed, "%s: the proxy closed the path without an answer (not served)", a.name)
	case err != nil:
		return noAnswer(a.name, err)
	}
	return c.answer(resp)
}

// answer prints one MCP answer: the result, or the ErrorData with status 1.
func (c *caller) answer(resp wire.Response) error {
	if resp.Error != nil {
		c.print(resp.Error.Raw())
		return &exitStatus{code: exitRefused}
	}
	c.print(resp.Result)
	return nil
}

// notifications prints each notification on a line of its own until the
// stream ends, --count is reached, or the user interrupts.
func (c *caller) notifications(ctx context.Context, next func(context.Context) (wire.Response, error)) error {
	for n := 0; c.count == 0 || n < c.count; n++ {
		resp, err := next(ctx)
		switch {
		case ctx.Err() != nil:
			return nil // interrupted: the normal end of a stream someone watched
		case errors.Is(err, wire.ErrBareFinish) && n == 0:
			return exitWith(exitNotServed, "notifications: the proxy does not serve them (bare finish)")
		case errors.Is(err, io.EOF):
			return nil // the proxy ended the stream
		case err != nil:
			return noAnswer("notifications", err)
		case resp.Error != nil:
			c.print(resp.Error.Raw())
			return &exitStatus{code: exitRefused}
		}
		var line bytes.Buffer
		if json.Compact(&line, resp.Result) != nil {
			return noAnswer("notifications", errors.New("a notification is not JSON"))
		}
		c.print(line.Bytes())
	}
	return nil
}

// info prints the image's DIVERGE.md, parsed.
func (c *caller) info(ans wire.InfoAnswer, err error) error {
	switch {
	case err != nil:
		return unanswered(askInfo, err)
	case ans.Missing():
		return exitWith(exitRefused, "info: the image has no DIVERGE.md")
	case ans.Error != nil:
		c.print(ans.Error)
		return exitWith(exitRefused, "info: the image's DIVERGE.md does not parse")
	}
	c.print(ans.Document)
	return nil
}

// secrets reports Fed on stderr (stdout stays empty: there is no JSON in
// a Fed) or prints the program's refusal.
func (c *caller) secrets(err error, a ask) error {
	var refused *wiremcp.RefusedError
	switch {
	case errors.As(err, &refused):
		c.print([]byte(refused.Value))
		return exitWith(exitRefused, "secrets: the program refused them")
	case err != nil:
		return unanswered(askSecrets, err)
	}
	fmt.Fprintf(c.errOut, "mcpgate call: secrets fed (%d values)\n", a.secrets)
	return nil
}

func (c *caller) print(b []byte) {
	_, _ = c.out.Write(append(bytes.TrimRight(bytes.Clone(b), "\n"), '\n'))
}

// unanswered is a stream that ended before its answer: a bare finish is
// "not served"; anything else is no answer at all.
func unanswered(what string, err error) error {
	if errors.Is(err, wire.ErrBareFinish) {
		return exitWith(exitNotServed, "%s: the proxy received the request and does not serve it (bare finish)", what)
	}
	return noAnswer(what, err)
}

func noAnswer(what string, err error) error {
	return exitWith(exitNoAnswer, "%s: %w", what, err)
}
