// sessions.go keeps the sealed sessions of every replica in Redis: one
// sorted set per identity, members the sessions' random ids, scores when
// each was last used. A session is open while it is in the set and was
// used within the idle timeout; DELETE takes it out; the per-identity cap
// counts the open ones. Each operation is one script: the count and the
// add cannot be split by another replica's initialize.

package cluster

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/mcphttp"
)

// openScript: KEYS[1] the identity's set; ARGV: sid, limit, idle (ms).
// Drops the idle members, refuses at the limit, adds sid.
var openScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idle = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - idle)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], idle)
return 1
`)

// useScript: KEYS[1] the set; ARGV: sid, idle (ms). 1 and the score moved
// to now when sid is open, else 0 (and sid dropped if it went idle).
var useScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idle = tonumber(ARGV[2])
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at then
  return 0
end
if tonumber(at) < now - idle then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], idle)
return 1
`)

// Sessions are the shared sessions.
func (r *Redis) Sessions() mcphttp.SharedSessions { return sessions{r} }

type sessions struct{ r *Redis }

func (s sessions) set(owner string) string { return s.r.key("sessions", owner) }

func (s sessions) Open(ctx context.Context, owner, sid string, limit int, idle time.Duration) (bool, error) {
	n, err := openScript.Run(ctx, s.r.rdb, []string{s.set(owner)}, sid, limit, idle.Milliseconds()).Int()
	return n == 1, err
}

func (s sessions) Use(ctx context.Context, owner, sid string, idle time.Duration) (bool, error) {
	n, err := useScript.Run(ctx, s.r.rdb, []string{s.set(owner)}, sid, idle.Milliseconds()).Int()
	return n == 1, err
}

func (s sessions) End(ctx context.Context, owner, sid string) error {
	return s.r.rdb.ZRem(ctx, s.set(owner), sid).Err()
}
