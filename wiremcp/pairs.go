// pairs.go is the gateway's half of the Postgres and Daemon pairs
// (docs/wire.md). The proxy opens its channel [0][id] for a database
// connection of the program's. The gateway then dials its database and
// opens its own channel [0][id]. The database's bytes go to the proxy as
// channel responses on the proxy's channel. What comes on the gateway's
// channel, the driver's bytes, is written to the database in order,
// unread. The database going away finishes the proxy's channel, and the
// proxy closes the driver's socket. The proxy finishing the gateway's
// channel (the driver closed) closes the database connection. A database
// the gateway cannot reach, or none, is a bare finish: declined. The
// Daemon pair is the same, message for message (pairDaemon).

package wiremcp

import (
	"context"
	"errors"
	"net"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
)

// pairChunk is the most of the database's bytes one channel response
// carries; pairQueue the most of the program's that wait unwritten before
// the connection stops reading (wire.Channel.LimitQueue: back-pressure).
const (
	pairChunk = 64 << 10
	pairQueue = 1 << 20
)

func (c *Conn) pairPostgres(ctx context.Context, r *wire.Responder, id uint32) {
	if c.postgres == nil {
		c.log.Info("wiremcp: a database connection from the program, and no database to pair it with; declined", "conn", id)
		return
	}
	db, err := c.postgres(ctx)
	if err != nil {
		c.log.Warn("wiremcp: the database cannot be reached; the program's connection is declined", "conn", id, "err", err)
		return
	}
	defer db.Close()
	ch, err := c.scope.OpenChannel(ctx, wire.Postgres{ConnID: id}.Append(nil))
	if err != nil {
		return
	}
	ch.LimitQueue(pairQueue)
	// The driver's bytes, to the database, until the proxy finishes.
	toDB := make(chan struct{})
	go func() {
		defer close(toDB)
		defer db.Close() // the driver closed: so does the database connection
		for {
			if _, err := ch.CopyNext(ctx, db); err != nil {
				if errors.Is(err, wire.ErrBareFinish) {
					c.log.Info("wiremcp: the proxy knows no database connection of that id", "conn", id)
				}
				return
			}
		}
	}()
	// The database's bytes, to the proxy, until it closes; returning
	// finishes the proxy's channel.
	if _, err := r.Pump(db, pairChunk); err != nil && !errors.Is(err, net.ErrClosed) {
		c.log.Debug("wiremcp: database connection relay", "conn", id, "err", err)
	}
	_ = db.Close()
	_ = r.Finish() // the proxy closes the driver's socket
	<-toDB
}

// pairDaemon is the gateway's half of the Daemon pair. For the proxy's
// channel [1][id] it dials the daemon endpoint and opens its own channel
// [2][id]. It relays message for message: the program's frames, channel
// responses on the gateway's channel, go to the daemon; the daemon's
// messages go to the proxy as channel responses on its channel. An
// endpoint that refuses, or none, is a bare finish: declined.
func (c *Conn) pairDaemon(ctx context.Context, r *wire.Responder, id uint32) {
	if c.daemon == "" {
		c.log.Info("wiremcp: a daemon connection from the program, and no daemon to pair it with; declined", "conn", id)
		return
	}
	ws, _, err := websocket.Dial(ctx, c.daemon, wire.JoinFrames(nil))
	if err != nil {
		c.log.Warn("wiremcp: the daemon endpoint refused; the program's connection is declined", "conn", id, "err", err)
		return
	}
	ws.SetReadLimit(-1)
	defer ws.CloseNow()
	ch, err := c.scope.OpenChannel(ctx, wire.Daemon{ConnID: id}.Append(nil))
	if err != nil {
		return
	}
	ch.LimitQueue(pairQueue)
	toDaemon := make(chan struct{})
	go func() {
		defer close(toDaemon)
		defer ws.Close(websocket.StatusNormalClosure, "the program closed its connection")
		for {
			msg, err := ch.Next(ctx)
			if err != nil {
				return
			}
			if err := ws.Write(ctx, websocket.MessageBinary, msg); err != nil {
				return
			}
		}
	}()
	for {
		typ, msg, err := ws.Read(ctx)
		if err != nil {
			break
		}
		if typ == websocket.MessageBinary && r.Respond(msg) != nil {
			break
		}
	}
	_ = ws.CloseNow()
	_ = r.Finish() // the proxy closes the program's connection
	<-toDaemon
}
