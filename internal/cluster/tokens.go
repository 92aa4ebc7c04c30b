// tokens.go announces token changes between replicas: a message on one
// channel for each token created or revoked, applied by every replica that
// hears it. On every (re)subscription the replica reads the store, so that
// what it missed while it was not listening is caught up.

package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

var errShortReply = errors.New("redis: unexpected reply")

// TokenEvent is a token created (RevokedAt zero) or revoked, or a grant
// of a person revoked (Principal set, the rest zero): what every replica
// holds open for that person ends.
type TokenEvent struct {
	ID        string
	RevokedAt time.Time
	Principal string
}

func (e TokenEvent) encode() string {
	switch {
	case e.Principal != "":
		return "principal " + base64.RawURLEncoding.EncodeToString([]byte(e.Principal))
	case e.RevokedAt.IsZero():
		return "created " + e.ID
	}
	return "revoked " + e.ID + " " + strconv.FormatInt(e.RevokedAt.UnixNano(), 10)
}

func decodeTokenEvent(s string) (TokenEvent, bool) {
	kind, rest, _ := strings.Cut(s, " ")
	switch kind {
	case "principal":
		p, err := base64.RawURLEncoding.DecodeString(rest)
		return TokenEvent{Principal: string(p)}, err == nil && len(p) > 0
	case "created":
		return TokenEvent{ID: rest}, rest != "" && !strings.Contains(rest, " ")
	case "revoked":
		id, at, _ := strings.Cut(rest, " ")
		ns, err := strconv.ParseInt(at, 10, 64)
		if id == "" || err != nil || ns <= 0 {
			return TokenEvent{}, false
		}
		return TokenEvent{ID: id, RevokedAt: time.Unix(0, ns).UTC()}, true
	}
	return TokenEvent{}, false
}

func (r *Redis) tokenChannel() string { return r.prefix + "tokens" }

// Publish announces ev to every replica.
func (r *Redis) Publish(ctx context.Context, ev TokenEvent) error {
	return r.rdb.Publish(ctx, r.tokenChannel(), ev.encode()).Err()
}

// Watch calls apply for every token event announced, and catchUp each time
// the subscription starts (the first time and after every break), until
// ctx ends. A message that does not parse is logged and dropped.
func (r *Redis) Watch(ctx context.Context, apply func(TokenEvent), catchUp func()) {
	for ctx.Err() == nil {
		sub := r.rdb.Subscribe(ctx, r.tokenChannel())
		// A blocked Receive does not end with its context: closing the
		// subscription ends it.
		stop := context.AfterFunc(ctx, func() { _ = sub.Close() })
		// The subscription is confirmed before catching up: an event
		// published from here on is heard, and one published before is in
		// the store.
		if _, err := sub.Receive(ctx); err != nil {
			stop()
			_ = sub.Close()
			if ctx.Err() == nil {
				r.log.Warn("redis: token events unreachable; retrying", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		catchUp()
		r.listen(ctx, sub, apply, catchUp)
		stop()
		_ = sub.Close()
	}
}

// listen applies events until the subscription breaks or ctx ends.
// go-redis resubscribes by itself after a broken connection; what was
// published meanwhile is lost, so every resubscription catches up.
func (r *Redis) listen(ctx context.Context, sub interface {
	Receive(context.Context) (any, error)
}, apply func(TokenEvent), catchUp func()) {
	for {
		msg, err := sub.Receive(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("redis: token events interrupted; catching up from the store", "err", err)
			}
			return
		}
		switch m := msg.(type) {
		case *redisMessage:
			ev, ok := decodeTokenEvent(m.Payload)
			if !ok {
				r.log.Warn("redis: a token event that does not parse was dropped")
				continue
			}
			apply(ev)
		case *redisSubscription:
			if m.Kind == "subscribe" {
				catchUp() // resubscribed after a break
			}
		}
	}
}

type (
	redisMessage      = redis.Message
	redisSubscription = redis.Subscription
)
