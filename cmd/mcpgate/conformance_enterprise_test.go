// conformance_enterprise_test.go is the driver's part for the suite's
// auth/enterprise-managed-authorization scenario: the suite plays a
// person's identity provider, the MCP server and its authorization
// server, and gives the person's ID token. `mcpgate serve` relays the
// server as a per_user backend whose credential is exchanged: the
// person's ID token for an ID-JAG at their identity provider, the ID-JAG
// for an access token at the server's authorization server. The driver
// plays the person: it calls the gateway with their ID token (the
// gateway, authentication off on loopback, keeps it as presented, and
// the identity provider checks it). What the suite grades is what the
// gateway sent to both.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// ccEnterpriseScenario is the scenario's name.
const ccEnterpriseScenario = "auth/enterprise-managed-authorization"

// ccDriveEnterprise drives the scenario against the mock at mockURL.
func ccDriveEnterprise(ctx context.Context, bin, mockURL, tmp string) error {
	var c struct {
		ClientID      string `json:"client_id"`
		ClientSecret  string `json:"client_secret"`
		IdPClientID   string `json:"idp_client_id"`
		IDToken       string `json:"idp_id_token"`
		TokenEndpoint string `json:"idp_token_endpoint"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &c); err != nil || c.IDToken == "" {
		return fmt.Errorf("the scenario's context names no ID token (%v)", err)
	}
	cfg := filepath.Join(tmp, "mcpgate.yaml")
	// The identity provider asks the gateway for no secret: one is named
	// because the configuration asks for a client's, and it is sent.
	yaml := "auth: {disabled: true}\nbackends:\n  - name: x\n    kind: http\n    url: " + mockURL + "\n    identity: per_user\n" +
		"    credential:\n      exchange:\n        token_url: " + c.TokenEndpoint + "\n        client_id: \"" + c.IdPClientID + "\"\n" +
		"        client_secret_from: CC_IDP_SECRET\n        subject_token_type: id_token\n        requested_token_type: id-jag\n" +
		"        authorization: {client_id: \"" + c.ClientID + "\", client_secret_from: CC_SECRET}\n" + ccLoopbackIdP
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return err
	}
	env := []string{"XDG_DATA_HOME=" + tmp, "CC_SECRET=" + c.ClientSecret, "CC_IDP_SECRET=unused-by-the-identity-provider"}
	serve, err := ccStart(ctx, bin, env, "serve", "--config", cfg, "--listen", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer serve.stop()
	at, err := serve.await(regexp.MustCompile(`serving MCP at (http://\S+/mcp)`), serve.stdout)
	if err != nil {
		return err
	}
	conn, err := mcphttp.DialStreamable(ctx, at[1], mcphttp.ClientOptions{Header: http.Header{"Authorization": {"Bearer " + c.IDToken}}})
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "mcpgate-conformance-driver", Version: "1"},
		OnNotification: func(m *jsonrpc.Message) {
			if m.Method == mcp.ToolsListChanged {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}})
	defer client.Close()
	if _, err := client.Initialize(ctx); err != nil {
		return fmt.Errorf("initialize through the gateway: %w", err)
	}
	// The person's listing opens the backend with their token; its tools
	// appear once it is up, and the gateway says the list changed. A
	// notice sent before the session's stream opened is missed, so the
	// list is asked again each second too, as a client would.
	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	again := time.NewTicker(time.Second)
	defer again.Stop()
	for {
		res, err := client.Call(ctx, "tools/list", nil)
		if err == nil && strings.Contains(string(res), `"x__test-tool"`) {
			break
		}
		select {
		case <-changed:
		case <-again.C:
		case <-wait.C:
			return fmt.Errorf("the backend's tools never listed: %s %v", res, err)
		}
	}
	_, err = client.Call(ctx, "tools/call", json.RawMessage(`{"name":"x__test-tool","arguments":{}}`))
	return err
}
