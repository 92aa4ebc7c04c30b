// tasks.go shares the routes of tasks that backends made for callers
// (catalogue.SharedTasks): one key per caller and task id, its value the
// backend, expiring with the task. A caller with no session, whom the load
// balancer sends anywhere, so polls its task through any replica.

package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
)

// routeScript: KEYS[1] the route; ARGV: backend, ttl (ms). Sets the route
// unless another backend's lives, and returns the backend that holds it.
var routeScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
  return cur
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`)

// routedScript: KEYS[1] the route. Its backend and what is left of its
// life (ms), or false.
var routedScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then
  return false
end
return {cur, redis.call('PTTL', KEYS[1])}
`)

// Tasks are the shared task routes.
func (r *Redis) Tasks() catalogue.SharedTasks { return tasks{r} }

type tasks struct{ r *Redis }

func (t tasks) key(principal, id string) string { return t.r.key("task", principal, id) }

func (t tasks) Route(ctx context.Context, principal, id, backend string, ttl time.Duration) (string, error) {
	return routeScript.Run(ctx, t.r.rdb, []string{t.key(principal, id)}, backend, max(ttl.Milliseconds(), 1)).Text()
}

func (t tasks) Routed(ctx context.Context, principal, id string) (string, time.Duration, error) {
	v, err := routedScript.Run(ctx, t.r.rdb, []string{t.key(principal, id)}).Slice()
	if errors.Is(err, redis.Nil) || err == nil && len(v) != 2 {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	backend, _ := v[0].(string)
	ms, _ := v[1].(int64)
	return backend, time.Duration(ms) * time.Millisecond, nil
}
