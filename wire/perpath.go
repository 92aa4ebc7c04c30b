// perpath.go is the per-path form: one WebSocket per exchange, on a path
// naming the MCP method. One binary message goes each way, then the server
// closes cleanly. On the notifications path, response frames stream for as
// long as the client keeps it open. Both roles are here, because each is a
// few lines over the WebSocket library.

package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The per-path form's paths.
const (
	PathListTools     = "/tool/list-tools"
	PathListResources = "/tool/list-resources"
	PathCallTool      = "/tool/call-tool"
	PathReadResource  = "/tool/read-resource"
	PathNotifications = "/tool/notifications"
)

// NotBinaryMessage is the -32602 message of a unary path whose first
// message was not binary, or never came.
const NotBinaryMessage = "params were not a binary message"

// CallPath makes one unary exchange: it dials baseURL+path, sends params
// as one binary message and returns the decoded response frame. A server
// that closes cleanly without answering gives ErrNotServed. ctx bounds the
// whole exchange.
func CallPath(ctx context.Context, baseURL, path string, params []byte) (Response, error) {
	ws, err := dialPath(ctx, baseURL, path)
	if err != nil {
		return Response{}, err
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageBinary, params); err != nil {
		return Response{}, fmt.Errorf("wire: %s: sending params: %w", path, err)
	}
	typ, msg, err := ws.Read(ctx)
	if err != nil {
		if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
			return Response{}, ErrNotServed
		}
		return Response{}, fmt.Errorf("wire: %s: reading the answer: %w", path, err)
	}
	if typ != websocket.MessageBinary {
		return Response{}, ErrNotBinary
	}
	_ = ws.Close(websocket.StatusNormalClosure, "")
	return DecodeResponse(msg)
}

func dialPath(ctx context.Context, baseURL, path string) (*websocket.Conn, error) {
	url := strings.TrimSuffix(baseURL, "/") + path
	ws, resp, err := websocket.Dial(ctx, url, JoinFrames(nil))
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("wire: dial %s: HTTP %d: %w", url, resp.StatusCode, err)
		}
		return nil, fmt.Errorf("wire: dial %s: %w", url, err)
	}
	ws.SetReadLimit(DefaultReadLimit)
	return ws, nil
}

// Subscription is an open notifications path.
type Subscription struct {
	ws      *websocket.Conn
	answers *stream
	done    chan struct{}
}

// SubscribePath opens baseURL's notifications path. ctx bounds the
// handshake only; the subscription lasts until Close or the server ends it.
func SubscribePath(ctx context.Context, baseURL string) (*Subscription, error) {
	ws, err := dialPath(ctx, baseURL, PathNotifications)
	if err != nil {
		return nil, err
	}
	s := &Subscription{ws: ws, answers: newStream(), done: make(chan struct{})}
	go s.read()
	return s, nil
}

// read queues every binary message, so that control frames are answered
// however slowly Next is called.
func (s *Subscription) read() {
	defer close(s.done)
	for {
		typ, msg, err := s.ws.Read(context.Background())
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
				err = io.EOF
			}
			s.answers.fail(err)
			return
		}
		if typ == websocket.MessageBinary {
			s.answers.push(msg)
		}
	}
}

// Next returns the next notification ([0], Result holding it) or the
// server's error ([1]). After the server's clean close it returns io.EOF.
// ctx bounds only this wait.
func (s *Subscription) Next(ctx context.Context) (Response, error) {
	p, err := s.answers.next(ctx)
	if err != nil {
		return Response{}, err
	}
	return DecodeResponse(p)
}

// Close ends the subscription and waits for its reader.
func (s *Subscription) Close() error {
	err := s.ws.Close(websocket.StatusNormalClosure, "")
	<-s.done
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// ServePath serves one unary exchange: it accepts the upgrade, reads the
// params, writes call's response frame and closes cleanly. A first message
// that is not binary, or a socket that ends before one, is answered [1]
// -32602 without calling call. call's ctx ends if the client goes away or
// sends anything more. The error is for logs: the client has had its
// answer, or could not be given one.
func ServePath(w http.ResponseWriter, r *http.Request, call func(ctx context.Context, params []byte) Response) error {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	ws.SetReadLimit(DefaultReadLimit)
	ctx := r.Context()
	var resp Response
	typ, params, err := ws.Read(ctx)
	if err != nil || typ != websocket.MessageBinary {
		resp = ErrorResponse(jsonrpc.CodeInvalidParams, NotBinaryMessage)
	} else {
		resp = call(ws.CloseRead(ctx), params)
	}
	if werr := ws.Write(ctx, websocket.MessageBinary, resp.Append(nil)); werr != nil {
		return errors.Join(err, werr)
	}
	return closeAfterAnswer(ws)
}

// closeAfterAnswer closes the path cleanly once the answer is written. A
// client that closes first (as CallPath does, on reading the answer) races
// our close handshake; the answer is delivered either way, so losing that
// race is not an error.
func closeAfterAnswer(ws *websocket.Conn) error {
	err := ws.Close(websocket.StatusNormalClosure, "")
	if err == nil || errors.Is(err, net.ErrClosed) || websocket.CloseStatus(err) != -1 {
		return nil
	}
	return err
}

// ServeSubscription serves the notifications path: it accepts the upgrade
// and runs stream, which sends response frames with send until it returns
// or its ctx ends — when the client closes or sends anything — and then
// closes cleanly. send may be called from several goroutines.
func ServeSubscription(w http.ResponseWriter, r *http.Request, stream func(ctx context.Context, send func(Response) error)) error {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	ctx := ws.CloseRead(r.Context())
	var mu sync.Mutex
	var buf []byte
	send := func(resp Response) error {
		mu.Lock()
		defer mu.Unlock()
		buf = resp.Append(buf[:0])
		return ws.Write(ctx, websocket.MessageBinary, buf)
	}
	stream(ctx, send)
	err = ws.Close(websocket.StatusNormalClosure, "")
	if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
		return nil // the client ended it
	}
	return err
}
