// conformance_auth_test.go is the driver's part for the suite's client
// auth scenarios (the authorization code flow): the suite plays the
// backend's resource and authorization servers, `mcpgate serve` relays
// the mock as an http backend it must sign in to, and the driver plays
// the admin — it reads the link the gateway logs, opens it (the mock's
// authorization endpoint answers at once with a redirect to the
// gateway's callback), and then calls the backend's tool through the
// gateway as a client. When a call is refused for want of a scope the
// gateway logs a new link, which the admin opens again.
//
// What the suite grades is what the gateway sent: the discovery
// requests, the registration, the authorization request (PKCE, scope,
// resource), the token request (client authentication, verifier,
// resource), and, for the scenarios built to be refused (a resource or
// an issuer that is not the one asked, an iss missing or different),
// that the code never reached the token endpoint.

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// ccAuthScenarios are the client auth scenarios of the authorization
// code flow: the 2025-11-25 ones at both revisions, the 2026-07-28 ones
// at that one, the extensions' (off the revisions' timeline) at
// 2025-11-25 only, and 2025-03-26's (servers without resource metadata)
// at theirs. refused: the gateway must not get a token.
var ccAuthScenarios = []ccAuthScenario{
	{name: "auth/metadata-default", person: true, both: true, checks: []string{"prm-pathbased-requested", "authorization-server-metadata", "client-registration", "authorization-request", "token-request"}},
	{name: "auth/metadata-var1", both: true, checks: []string{"authorization-server-metadata", "client-registration", "authorization-request", "token-request"}},
	{name: "auth/metadata-var2", both: true, checks: []string{"authorization-server-metadata", "client-registration", "authorization-request", "token-request"}},
	{name: "auth/metadata-var3", both: true, checks: []string{"authorization-server-metadata", "client-registration", "authorization-request", "token-request"}},
	{name: "auth/basic-cimd", person: true, both: true, checks: []string{"cimd-client-id-used", "token-request"}},
	{name: "auth/scope-from-www-authenticate", person: true, both: true, checks: []string{"scope-from-www-authenticate"}},
	{name: "auth/scope-from-scopes-supported", person: true, both: true, checks: []string{"scope-from-scopes-supported"}},
	{name: "auth/scope-omitted-when-undefined", both: true, checks: []string{"scope-omitted-when-undefined"}},
	{name: "auth/scope-step-up", person: true, both: true, checks: []string{"scope-step-up-initial", "scope-step-up-escalation"}},
	{name: "auth/scope-retry-limit", both: true, checks: []string{"scope-retry-limit"}},
	{name: "auth/token-endpoint-auth-basic", person: true, both: true, checks: []string{"token-endpoint-auth-method", "resource-parameter-in-authorization", "resource-parameter-in-token"}},
	{name: "auth/token-endpoint-auth-post", both: true, checks: []string{"token-endpoint-auth-method", "resource-parameter-in-token"}},
	{name: "auth/token-endpoint-auth-none", both: true, checks: []string{"token-endpoint-auth-method", "resource-parameter-in-token"}},
	{name: "auth/pre-registration", person: true, both: true, checks: []string{"pre-registration-auth"}},
	// DPoP (SEP-1932, an extension): tokens bound to the gateway's key,
	// a fresh proof on each request; with and without nonces.
	{name: "auth/dpop", person: true, extension: true, checks: []string{"sep-1932-client-token-request-proof", "sep-1932-client-dpop-auth-scheme", "sep-1932-client-fresh-proof"}},
	{name: "auth/dpop-nonce", extension: true, checks: []string{"sep-1932-client-token-request-proof", "sep-1932-client-dpop-auth-scheme",
		"sep-1932-client-fresh-proof", "sep-1932-client-as-nonce", "sep-1932-client-rs-nonce"}},
	// A server of 2025-03-26: no resource metadata; the authorization
	// server's metadata at its origin, or not even that (the default
	// endpoints there).
	{name: "auth/2025-03-26-oauth-metadata-backcompat", person: true, era: "2025-03-26", checks: []string{"authorization-server-metadata",
		"client-registration", "authorization-request", "token-request"}},
	{name: "auth/2025-03-26-oauth-endpoint-fallback", era: "2025-03-26", checks: []string{"client-registration", "authorization-request", "token-request"}},
	{name: "auth/resource-mismatch", person: true, refused: true, checks: []string{"resource-mismatch-rejected"}},
	{name: "auth/offline-access-scope", person: true, checks: []string{"sep-2207-offline-access-requested"}},
	{name: "auth/offline-access-not-supported", checks: []string{"sep-2207-offline-access-not-requested"}},
	{name: "auth/authorization-server-migration", checks: []string{"sep-2352-reregister-on-as-change", "sep-2352-no-reuse-on-as-change"}},
	{name: "auth/iss-supported", person: true, checks: []string{"sep-2468-client-compare-iss-supported"}},
	{name: "auth/iss-not-advertised", checks: []string{"sep-2468-client-proceed-no-iss"}},
	{name: "auth/iss-supported-missing", person: true, refused: true, checks: []string{"sep-2468-client-reject-missing-iss"}},
	{name: "auth/iss-wrong-issuer", person: true, refused: true, checks: []string{"sep-2468-client-compare-iss-supported"}},
	{name: "auth/iss-unexpected", refused: true, checks: []string{"sep-2468-client-compare-iss-unadvertised"}},
	{name: "auth/iss-normalized", refused: true, checks: []string{"sep-2468-client-no-normalization"}},
	{name: "auth/metadata-issuer-mismatch", person: true, refused: true, checks: []string{"sep-2468-client-validate-metadata-issuer"}},
}

type ccAuthScenario struct {
	name                     string
	both, refused, extension bool
	// person: it runs again with the backend per_user, each person
	// authorizing it themselves (ccDrivePerson).
	person bool
	era    string // a revision of its own ("": see eras)
	checks []string
}

// eras are the revisions the scenario runs at.
func (s ccAuthScenario) eras() []string {
	switch {
	case s.era != "":
		return []string{s.era}
	case s.extension:
		return []string{"2025-11-25"}
	case s.both:
		return []string{"2025-11-25", "2026-07-28"}
	}
	return []string{"2026-07-28"}
}

// ccCIMD is the Client ID Metadata Document URL auth/basic-cimd expects.
const ccCIMD = "https://conformance-test.local/client-metadata.json"

func ccAuthRefused(scenario string) bool {
	for _, s := range ccAuthScenarios {
		if s.name == scenario {
			return s.refused
		}
	}
	return false
}

// ccAuthConfig writes the gateway's configuration for an auth scenario:
// the mock as an http backend, the tokens sealed under a fresh key, the
// metadata document URL the suite expects, and, for pre-registration,
// the client from the scenario's context.
func ccAuthConfig(tmp, mockURL, scenario string, person bool) (env []string, cfg string, err error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keyFile := filepath.Join(tmp, "backend-tokens.key")
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, "", err
	}
	yaml := "backends:\n  - name: x\n    kind: http\n    url: " + mockURL + "\n"
	client := "    oauth: {grant: authorization_code, "
	if person {
		// Each person's own tokens, sealed under the vault key.
		yaml += "    identity: per_user\n"
		client = "    credential: {oauth: {"
	}
	if scenario == "auth/pre-registration" {
		var c struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &c); err != nil || c.ClientID == "" {
			return nil, "", fmt.Errorf("the scenario's context names no client (%v)", err)
		}
		issuer, err := ccIssuer(mockURL)
		if err != nil {
			return nil, "", err
		}
		yaml += client + "client_id: \"" + c.ClientID + "\", client_secret_from: CC_SECRET, issuer: \"" + issuer + "\"}" + strings.Repeat("}", strings.Count(client, "{")-1) + "\n"
		env = append(env, "CC_SECRET="+c.ClientSecret)
	} else if person {
		yaml += client + "}}\n"
	}
	yaml += "oauth_client:\n  client_metadata_url: " + ccCIMD + "\n  key_file: " + keyFile + "\n" + ccLoopbackIdP
	if person {
		yaml += "vault: {key_file: " + keyFile + "}\n" // each person's own tokens, sealed
	}
	cfg = filepath.Join(tmp, "mcpgate.yaml")
	return env, cfg, os.WriteFile(cfg, []byte(yaml), 0o600)
}

// ccAdmin watches the gateway's log for the links and refusals of its
// backend authorization.
type ccAdmin struct {
	links, failures chan string
	http            *http.Client
}

func ccWatchLog(lines chan string) *ccAdmin {
	a := &ccAdmin{links: make(chan string, 16), failures: make(chan string, 16), http: &http.Client{Timeout: 20 * time.Second}}
	go func() {
		for l := range lines {
			var rec struct {
				Msg  string `json:"msg"`
				Open string `json:"open"`
				Err  string `json:"err"`
			}
			if json.Unmarshal([]byte(l), &rec) != nil {
				continue
			}
			switch {
			case rec.Open != "":
				a.links <- rec.Open
			case strings.HasPrefix(rec.Msg, "backend authorization"):
				a.failures <- rec.Err
			}
		}
	}()
	return a
}

// next waits for the gateway's next link ("" with the refusal when it
// logs one instead, or nothing comes within wait).
func (a *ccAdmin) next(wait time.Duration) (link, refusal string) {
	select {
	case l := <-a.links:
		return l, ""
	case f := <-a.failures:
		return "", f
	case <-time.After(wait):
		return "", "no link and no refusal logged in " + wait.String()
	}
}

// authorize opens the link the gateway logged, the console's, as the
// admin's browser would: the console (the admin's token) binds the
// authorization to this browser (a cookie) and sends it to the mock
// authorization server, which redirects to the gateway's callback at
// once. ok reports the callback's answer.
func (a *ccAdmin) authorize(link, token string) (ok bool, page string, err error) {
	req, err := http.NewRequest(http.MethodGet, link, nil)
	if err != nil {
		return false, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	noFollow := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		return false, "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return false, "", fmt.Errorf("the console's authorization route answered %d", resp.StatusCode)
	}
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(req.URL, resp.Cookies())
	browser := &http.Client{Timeout: 20 * time.Second, Jar: jar}
	resp, err = browser.Get(resp.Header.Get("Location"))
	if err != nil {
		return false, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode == http.StatusOK, string(b), nil
}

// forget is the admin's Forget authorization of a backend, on the console
// (as an API caller, with the admin's token).
func (a *ccAdmin) forget(ctx context.Context, base, token, backend string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/admin/backends/forget-oauth", strings.NewReader("name="+backend))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	c := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<12))
		return fmt.Errorf("forget the authorization: %d %s", resp.StatusCode, b)
	}
	return nil
}

// ccIssuer is the authorization server the mock's resource metadata
// names: what an operator reads in their provider's documentation and
// writes in oauth.issuer.
func ccIssuer(mockURL string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := oauthclient.DiscoverResource(ctx, http.DefaultClient, mockURL, "")
	if err != nil {
		return "", err
	}
	if len(md.AuthorizationServers) == 0 {
		return "", errors.New("the mock's resource metadata names no authorization server")
	}
	return md.AuthorizationServers[0], nil
}

// ccDriveAuth is the admin and the client of an auth scenario.
func ccDriveAuth(ctx context.Context, serve *ccProc, admin *ccAdmin, scenario string) error {
	gwURL, token, err := ccServing(serve)
	if err != nil {
		return err
	}
	refused := ccAuthRefused(scenario)

	link, refusal := admin.next(20 * time.Second)
	if link == "" {
		if refused {
			fmt.Fprintln(os.Stderr, "driver: the gateway refused, as it should:", refusal)
			return nil
		}
		return fmt.Errorf("the gateway asked for no authorization: %s", refusal)
	}
	ok, page, err := admin.authorize(link, token)
	switch {
	case err != nil:
		return fmt.Errorf("opening the authorization link: %w", err)
	case refused && ok:
		return fmt.Errorf("the gateway took an authorization it should have refused: %s", page)
	case refused:
		fmt.Fprintln(os.Stderr, "driver: the callback refused, as it should:", page)
		return nil
	case !ok:
		return fmt.Errorf("the callback refused the authorization: %s", page)
	}
	// The backend comes up, or refuses the token while it syncs (a new
	// authorization server, say) and the gateway logs a new link.
	for ready := false; !ready; {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ready = ccAwaitReady(rctx, strings.TrimSuffix(gwURL, "/mcp")+"/readyz") == nil
		cancel()
		if ready {
			break
		}
		select {
		case link := <-admin.links:
			if ok, page, err := admin.authorize(link, token); err != nil || !ok {
				return fmt.Errorf("the authorization the backend's sync asked for: %v %s", err, page)
			}
		case f := <-admin.failures:
			if strings.Contains(f, "forget the authorization") {
				fmt.Fprintln(os.Stderr, "driver: the gateway refused the new authorization server until an admin forgets the old one:", f)
				if err := admin.forget(ctx, strings.TrimSuffix(gwURL, "/mcp"), token, "x"); err != nil {
					return err
				}
			}
		default:
			if ctx.Err() != nil {
				return errors.New("the gateway's backend never came up (/readyz)")
			}
		}
	}

	// The backend's tool, called until it answers: each refusal for want
	// of a scope or of a token from a new server makes the gateway log a
	// new link, which the admin opens.
	return ccUntilAnswered(ctx, gwURL, token, func(round int, res json.RawMessage, err error) (bool, error) {
		link, refusal := admin.next(10 * time.Second)
		if link == "" && strings.Contains(refusal, "forget the authorization") {
			// The backend names another authorization server than the
			// one the gateway signed in at (auth/authorization-server-
			// migration): the admin forgets the old authorization, and
			// the gateway asks for one at the new server.
			fmt.Fprintln(os.Stderr, "driver: the gateway refused the new authorization server until an admin forgets the old one:", refusal)
			if err := admin.forget(ctx, strings.TrimSuffix(gwURL, "/mcp"), token, "x"); err != nil {
				return false, err
			}
			link, refusal = admin.next(10 * time.Second)
		}
		switch {
		case link == "" && scenario == "auth/scope-retry-limit":
			fmt.Fprintln(os.Stderr, "driver: the gateway stopped asking, as it should:", refusal)
			return false, nil
		case link == "":
			return false, fmt.Errorf("tools/call: %v %s; and then %s", err, res, refusal)
		case round == 3:
			return false, fmt.Errorf("tools/call: still refused after %d authorizations", round)
		}
		if ok, page, err := admin.authorize(link, token); err != nil || !ok {
			return false, fmt.Errorf("the authorization after a refused call: %v %s", err, page)
		}
		return true, nil
	})
}

// ccUntilAnswered calls the mock's tool through the gateway at gwURL
// until it answers, and not with an error. After each refusal, again
// says whether to call once more (false and no error: done as it
// should be).
func ccUntilAnswered(ctx context.Context, gwURL, token string, again func(round int, res json.RawMessage, err error) (bool, error)) error {
	client, err := ccConnect(ctx, gwURL, token)
	if err != nil {
		return err
	}
	defer client.Close()
	for round := 0; ; round++ {
		res, err := client.Call(ctx, "tools/call", json.RawMessage(`{"name":"x__test-tool","arguments":{}}`))
		if err == nil && !strings.Contains(string(res), `"isError":true`) {
			return nil
		}
		if more, err := again(round, res, err); !more || err != nil {
			return err
		}
	}
}

// ccConnect is the driver's client of the gateway at gwURL, of the
// revision the scenario runs at.
func ccConnect(ctx context.Context, gwURL, token string) (*mcp.Client, error) {
	conn, err := mcphttp.DialStreamable(ctx, gwURL, mcphttp.ClientOptions{Header: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "mcpgate-conformance-driver", Version: "1"}})
	if os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION") == mcp.Version20260728 {
		_, err = client.Connect(ctx, mcp.EraSessionless)
	} else {
		_, err = client.Initialize(ctx)
	}
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("connecting to the gateway: %w", err)
	}
	return client, nil
}

// ccDrivePerson is the person and the client of an auth scenario run with
// the backend per_user, of oauth: the person (the first run's token)
// begins their own authorization from My credentials, the mock's
// authorization server sends them back to the callback, and their calls
// then carry their token. A call refused for want of a scope is followed
// by their authorization again, for what the backend asked.
func ccDrivePerson(ctx context.Context, serve *ccProc, scenario string) error {
	gwURL, token, err := ccServing(serve)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(gwURL, "/mcp")
	person := &ccAdmin{http: &http.Client{Timeout: 20 * time.Second}}
	authorize := func() (bool, string, error) {
		return person.authorize(base+"/admin/credentials/authorize?backend=x", token)
	}
	ok, page, err := authorize()
	switch refused := ccAuthRefused(scenario); {
	case refused && (err != nil || !ok):
		fmt.Fprintln(os.Stderr, "driver: the gateway refused, as it should:", err, page)
		return nil
	case err != nil:
		return fmt.Errorf("the person's authorization: %w", err)
	case refused:
		return fmt.Errorf("the gateway took an authorization it should have refused: %s", page)
	case !ok:
		return fmt.Errorf("the callback refused the person's authorization: %s", page)
	}
	// The backend comes up with the person's token, or its sync asks for
	// more scope, which the person grants from the same page.
	for round := 0; ; round++ {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := ccAwaitReady(rctx, base+"/readyz")
		cancel()
		if err == nil {
			break
		} else if round == 3 {
			return fmt.Errorf("the gateway's backend never came up (/readyz): %w", err)
		}
		if ok, page, err := authorize(); err != nil || !ok {
			return fmt.Errorf("the authorization the backend's sync asked for: %v %s", err, page)
		}
	}
	return ccUntilAnswered(ctx, gwURL, token, func(round int, res json.RawMessage, err error) (bool, error) {
		if round == 3 {
			return false, fmt.Errorf("tools/call: still refused after %d authorizations: %v %s", round, err, res)
		}
		if ok, page, err := authorize(); err != nil || !ok {
			return false, fmt.Errorf("the person's authorization after a refused call: %v %s", err, page)
		}
		return true, nil
	})
}

// ccLoopbackIdP allows the suite's authorization servers, which it runs on
// this machine beside the backend (another origin), as an operator
// allows one inside their network; without it the outbound policy
// refuses them.
const ccLoopbackIdP = "outbound: {allow_hosts: [127.0.0.1, localhost]}\n"
