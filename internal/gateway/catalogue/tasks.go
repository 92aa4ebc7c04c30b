// tasks.go relays the tasks extension (SEP-2663) of backends that speak
// 2026-07-28. A backend's CreateTaskResult reaches its caller as it came.
// The gateway notes which backend made the task, for that caller alone.
// The caller's tasks/get, tasks/update and tasks/cancel of that id go to
// that backend (RelayTasks), with params made anew from the id routed on.
// Another caller naming the id is answered as for an unknown task, by the
// gateway's own engine: the id is no key to another caller's work. And no
// other backend can take the route: one answering the caller with an id
// the caller's task of another backend holds is refused.
//
// Replicas share the routes (SharedTasks, Redis), so that a caller with no
// session polls its task through any of them. Each keeps those it made or
// read in memory as well: a route never changes while it lives.

package catalogue

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// taskRouteTTL bounds how long a task id is routed when its backend did
// not say (ttlMs): the engine's own tasks live as long.
const taskRouteTTL = 10 * time.Minute

// maxTaskRoutes bounds the routes kept; the oldest go first.
const maxTaskRoutes = 65536

// taskKey is a routed task: its caller and its id. Each caller's ids are
// routed apart, so that the same id made for another caller displaces
// nothing.
type taskKey struct{ principal, id string }

type taskRoute struct {
	backend string
	expires time.Time
}

// SharedTasks are the task routes of every replica.
type SharedTasks interface {
	// Route holds backend as the route of principal's task id for ttl,
	// unless another backend's route of it lives; it returns the backend
	// that holds the route.
	Route(ctx context.Context, principal, id, backend string, ttl time.Duration) (holder string, err error)
	// Routed is the backend that holds the route of principal's task id
	// and for how much longer, or "" when none does.
	Routed(ctx context.Context, principal, id string) (backend string, left time.Duration, err error)
}

// ShareTasks makes the routes of tasks every replica's, logging to log
// when they cannot be reached: set before any backend relays.
func (c *Claims) ShareTasks(s SharedTasks, log *slog.Logger) { c.shared, c.sharedLog = s, log }

// taskFields are, for each method of the extension, the members of its
// params besides taskId and _meta that are relayed. The params a backend
// receives are made anew from what the gateway routed on, never the
// caller's bytes. A key the gateway did not read so cannot reach it: a
// folded twin of taskId naming another caller's task.
var taskFields = map[string][]string{
	"tasks/get":    nil,
	"tasks/cancel": nil,
	"tasks/update": {"inputResponses"},
}

// noteTask keeps the route of a CreateTaskResult res that b answered its
// caller with, unless the caller's task of that id is another backend's.
func (c *Claims) noteTask(ctx context.Context, b *Mirror, res json.RawMessage) error {
	id, ok := jsonrpc.LookupString(res, "taskId")
	if !ok || id == "" {
		return nil
	}
	ttl := taskRouteTTL
	if raw, _ := jsonrpc.Lookup(res, "ttlMs"); len(raw) > 0 {
		var ms int64
		if json.Unmarshal(raw, &ms) == nil && ms > 0 && time.Duration(ms)*time.Millisecond < 24*time.Hour {
			ttl = time.Duration(ms) * time.Millisecond
		}
	}
	now, key := time.Now(), taskKey{principal(ctx), id}
	holder := c.localRoute(key, now)
	if holder == "" && c.shared != nil {
		var err error
		if holder, err = c.shared.Route(ctx, key.principal, id, b.name, ttl); err != nil {
			// The task still routes through this replica.
			b.log.Warn("redis: a task's route was not shared; the caller can poll it through this replica alone", "err", err)
			holder = ""
		}
	}
	if holder == "" || holder == b.name {
		// Checked again as the route is kept: another call may have
		// routed the id meanwhile.
		c.mu.Lock()
		if rt, ok := c.tasks.Get(key); ok && rt.backend != b.name && !now.After(rt.expires) {
			holder = rt.backend
		} else {
			c.tasks.Put(key, taskRoute{backend: b.name, expires: now.Add(ttl)})
		}
		c.mu.Unlock()
	}
	if holder != "" && holder != b.name {
		b.log.Warn("relay: a backend answered with the task id of another backend's task for the same caller; refused",
			"held_by", holder)
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "backend "+b.name+" answered with a task id another backend's task holds",
			map[string]string{"backend": b.name})
	}
	return nil
}

// localRoute is the backend of key's live route in this replica's memory,
// or "". It first forgets the oldest routes that have expired.
func (c *Claims) localRoute(key taskKey, now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, rt, ok := c.tasks.Oldest(); ok && now.After(rt.expires); k, rt, ok = c.tasks.Oldest() {
		c.tasks.Delete(k)
	}
	if rt, ok := c.tasks.Get(key); ok && !now.After(rt.expires) {
		return rt.backend
	}
	return ""
}

// taskBackend is the backend that made the caller's task of r, or "";
// the backend itself while it is live here, else nil; and the task's id.
func (c *Claims) taskBackend(ctx context.Context, r *mcp.Request) (string, *Mirror, string) {
	id, ok := jsonrpc.LookupString(r.Params, "taskId")
	if !ok {
		return "", nil, ""
	}
	now, key := time.Now(), taskKey{principal(ctx), id}
	backend := c.localRoute(key, now)
	if backend == "" && c.shared != nil {
		// Made through another replica, perhaps.
		shared, left, err := c.shared.Routed(ctx, key.principal, id)
		if err != nil {
			c.sharedLog.Warn("redis: task routes unreachable; a task made through another replica is unknown here", "err", err)
		}
		if shared == "" || left <= 0 {
			return "", nil, ""
		}
		backend = shared
		c.mu.Lock()
		c.tasks.Put(key, taskRoute{backend: backend, expires: now.Add(left)})
		c.mu.Unlock()
	}
	if backend == "" {
		return "", nil, ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return backend, c.live[backend], id
}

// taskParams are the params relayed for r, a request of the task id:
// the id routed on, the method's own fields (taskFields) and _meta, each
// as the caller sent it.
func taskParams(r *mcp.Request, id string) json.RawMessage {
	out := make([]byte, 0, len(r.Params)+16)
	out = append(out, `{"taskId":`...)
	out = jsonrpc.AppendString(out, id)
	keep := func(f string) {
		if v, _ := jsonrpc.Lookup(r.Params, f); len(v) > 0 {
			out = append(out, `,"`+f+`":`...)
			out = append(out, v...)
		}
	}
	for _, f := range taskFields[r.Method] {
		keep(f)
	}
	keep("_meta")
	return append(out, '}')
}

// RelayTasks is middleware that sends a caller's tasks/* requests for a
// task a backend made to that backend; every other request, and a task
// the gateway does not route, goes on to next. A task of a backend that
// is down here is Unavailable, not unknown: it may be back.
func (c *Claims) RelayTasks(next mcp.Handler) mcp.Handler {
	return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
		if _, ok := taskFields[r.Method]; !ok {
			return next.ServeMCP(ctx, r)
		}
		name, b, id := c.taskBackend(ctx, r)
		if name == "" {
			return next.ServeMCP(ctx, r)
		}
		if b == nil {
			return nil, Unavailable(name)
		}
		client, inflight, release, err := b.upstream(ctx, r)
		if err != nil {
			return nil, err
		}
		defer release()
		return b.callSessionless(ctx, r, client, inflight, &mcp.Outbound{Method: r.Method, Params: b.sessionlessParams(client, r, taskParams(r, id))})
	})
}
