// Package oauthmeta is what mcpgate's three OAuth roles share. It holds the
// metadata of authorization servers (RFC 8414), where to find it and how to
// check it, and the challenges resource servers answer with. It says what a
// URL fetched on someone's word must be: https, or http on loopback. The
// resource server (package auth), the built-in authorization server
// (package authserver) and the client of backends (package oauthclient) all
// use it.
package oauthmeta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/loopback"
)

// CanonicalResource checks a resource URI as RFC 8707 and the MCP
// specification have it: absolute, https (http only on a loopback host),
// no fragment; and returns it parsed.
func CanonicalResource(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case s == "":
		return nil, errors.New("oauth: the resource (the gateway's canonical MCP URL) is required")
	case err != nil || u.Host == "" || !u.IsAbs():
		return nil, fmt.Errorf("oauth: resource %q is not an absolute URL", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, fmt.Errorf("oauth: resource %q must not have a fragment", s)
	}
	if err := CheckFetchURL(s); err != nil {
		return nil, fmt.Errorf("oauth: resource: %w", err)
	}
	return u, nil
}

// CheckFetchURL allows https anywhere and http on a loopback host only.
func CheckFetchURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s is not a URL", egress.Summary(s))
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if loopback.Host(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%s: https is required (http only on a loopback host)", egress.Summary(s))
}

// ServerMetadata is what the gateway reads of an authorization server's
// metadata (RFC 8414 §2).
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                     string   `json:"token_endpoint,omitempty"`
	JWKSURI                           string   `json:"jwks_uri,omitempty"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint                string   `json:"revocation_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported: the server puts iss in
	// its authorization responses (RFC 9207), so one without is refused.
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	// DPoPSigningAlgValuesSupported: the server binds tokens to proofs of
	// these algs (RFC 9449 §5.1).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// MetadataURLs are where an issuer's metadata may be, in the order the
// MCP specification has clients try them: RFC 8414's well-known path
// (inserted before the issuer's path), then OpenID Connect Discovery's
// (inserted, then appended).
func MetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("oauth: issuer %s is not a URL without query or fragment", egress.Summary(issuer))
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	origin := u.Scheme + "://" + u.Host
	if path == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}, nil
	}
	return []string{origin + "/.well-known/oauth-authorization-server" + path, origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration"}, nil
}

// DiscoverAuthorizationServer fetches issuer's metadata from the first of
// MetadataURLs that serves it, and checks that it names issuer exactly.
func DiscoverAuthorizationServer(ctx context.Context, client *http.Client, issuer string) (ServerMetadata, error) {
	if err := CheckFetchURL(issuer); err != nil {
		return ServerMetadata{}, fmt.Errorf("oauth: issuer: %w", err)
	}
	urls, err := MetadataURLs(issuer)
	if err != nil {
		return ServerMetadata{}, err
	}
	var tried []string
	for _, mu := range urls {
		md, status, err := fetchMetadata(ctx, client, mu)
		if err != nil {
			return ServerMetadata{}, fmt.Errorf("oauth: issuer %s: %s: %w", egress.Summary(issuer), egress.Summary(mu), err)
		}
		if status == http.StatusOK {
			if md.Issuer != issuer {
				return ServerMetadata{}, fmt.Errorf("oauth: issuer %s: its metadata at %s names the issuer %s (RFC 8414 §3.3: they must be equal)", egress.Summary(issuer), egress.Summary(mu), egress.Summary(md.Issuer))
			}
			return md, nil
		}
		// The well-known part of the URL tried, which is ours; the
		// issuer's part is said once, summarised.
		tried = append(tried, fmt.Sprintf("%s (%d)", egress.Summary(mu[strings.Index(mu, "/.well-known/"):]), status))
	}
	return ServerMetadata{}, fmt.Errorf("oauth: issuer %s: no metadata at %s", egress.Summary(issuer), strings.Join(tried, ", "))
}

func fetchMetadata(ctx context.Context, client *http.Client, u string) (ServerMetadata, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ServerMetadata{}, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	err = egress.Err(err)
	if err != nil {
		return ServerMetadata{}, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return ServerMetadata{}, resp.StatusCode, nil
	}
	var md ServerMetadata
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		return ServerMetadata{}, 0, fmt.Errorf("metadata is not JSON: %w", err)
	}
	return md, http.StatusOK, nil
}

// LegacyAuthorizationServer is the authorization server of a server of the
// 2025-03-26 revision, which serves no resource metadata. Its authorization
// base URL is the server URL without its path. Its RFC 8414 metadata,
// fetched with the MCP-Protocol-Version header that revision names, says
// where its endpoints are. Without metadata (404) they are the default
// /authorize, /token and /register there. issuer is that base URL. Such
// servers knew no resource indicators and no iss parameter; PKCE is
// required of them as of every revision.
func LegacyAuthorizationServer(ctx context.Context, client *http.Client, serverURL string) (issuer string, md ServerMetadata, _ error) {
	if err := CheckFetchURL(serverURL); err != nil {
		return "", md, fmt.Errorf("oauth: resource: %w", err)
	}
	u, _ := url.Parse(serverURL)
	base := u.Scheme + "://" + u.Host
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/.well-known/oauth-authorization-server", nil)
	if err != nil {
		return "", md, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-03-26")
	resp, err := client.Do(req)
	err = egress.Err(err)
	if err != nil {
		return "", md, fmt.Errorf("oauth: the authorization server metadata of %s: %w", base, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
			return "", md, fmt.Errorf("oauth: the authorization server metadata of %s is not JSON: %w", base, err)
		}
		if md.Issuer != base && md.Issuer != base+"/" {
			return "", md, fmt.Errorf("oauth: the authorization server metadata of %s names the issuer %s (RFC 8414 §3.3: they must be equal)", base, egress.Summary(md.Issuer))
		}
		return md.Issuer, md, nil
	case http.StatusNotFound:
		return base, ServerMetadata{Issuer: base, AuthorizationEndpoint: base + "/authorize", TokenEndpoint: base + "/token",
			RegistrationEndpoint: base + "/register", CodeChallengeMethodsSupported: []string{"S256"}}, nil
	}
	return "", md, fmt.Errorf("oauth: the authorization server metadata of %s answered %d", base, resp.StatusCode)
}
