// client.go is the gateway as an OAuth client of a backend that demands
// access tokens, by the client credentials grant (OAuth 2.1 §4.2; MCP's
// io.modelcontextprotocol/oauth-client-credentials extension): the
// backend's Protected Resource Metadata (RFC 9728) names its
// authorization server, whose metadata names the token endpoint; the
// token is asked for the backend's resource (RFC 8707) and renewed by
// golang.org/x/oauth2 before it expires. The caller's own credential is
// never what a backend sees: every request carries this token only.

package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ClientCredentials is one backend's client of the client credentials
// grant.
type ClientCredentials struct {
	ClientID     string
	ClientSecret string
	Scopes       []string
	// TokenURL is the token endpoint; "": discovered from the resource's
	// metadata and its authorization server's.
	TokenURL string
	// AuthMethod is how the client authenticates at the token endpoint:
	// client_secret_basic (default) or client_secret_post.
	AuthMethod string
}

// Client is an HTTP client that sends base's requests with an access
// token for resource (base nil: http.DefaultClient). A failure to get a
// token fails the request, naming the step, never the secret.
func (c ClientCredentials) Client(base *http.Client, resource string) *http.Client {
	if base == nil {
		base = http.DefaultClient
	}
	src := &lazySource{cfg: c, resource: resource, http: base}
	out := *base
	out.Transport = &oauth2.Transport{Source: src, Base: base.Transport}
	return &out
}

// lazySource discovers the token endpoint at the first request, then
// hands tokens out of a ReuseTokenSource.
type lazySource struct {
	cfg      ClientCredentials
	resource string
	http     *http.Client

	mu  sync.Mutex
	src oauth2.TokenSource
}

func (l *lazySource) Token() (*oauth2.Token, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.src == nil {
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, l.http)
		tokenURL := l.cfg.TokenURL
		if tokenURL == "" {
			var err error
			if tokenURL, err = DiscoverTokenEndpoint(ctx, l.http, l.resource); err != nil {
				return nil, err
			}
		}
		style := oauth2.AuthStyleInHeader
		if l.cfg.AuthMethod == "client_secret_post" {
			style = oauth2.AuthStyleInParams
		}
		cc := clientcredentials.Config{ClientID: l.cfg.ClientID, ClientSecret: l.cfg.ClientSecret, TokenURL: tokenURL,
			Scopes: l.cfg.Scopes, AuthStyle: style, EndpointParams: url.Values{"resource": {l.resource}}}
		l.src = cc.TokenSource(ctx)
	}
	t, err := l.src.Token()
	if err != nil {
		l.src = nil // discover again next time: the server may have moved
		return nil, fmt.Errorf("oauth: client credentials token for %s: %w", l.resource, redactRetrieve(err))
	}
	return t, nil
}

// redactRetrieve keeps a token endpoint's refusal to its error code and
// description (its body may echo what was sent).
func redactRetrieve(err error) error {
	if re, ok := err.(*oauth2.RetrieveError); ok {
		if re.ErrorCode != "" {
			return fmt.Errorf("the token endpoint answered %d %s %s", re.Response.StatusCode, re.ErrorCode, re.ErrorDescription)
		}
		return fmt.Errorf("the token endpoint answered %d", re.Response.StatusCode)
	}
	return err
}

// ResourceMetadata is the part of RFC 9728's document a client reads.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// DiscoverTokenEndpoint finds resource's token endpoint: its resource
// metadata (DiscoverResource) names its authorization server, whose
// metadata names the endpoint.
func DiscoverTokenEndpoint(ctx context.Context, client *http.Client, resource string) (string, error) {
	md, err := DiscoverResource(ctx, client, resource, "")
	if err != nil {
		return "", err
	}
	if len(md.AuthorizationServers) == 0 {
		return "", fmt.Errorf("oauth: the resource metadata of %s names no authorization server", resource)
	}
	as, err := DiscoverAuthorizationServer(ctx, client, md.AuthorizationServers[0])
	if err != nil {
		return "", err
	}
	if err := CheckFetchURL(as.TokenEndpoint); err != nil {
		return "", fmt.Errorf("oauth: token endpoint of %s: %w", md.AuthorizationServers[0], err)
	}
	return as.TokenEndpoint, nil
}

// DiscoverResource fetches the Protected Resource Metadata of the server
// at serverURL: at metadataURL when a challenge named it, else at the
// path-suffixed well-known URL, then the root one (RFC 9728 §3.1). The
// resource it names must be serverURL or a path prefix of it on the same
// origin (RFC 9728 §3.3); a document naming another is refused, since a
// token asked for it would be meant for someone else.
func DiscoverResource(ctx context.Context, client *http.Client, serverURL, metadataURL string) (ResourceMetadata, error) {
	var md ResourceMetadata
	if err := CheckFetchURL(serverURL); err != nil {
		return md, fmt.Errorf("oauth: resource: %w", err)
	}
	u, _ := url.Parse(serverURL)
	origin := u.Scheme + "://" + u.Host
	urls := []string{origin + "/.well-known/oauth-protected-resource"}
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		urls = append([]string{urls[0] + p}, urls...)
	}
	if metadataURL != "" {
		if err := CheckFetchURL(metadataURL); err != nil {
			return md, fmt.Errorf("oauth: resource_metadata: %w", err)
		}
		urls = []string{metadataURL}
	}
	found := false
	for _, mu := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, mu, nil)
		if err != nil {
			return md, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return md, fmt.Errorf("oauth: resource metadata of %s: %w", serverURL, err)
		}
		if resp.StatusCode == http.StatusOK {
			err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&md)
			resp.Body.Close()
			if err != nil {
				return md, fmt.Errorf("oauth: resource metadata at %s is not JSON: %w", mu, err)
			}
			found = true
			break
		}
		resp.Body.Close()
	}
	switch {
	case !found:
		return md, fmt.Errorf("oauth: no resource metadata for %s at %s", serverURL, strings.Join(urls, " or "))
	case !ResourceCovers(md.Resource, serverURL):
		return md, fmt.Errorf("oauth: the resource metadata of %s names the resource %q, which is not it (RFC 9728 §3.3)", serverURL, md.Resource)
	}
	return md, nil
}

// ResourceCovers reports whether a token for resource may be sent to
// serverURL: the same scheme and host, and resource's path equal to
// serverURL's or a prefix of it ending at a "/".
func ResourceCovers(resource, serverURL string) bool {
	r, err1 := url.Parse(resource)
	s, err2 := url.Parse(serverURL)
	if err1 != nil || err2 != nil || r.Host == "" || r.Fragment != "" || r.RawQuery != "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, s.Scheme) || !strings.EqualFold(r.Host, s.Host) {
		return false
	}
	rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(s.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}
