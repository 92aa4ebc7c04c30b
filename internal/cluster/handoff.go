// handoff.go carries between replicas what reached one and belongs to
// another: a 2026-07-28 caller's retry of a call parked elsewhere
// (catalogue.ParkHandOff), and a 2025 session's answer to a request
// another replica sent (mcp.Options.ForeignAnswer). Each replica listens
// on a channel of its own name. A retry is published there with the name
// of a list, and the answer waits on that list, which only its asker
// reads. A client's answer is published and not acknowledged. Nothing is
// kept: a replica that is gone has no listener, and its calls went with
// it.

package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// handBackTTL bounds how long an answer no one took stays in Redis.
const handBackTTL = time.Minute

// HandOff is this replica's end of the hand-off.
type HandOff struct {
	r         *Redis
	name      string
	listening atomic.Bool
	wg        sync.WaitGroup // the retries being resumed here
}

// handOff is a retry on its way, and where its answer goes; or a
// client's answer to a request the replica sent on a session.
type handOff struct {
	Reply  string                `json:"reply"`
	Retry  catalogue.ParkedRetry `json:"retry"`
	Answer *clientAnswer         `json:"answer"`
}

// clientAnswer is a client's answer, as it came, to a request of session's.
type clientAnswer struct {
	Session string          `json:"session"`
	Message json.RawMessage `json:"message"`
}

// handBack is a resumed retry's answer: a result or an error object, as
// the replica holding the park answered it.
type handBack struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// HandOff is the hand-off between replicas, under a new name of this
// replica's; Serve listens for what is handed to it.
func (r *Redis) HandOff() *HandOff { return &HandOff{r: r, name: randomName()} }

func randomName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// isName reports whether s could be a replica's name: no more of a
// caller's requestState reaches Redis than that.
func isName(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func (p *HandOff) channel(name string) string { return p.r.prefix + "handoff:" + name }

// replyPrefix begins the name of every list a retry's answer comes back on.
func (p *HandOff) replyPrefix() string { return p.r.prefix + "handoff-reply:" }

// Name is this replica's name, listening or not.
func (p *HandOff) Name() string { return p.name }

// Answer hands a client's answer, m as it came, to the replica whose
// request of session it answers. Nothing waits for an acknowledgement: an
// answer that finds no request waiting is dropped there, as here.
func (p *HandOff) Answer(ctx context.Context, replica, session string, m []byte) {
	if !isName(replica) {
		return
	}
	b := append([]byte(`{"answer":{"session":`), jsonrpc.AppendString(nil, session)...)
	b = append(append(append(b, `,"message":`...), m...), "}}"...)
	if n, err := p.r.rdb.Publish(ctx, p.channel(replica), b).Result(); err != nil || n == 0 {
		p.r.log.Warn("redis: a client's answer could not be handed to the replica that asked", "listeners", n, "err", err)
	}
}

// Replica is this replica's name once it listens, else "".
func (p *HandOff) Replica() string {
	if p.listening.Load() {
		return p.name
	}
	return ""
}

// Resume hands retry to replica and waits for its answer, or for ctx.
func (p *HandOff) Resume(ctx context.Context, replica string, retry catalogue.ParkedRetry) (json.RawMessage, error) {
	if !isName(replica) {
		return nil, catalogue.ErrParkUnknown
	}
	reply := p.replyPrefix() + randomName() + randomName()
	n, err := p.r.rdb.Publish(ctx, p.channel(replica), appendHandOff(nil, reply, retry)).Result()
	if err != nil {
		p.r.log.Warn("redis: a retry could not be handed to the replica holding its call", "err", err)
		return nil, handOffFailed
	}
	if n == 0 {
		return nil, catalogue.ErrParkUnknown // that replica is gone, and its parks with it
	}
	for waited := 1; ; waited++ {
		v, err := p.r.rdb.BLPop(ctx, time.Second, reply).Result()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, redis.Nil):
			if waited%livenessEvery == 0 && !p.listens(ctx, replica) {
				return nil, holderGone // and the call with it
			}
			continue
		case err != nil:
			p.r.log.Warn("redis: the answer to a handed-over retry could not be read", "err", err)
			return nil, handOffFailed
		}
		var back handBack
		if len(v) != 2 || json.Unmarshal([]byte(v[1]), &back) != nil {
			return nil, handOffFailed
		}
		if back.Error != nil {
			return nil, jsonrpc.RawError(back.Error)
		}
		return back.Result, nil
	}
}

// appendHandOff appends the message handing retry over, answered on
// reply. The params and capabilities go as the caller sent them, byte for
// byte (json.Marshal would escape and compact them).
func appendHandOff(b []byte, reply string, retry catalogue.ParkedRetry) []byte {
	str := func(k, v string) {
		b = append(b, `,"`+k+`":`...)
		b = jsonrpc.AppendString(b, v)
	}
	raw := func(k string, v json.RawMessage) {
		if len(v) > 0 {
			b = append(b, `,"`+k+`":`...)
			b = append(b, v...)
		}
	}
	b = append(b, `{"reply":`...)
	b = jsonrpc.AppendString(b, reply)
	b = append(b, `,"retry":{"backend":`...)
	b = jsonrpc.AppendString(b, retry.Backend)
	str("park", retry.Park)
	str("principal", retry.Principal)
	str("method", retry.Method)
	str("entry", retry.Entry)
	raw("params", retry.Params)
	raw("capabilities", retry.Capabilities)
	return append(b, "}}"...)
}

// handOffFailed answers a retry that could not reach the replica holding
// its call: why is logged, never answered.
var handOffFailed = jsonrpc.NewError(jsonrpc.CodeInternalError, "the replica holding the call could not be reached", nil)

// holderGone answers a retry whose replica stopped listening before it
// answered: it ended, and the call with it.
var holderGone = jsonrpc.NewError(jsonrpc.CodeInternalError, "the replica holding the call has gone", nil)

// livenessEvery is how many seconds of waiting for an answer pass between
// two checks that the replica holding the call still listens.
const livenessEvery = 2

// listens reports whether replica still listens, true when Redis cannot
// say: the wait goes on, bounded by the caller's.
func (p *HandOff) listens(ctx context.Context, replica string) bool {
	n, err := p.r.rdb.PubSubNumSub(ctx, p.channel(replica)).Result()
	return err != nil || n[p.channel(replica)] > 0
}

// Serve resumes the retries handed to this replica with resume, and gives
// the clients' answers to answer, until ctx ends; then it waits for the
// retries under way.
func (p *HandOff) Serve(ctx context.Context, resume func(context.Context, catalogue.ParkedRetry) (json.RawMessage, error),
	answer func(session string, m []byte)) {
	defer p.wg.Wait()
	for ctx.Err() == nil {
		sub := p.r.rdb.Subscribe(ctx, p.channel(p.name))
		// A blocked Receive does not end with its context: closing the
		// subscription ends it.
		stop := context.AfterFunc(ctx, func() { _ = sub.Close() })
		if _, err := sub.Receive(ctx); err == nil {
			p.listening.Store(true)
			p.listen(ctx, sub, resume, answer)
		} else if ctx.Err() == nil {
			p.r.log.Warn("redis: retries of parked calls cannot reach this replica; retrying", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
		stop()
		_ = sub.Close()
	}
}

func (p *HandOff) listen(ctx context.Context, sub *redis.PubSub, resume func(context.Context, catalogue.ParkedRetry) (json.RawMessage, error),
	answer func(session string, m []byte)) {
	for {
		msg, err := sub.Receive(ctx)
		if err != nil {
			if ctx.Err() == nil {
				p.r.log.Warn("redis: retries of parked calls interrupted; listening again", "err", err)
			}
			return
		}
		m, ok := msg.(*redis.Message)
		if !ok {
			continue
		}
		var h handOff
		err = json.Unmarshal([]byte(m.Payload), &h)
		if err == nil && h.Answer != nil {
			answer(h.Answer.Session, h.Answer.Message)
			continue
		}
		if err != nil || !strings.HasPrefix(h.Reply, p.replyPrefix()) {
			p.r.log.Warn("redis: a handed-over retry that does not parse was dropped")
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.answer(ctx, h, resume)
		}()
	}
}

// answer resumes h's retry here and sends its answer back.
func (p *HandOff) answer(ctx context.Context, h handOff, resume func(context.Context, catalogue.ParkedRetry) (json.RawMessage, error)) {
	res, err := resume(ctx, h.Retry)
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	b := append([]byte(`{"result":`), res...)
	if err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			p.r.log.Warn("relay: a handed-over retry failed", "err", err)
			je = jsonrpc.NewError(jsonrpc.CodeInternalError, "the call failed on the replica holding it", nil)
		}
		b = append([]byte(`{"error":`), je.Raw()...)
	}
	b = append(b, '}')
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	pipe := p.r.rdb.TxPipeline()
	pipe.RPush(wctx, h.Reply, b)
	pipe.Expire(wctx, h.Reply, handBackTTL)
	if _, err := pipe.Exec(wctx); err != nil {
		p.r.log.Warn("redis: the answer to a handed-over retry was not sent back", "err", err)
	}
}
