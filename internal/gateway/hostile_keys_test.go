// hostile_keys_test.go pins the rule of mcp/paramkeys.go end to end: in
// front of a backend that decodes with encoding/json (encjson_child_test.go),
// over every front transport and every backend kind (stdio, Streamable
// HTTP, and a proxy over the wire), params that a case-insensitive decoder
// reads differently from the gate are refused with -32602 naming the key,
// never reach the backend, and the audit records the refusal under the
// name that was asked for.

package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// ejBackends returns, for each backend kind, the start of the YAML of one
// backend in front of an encoding/json server journalling to journal, and
// what stops the servers (run before the gateway's leak check; also at
// cleanup).
func ejBackends(t *testing.T, journal string) (map[string]string, func()) {
	t.Helper()
	srv := &ejServer{journal: journal}
	hs := httptest.NewServer(srv)
	up, err := proxy.NewUpstream(proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: hs.URL + "/mcp",
		ClientInfo: mcp.Implementation{Name: "proxy", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(proxy.NewServer(proxy.Options{Upstream: up, InfoPath: filepath.Join(t.TempDir(), "none")}))
	var once sync.Once
	stop := func() { once.Do(func() { px.CloseClientConnections(); px.Close(); _ = up.Close(); hs.Close() }) }
	t.Cleanup(stop)
	t.Setenv("EJ_ROLE", ejRoleStdio)
	return map[string]string{
		"stdio": fmt.Sprintf("{kind: stdio, command: [%q, %q], env_from: {%s: EJ_ROLE}", os.Args[0], journal, bkChildEnv),
		"http":  fmt.Sprintf("{kind: http, url: %q", hs.URL+"/mcp"),
		"proxy": fmt.Sprintf("{kind: proxy, url: %q", "ws"+strings.TrimPrefix(px.URL, "http")),
	}, stop
}

func TestKeysThatFoldTogetherNeverReachACaseInsensitiveBackend(t *testing.T) {
	for kind := range map[string]bool{"stdio": true, "http": true, "proxy": true} {
		t.Run(kind+" backend", func(t *testing.T) {
			journal := filepath.Join(t.TempDir(), "journal")
			specs, stopBackends := ejBackends(t, journal)
			spec := specs[kind]
			e := gwStart(t, "listen: 127.0.0.1:0\nauth: {identity: {subject: stdio-viewer, role: viewer}}\n"+
				"backends:\n  - "+spec+", name: ev, min_roles: [{kind: tool, name: secret, role: admin}]}\n")
			bkRun(t, e.gw)
			bkWaitReady(t, e.base, http.StatusOK)
			viewer, _ := e.token("v", "viewer")
			admin, _ := e.token("a", "admin")

			var clients []*mcp.Client
			dial := func(front, secret string) *mcp.Client {
				c := e.dial(front, gwBearer(secret))
				clients = append(clients, c)
				return c
			}
			// The backend works, and the role rule holds, when asked plainly.
			c := dial(gwStreamable, admin)
			if _, err := gwCall(testkit.Context(t), c, "resources/read", json.RawMessage(`{"uri":"file:///etc/hostname"}`)); err != nil {
				t.Fatalf("plain read: %v", err)
			}
			_, err := gwCall(testkit.Context(t), dial(gwStreamable, viewer), "tools/call", json.RawMessage(`{"name":"ev__secret","arguments":{}}`))
			gwWantRefusal(t, "a viewer calling the admin tool", err, jsonrpc.CodeForbidden, "forbidden")

			hostile := []struct {
				who, method, params, key string
				front                    string
			}{
				{"viewer", "tools/call", `{"name":"ev__public","NAME":"secret","arguments":{}}`, "NAME", gwStreamable},
				{"viewer", "tools/call", `{"name":"ev__public","NAME":"secret","arguments":{}}`, "NAME", gwSSE},
				{"viewer", "tools/call", `{"NAME":"secret","name":"ev__public","arguments":{}}`, "NAME", "stdio"},
				{"viewer", "tools/call", `{"name":"ev__public","name":"ev__secret","arguments":{}}`, "name", gwStreamable},
				{"admin", "resources/read", `{"uri":"file:///etc/hostname","URI":"file:///etc/shadow"}`, "URI", gwStreamable},
				{"admin", "resources/read", `{"uri":"file:///etc/hostname","URI":"file:///etc/shadow"}`, "URI", gwSSE},
				{"admin", "resources/subscribe", `{"uri":"file:///etc/hostname","URI":"file:///etc/shadow"}`, "URI", gwStreamable},
				{"viewer", "tasks/get", `{"taskId":"mine","TASKID":"alices"}`, "TASKID", gwStreamable},
				{"viewer", "tasks/cancel", `{"taskId":"mine","tas\u212aId":"alices"}`, "tas\u212aId", gwSSE},
				{"viewer", "tasks/update", `{"ta\u017fkId":"alices","taskId":"mine","inputResponses":{}}`, "ta\u017fkId", "stdio"},
			}
			for _, h := range hostile {
				secret := map[string]string{"viewer": viewer, "admin": admin}[h.who]
				var errObj *jsonrpc.Error
				if h.front == "stdio" {
					// In a subtest of its own, so that the stdio session
					// ends before the gateway does.
					t.Run("stdio front", func(t *testing.T) {
						f := fdStdioConnect(t, testkit.Context(t), e.gw.ServeStdio)
						_, raw := fdMember(t, f.exchange(t, 7, h.method, h.params))
						if err := json.Unmarshal([]byte(raw), &errObj); err != nil || raw == "" {
							t.Fatalf("stdio %s: answer %q", h.method, raw)
						}
					})
				} else {
					_, err := gwCall(testkit.Context(t), dial(h.front, secret), h.method, json.RawMessage(h.params))
					if errObj, _ = gwRPCError(err); errObj == nil {
						t.Fatalf("%s %s %s over %s: got %v, want a refusal", h.who, h.method, h.params, h.front, err)
					}
				}
				var data map[string]string
				_ = json.Unmarshal(errObj.Data, &data)
				if errObj.Code != jsonrpc.CodeInvalidParams || data["kind"] != "ambiguous_key" || data["key"] != h.key {
					t.Errorf("%s %s %s over %s: %d %s %s, want -32602 naming %q", h.who, h.method, h.params, h.front,
						errObj.Code, errObj.Message, errObj.Data, h.key)
				}
			}

			for _, c := range clients {
				_ = c.Close()
			}
			if err := e.closeGateway(testkit.Context(t)); err != nil {
				t.Fatal(err)
			}
			stopBackends()
			ran, _ := os.ReadFile(journal)
			if strings.Contains(string(ran), "secret") || strings.Contains(string(ran), "shadow") {
				t.Errorf("the backend ran what the gate never admitted:\n%s", ran)
			}
			var invalid []string
			for _, r := range gwTail(t, e.store) {
				if r.Outcome == string(mcp.OutcomeInvalid) {
					invalid = append(invalid, r.Subject+" "+r.Kind+" "+r.Name)
				}
				if r.Outcome == string(mcp.OutcomeOK) && (strings.Contains(r.Name, "secret") || strings.Contains(r.Name, "shadow")) {
					t.Errorf("audit records a call that never ran: %+v", r)
				}
			}
			// Each refusal of a gated call is recorded under the name the
			// gate read, the last of duplicates (subscribe is not an audited
			// call).
			want := map[string]int{"v tool ev__public": 2, "v tool ev__secret": 1, "stdio-viewer tool ev__public": 1, "a resource file:///etc/hostname": 2}
			got := map[string]int{}
			for _, s := range invalid {
				got[s]++
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("invalid audit records %v, want %v", got, want)
			}
		})
	}
}
