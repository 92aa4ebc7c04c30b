// buckets.go is the rate limiter's shared buckets: a token bucket per key
// in a Redis hash, holding the tokens and when they were counted. One
// script spends them, reading the Redis server's clock. Every replica so
// spends from the same bucket at the same instant, and no two admissions
// race.

package cluster

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/internal/policy"
)

// takeScript spends one token of KEYS[1], a bucket refilling ARGV[1]
// tokens a second up to ARGV[2]. It answers {1, 0} when it spent, else
// {0, microseconds until a token is there}. The bucket expires once it
// would be full again: a full bucket and no bucket are the same.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
  at = now
end
local ok = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
else
  wait = math.ceil((1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return {ok, wait}
`)

// Buckets are the shared rate-limit buckets.
func (r *Redis) Buckets() policy.SharedBuckets { return buckets{r} }

type buckets struct{ r *Redis }

func (b buckets) Take(ctx context.Context, key string, l policy.Limit) (bool, time.Duration, error) {
	res, err := takeScript.Run(ctx, b.r.rdb, []string{b.r.key("rl", key)}, l.Rate, l.Burst).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(res) != 2 {
		return false, 0, errShortReply
	}
	if res[0] == 1 {
		return true, 0, nil
	}
	return false, time.Duration(res[1]) * time.Microsecond, nil
}
