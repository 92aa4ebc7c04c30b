// session.go is the start of every use of the framed form: dial, send the
// tools begin, wait for Begun. Then, on the begun scope, the client makes
// its asks, each on a channel of its own: secrets, Info, one MCP exchange.

package wiremcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
)

// Options are what Begin needs.
type Options struct {
	// Arguments are the begin's arguments, JSON (nil: a begin without).
	Arguments json.RawMessage
	// ReadLimit bounds one wire message (0: wire.DefaultReadLimit).
	ReadLimit int64
	// KeepAlive and KeepAliveTimeout are the connection's pings
	// (wire.Options).
	KeepAlive, KeepAliveTimeout time.Duration
	// Channels serves the channels the proxy opens (nil: a bare finish
	// for each).
	Channels wire.Handler
	// Dial configures the WebSocket handshake: a wss:// proxy's TLS, the
	// bearer token it asks for (nil: the defaults).
	Dial *websocket.DialOptions
}

// Session is one framed connection with its tools scope begun.
type Session struct {
	Client *wire.Client
	Scope  *wire.Scope
	// Begun is the answer to the begin: the program's register answer,
	// or empty when the proxy has no contract program.
	Begun json.RawMessage
}

// ErrNotCarried is Exchange's answer for a method the wire has no form for.
var ErrNotCarried = errors.New("not carried by the wire")

// RefusedError is a proxy's refusal of a begin or of the secrets: the
// wire's error value as the proxy sent it. It may quote what the program
// refused; a caller that reports it scrubs it first.
type RefusedError struct {
	What  string // "tools begin" or "secrets"
	Value string // the wire error value, JSON
}

func (e *RefusedError) Error() string { return e.What + " refused: " + e.Value }

// Begin dials the framed connection at url (ws://host:port, a trailing /
// optional), sends the tools begin and waits for Begun. A refusal is a
// *RefusedError; ctx bounds it all.
func Begin(ctx context.Context, url string, o Options) (_ *Session, err error) {
	if !strings.HasSuffix(url, "/") {
		url += "/"
	}
	cl, err := wire.Dial(ctx, url, &wire.ClientOptions{Channels: o.Channels, Dial: o.Dial,
		Options: wire.Options{ReadLimit: o.ReadLimit, KeepAlive: o.KeepAlive, KeepAliveTimeout: o.KeepAliveTimeout}})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = cl.Close()
		}
	}()
	scope, err := cl.Open(ctx, wire.BeginTools{Arguments: o.Arguments}.Append(nil))
	if err != nil {
		return nil, fmt.Errorf("tools begin: %w", err)
	}
	p, err := scope.Next(ctx)
	if err != nil {
		return nil, fmt.Errorf("tools begin: %w", err)
	}
	begin, err := wire.DecodeBeginAnswer(p)
	if err != nil {
		return nil, fmt.Errorf("tools begin: %w", err)
	}
	if !begin.Begun() {
		return nil, &RefusedError{What: "tools begin", Value: string(begin.Error)}
	}
	return &Session{Client: cl, Scope: scope, Begun: begin.Answer}, nil
}

// Close ends the connection.
func (s *Session) Close() error { return s.Client.Close() }

// FeedSecrets sends the secrets' values and waits for Fed; the program's
// refusal is a *RefusedError.
func (s *Session) FeedSecrets(ctx context.Context, values map[string]string) error {
	return s.feed(ctx, wire.Secrets{Values: values})
}

// FeedRawSecrets is FeedSecrets with the Values JSON as it is.
func (s *Session) FeedRawSecrets(ctx context.Context, values json.RawMessage) error {
	return s.feed(ctx, wire.Secrets{Raw: values})
}

func (s *Session) feed(ctx context.Context, req wire.Secrets) error {
	p, err := s.ask(ctx, req)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	ans, err := wire.DecodeSecretsAnswer(p)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if !ans.Fed() {
		return &RefusedError{What: "secrets", Value: string(ans.Error)}
	}
	return nil
}

// Info asks for the image's DIVERGE.md.
func (s *Session) Info(ctx context.Context) (wire.InfoAnswer, error) {
	p, err := s.ask(ctx, wire.Info{})
	if err != nil {
		return wire.InfoAnswer{}, err
	}
	return wire.DecodeInfoAnswer(p)
}

// Exchange makes one MCP exchange: method on its channel, and the one
// answer. A method the wire does not carry is ErrNotCarried; a bare
// finish is wire.ErrBareFinish, wrapped.
func (s *Session) Exchange(ctx context.Context, method string, params json.RawMessage) (wire.Response, error) {
	req, ok := ChannelRequest(method, params)
	if !ok {
		return wire.Response{}, fmt.Errorf("%s: %w", method, ErrNotCarried)
	}
	p, err := s.ask(ctx, req)
	if err != nil {
		return wire.Response{}, err
	}
	return wire.DecodeResponse(p)
}

// Notifications opens the notification stream.
func (s *Session) Notifications(ctx context.Context) (*wire.Channel, error) {
	return s.Scope.OpenChannel(ctx, wire.McpNotifications{}.Append(nil))
}

// ask opens a channel for req and returns its one answer, the channel
// drained to its finish.
func (s *Session) ask(ctx context.Context, req wire.ChannelRequest) ([]byte, error) {
	ch, err := s.Scope.OpenChannel(ctx, req.Append(nil))
	if err != nil {
		return nil, err
	}
	p, err := ch.Next(ctx)
	if err != nil {
		return nil, err
	}
	for { // to the finish, so that the channel is done with
		if _, err := ch.Next(ctx); err != nil {
			break
		}
	}
	return p, nil
}
