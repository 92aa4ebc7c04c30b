// authcode_register.go is the gateway's client at a backend's
// authorization server: pre-registered, a Client ID Metadata Document, or
// Dynamic Client Registration (RFC 7591), never one of another server.

package oauthclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/loopback"
)

// registration is the gateway's client at issuer: the one it has, the
// configured one, a metadata document, or a dynamic registration — never
// one made at another authorization server (SEP-2352).
func (a *Authorization) registration(ctx context.Context, issuer string, as oauthmeta.ServerMetadata, redirect string) (Registration, error) {
	if reg, ok := a.rec.Clients[issuer]; ok {
		return reg, nil
	}
	if reg, ok := a.people.client(ctx, issuer); ok {
		if a.rec.Clients == nil {
			a.rec.Clients = map[string]Registration{}
		}
		a.rec.Clients[issuer] = reg // the one the backend's people share
		return reg, nil
	}
	var reg Registration
	switch {
	case a.Pre != nil:
		reg = *a.Pre
		if reg.AuthMethod == "" {
			reg.AuthMethod = "none"
			if reg.ClientSecret != "" {
				reg.AuthMethod = pickAuthMethod(as.TokenEndpointAuthMethodsSupported, true)
			}
		}
		reg.How = "pre-registered"
	case as.ClientIDMetadataDocumentSupported && a.Env.ClientMetadataURL != "":
		reg = Registration{ClientID: a.Env.ClientMetadataURL, AuthMethod: "none", How: "metadata document"}
	case as.RegistrationEndpoint != "":
		var err error
		if reg, err = a.register(ctx, as, redirect); err != nil {
			return reg, err
		}
		a.people.keepClient(ctx, issuer, reg)
	default:
		return reg, fmt.Errorf("the authorization server %s offers neither Client ID Metadata Documents (or none is configured: oauth_client.client_metadata_url) nor dynamic registration; register a client there and name it in the backend's oauth.client_id", egress.Summary(issuer))
	}
	if a.rec.Clients == nil {
		a.rec.Clients = map[string]Registration{}
	}
	a.rec.Clients[issuer] = reg
	a.log().Info("backend client registered", "issuer", egress.Summary(issuer), "how", reg.How, "client_id", egress.Summary(reg.ClientID))
	return reg, nil
}

// pickAuthMethod is the token endpoint authentication to use among the
// server's (RFC 8414's default: client_secret_basic).
func pickAuthMethod(supported []string, secret bool) string {
	if len(supported) == 0 {
		supported = []string{"client_secret_basic"}
	}
	for _, m := range []string{"client_secret_basic", "client_secret_post"} {
		if secret && slices.Contains(supported, m) {
			return m
		}
	}
	if slices.Contains(supported, "none") {
		return "none"
	}
	return supported[0]
}

// ClientMetadata is the gateway's client metadata: what it registers
// dynamically, and its Client ID Metadata Document.
func (e *ClientEnv) ClientMetadata(clientID, method string) map[string]any {
	redirect := e.RedirectURL()
	m := map[string]any{
		"client_name":                e.name(),
		"redirect_uris":              []string{redirect},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		// SEP-837: a loopback redirect is a native client's, else web.
		"application_type": "web",
	}
	if u, err := url.Parse(redirect); err == nil && u.Scheme == "http" {
		if loopback.Host(u.Hostname()) {
			m["application_type"] = "native"
		}
	}
	if clientID != "" {
		m["client_id"] = clientID
	}
	return m
}

func (e *ClientEnv) name() string {
	if e.ClientName != "" {
		return e.ClientName
	}
	return "mcpgate"
}

// register is RFC 7591 Dynamic Client Registration.
func (a *Authorization) register(ctx context.Context, as oauthmeta.ServerMetadata, redirect string) (Registration, error) {
	if err := oauthmeta.CheckFetchURL(as.RegistrationEndpoint); err != nil {
		return Registration{}, fmt.Errorf("registration endpoint: %w", err)
	}
	method := pickAuthMethod(as.TokenEndpointAuthMethodsSupported, true)
	body, _ := json.Marshal(a.Env.ClientMetadata("", method))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return Registration{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.http().Do(req)
	err = egress.Err(err)
	if err != nil {
		return Registration{}, fmt.Errorf("registration at %s: %w", egress.Summary(as.Issuer), err)
	}
	defer resp.Body.Close()
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	switch {
	case resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK:
		return Registration{}, fmt.Errorf("registration at %s answered %d %s %s", egress.Summary(as.Issuer), resp.StatusCode, egress.Summary(out.Error), egress.Summary(out.Description))
	case err != nil || out.ClientID == "":
		return Registration{}, fmt.Errorf("registration at %s answered no client_id", egress.Summary(as.Issuer))
	}
	reg := Registration{ClientID: out.ClientID, ClientSecret: out.ClientSecret, AuthMethod: cmp.Or(out.AuthMethod, method), How: "dynamic"}
	if reg.ClientSecret == "" {
		reg.AuthMethod = "none"
	}
	return reg, nil
}
