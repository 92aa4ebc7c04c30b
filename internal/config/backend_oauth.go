// backend_oauth.go is a backend's OAuth client configuration: the
// client credentials and JWT-bearer grants, or a client registered by hand
// for the authorization code grant, and where its credential may be sent.

package config

import "github.com/mcpgate/mcpgate/internal/upstream"

// BackendOAuth is a backend's OAuth client of the client credentials
// grant. The secret comes from the environment or a file, never the
// configuration.
type BackendOAuth struct {
	// Grant is client_credentials (the default: the gateway's own client,
	// no person involved), jwt_bearer (the gateway's workload identity token
	// as the grant, RFC 7523: assertion_file or assertion_from) or
	// authorization_code (an admin signs in once; see oauth_client). With
	// authorization_code, client_id names a client registered out of band;
	// without oauth at all, a backend that demands OAuth gets the
	// authorization code flow with a client registered by metadata document
	// or dynamically.
	Grant string `yaml:"grant"`
	// ClientID is the client's id at the backend's authorization server.
	ClientID string `yaml:"client_id"`
	// ClientSecretFrom names the gateway's environment variable holding
	// the client secret.
	ClientSecretFrom string `yaml:"client_secret_from"`
	// ClientSecretFile is a file holding it (a trailing newline cut).
	ClientSecretFile string `yaml:"client_secret_file"`
	// Scopes are asked for (none: the server's default).
	Scopes []string `yaml:"scopes"`
	// TokenURL is the token endpoint of client_credentials and
	// jwt_bearer.
	TokenURL string `yaml:"token_url"`
	// Issuer is the authorization server the backend's credential may be
	// sent to: its metadata names the token endpoint (and, for
	// authorization_code, every endpoint). A backend whose resource
	// metadata names another one is refused before anything is sent.
	// Required with a client secret, a private key or an assertion,
	// unless token_url is given: a backend that named itself its own
	// authorization server received them.
	Issuer string `yaml:"issuer"`
	// AuthMethod is client_secret_basic (default) or client_secret_post;
	// with client_credentials also private_key_jwt (a JWT the gateway signs
	// with private_key_*, no secret); with authorization_code also none (a
	// public client), and by default the best the server offers.
	AuthMethod string `yaml:"auth_method"`
	// PrivateKeyFrom names the gateway's environment variable holding the
	// PEM private key of private_key_jwt (PKCS #8, SEC 1 or PKCS #1).
	PrivateKeyFrom string `yaml:"private_key_from"`
	// PrivateKeyFile is a file holding it.
	PrivateKeyFile string `yaml:"private_key_file"`
	// SigningAlg is the alg of private_key_jwt's assertions (default: the
	// key's usual one: ES256 for P-256, RS256 for RSA, EdDSA for Ed25519).
	SigningAlg string `yaml:"signing_alg"`
	// AssertionFile is jwt_bearer's assertion: a file holding the workload's
	// JWT (a projected service account token, say), read again at each
	// token request, as its platform renews it.
	AssertionFile string `yaml:"assertion_file"`
	// AssertionFrom names an environment variable holding it instead.
	AssertionFrom string `yaml:"assertion_from"`
}

// The grants a backend's oauth may name.
const (
	GrantClientCredentials = "client_credentials"
	GrantAuthorizationCode = "authorization_code"
	GrantJWTBearer         = "jwt_bearer"
)

// validateAuthorizationCode checks a pre-registered client of the
// authorization code grant: a client_id, and a secret or none.
func validateAuthorizationCode(key string, b BackendConfig) error {
	return validateAuthorizationCodeClient(key, key+".oauth", b.OAuth, b)
}

// validateAuthorizationCodeClient checks o, at prefix in backend key: a
// client of the authorization code grant registered out of band (a
// backend's oauth, a credential's oauth).
func validateAuthorizationCodeClient(key, prefix string, o *BackendOAuth, b BackendConfig) error {
	switch {
	case o.ClientID == "":
		return bad(prefix+".client_id", "required: the client registered at the backend's authorization server (leave it out, and the rest, for a client registered by the gateway)")
	case o.ClientSecretFrom != "" && o.ClientSecretFile != "":
		return bad(prefix, "name the client secret in client_secret_from or client_secret_file, not both")
	case o.TokenURL != "":
		return bad(prefix+".token_url", "not used by the authorization code grant: the endpoints are discovered")
	case o.PrivateKeyFrom != "" || o.PrivateKeyFile != "" || o.SigningAlg != "":
		return bad(prefix, "private_key_jwt is served for the client credentials grant only")
	case o.AssertionFile != "" || o.AssertionFrom != "":
		return bad(prefix, "assertion_file and assertion_from go with grant: jwt_bearer")
	case o.AuthMethod != "" && o.AuthMethod != "client_secret_basic" && o.AuthMethod != "client_secret_post" && o.AuthMethod != "none":
		return bad(prefix+".auth_method", "%q is not client_secret_basic, client_secret_post or none", o.AuthMethod)
	case o.AuthMethod != "" && (o.AuthMethod == "none") != (o.ClientSecretFrom == "" && o.ClientSecretFile == ""):
		return bad(prefix+".auth_method", "%s with a client secret named: %v", o.AuthMethod, o.ClientSecretFrom != "" || o.ClientSecretFile != "")
	}
	if _, ok := b.HeadersFrom["Authorization"]; ok {
		return bad(key+".headers_from.Authorization", "the backend's tokens come from oauth: no Authorization header beside it")
	}
	if (o.ClientSecretFrom != "" || o.ClientSecretFile != "") && o.Issuer == "" {
		return bad(prefix+".issuer", "required with a client secret: the authorization server it may be sent to (a backend that names its own would receive it)")
	}
	if o.Issuer == "" {
		return nil
	}
	return fetchableURL(prefix+".issuer", o.Issuer)
}

func validateBackendOAuth(key string, b BackendConfig) error {
	o := b.OAuth
	switch {
	case o == nil:
		return nil
	case b.Kind != upstream.KindHTTP && b.Kind != upstream.KindSSE:
		return bad(key+".oauth", "not used by kind %s", b.Kind)
	case o.Grant != "" && o.Grant != GrantClientCredentials && o.Grant != GrantAuthorizationCode && o.Grant != GrantJWTBearer:
		return bad(key+".oauth.grant", "%q is not client_credentials, jwt_bearer or authorization_code", o.Grant)
	case o.Grant == GrantAuthorizationCode:
		return validateAuthorizationCode(key, b)
	}
	if err := validateOAuthClientAuth(key+".oauth", o); err != nil {
		return err
	}
	if _, ok := b.HeadersFrom["Authorization"]; ok {
		return bad(key+".headers_from.Authorization", "the backend's tokens come from oauth: no Authorization header beside it")
	}
	if o.TokenURL == "" && o.Issuer == "" {
		return bad(key+".oauth", "name where its credential may be sent: token_url, or issuer (the authorization server whose metadata names the token endpoint); a backend that names its own authorization server would receive it")
	}
	if o.TokenURL != "" {
		if err := fetchableURL(key+".oauth.token_url", o.TokenURL); err != nil {
			return err
		}
	}
	return validateIssuer(key, o)
}

// validateOAuthClientAuth checks how a client of a token endpoint (at
// prefix: a backend's oauth, a credential's exchange) authenticates: a
// workload's assertion (jwt_bearer), a secret, or a private key.
func validateOAuthClientAuth(prefix string, o *BackendOAuth) error {
	switch {
	case o.Grant == GrantJWTBearer:
		switch {
		case (o.AssertionFile == "") == (o.AssertionFrom == ""):
			return bad(prefix, "jwt_bearer: name the workload's JWT in assertion_file or assertion_from, one of them")
		case o.ClientSecretFrom != "" || o.ClientSecretFile != "" || o.PrivateKeyFrom != "" || o.PrivateKeyFile != "" || o.AuthMethod != "" || o.SigningAlg != "":
			return bad(prefix, "jwt_bearer: the assertion is the credential; no client secret, private key or auth_method beside it")
		}
	case o.AssertionFile != "" || o.AssertionFrom != "":
		return bad(prefix, "assertion_file and assertion_from go with grant: jwt_bearer")
	case o.ClientID == "":
		return bad(prefix+".client_id", "required")
	case o.AuthMethod == "private_key_jwt":
		switch {
		case (o.PrivateKeyFrom == "") == (o.PrivateKeyFile == ""):
			return bad(prefix, "private_key_jwt: name the private key in private_key_from (an environment variable) or private_key_file, one of them")
		case o.ClientSecretFrom != "" || o.ClientSecretFile != "":
			return bad(prefix, "private_key_jwt authenticates with the key: no client secret beside it")
		}
	case o.PrivateKeyFrom != "" || o.PrivateKeyFile != "" || o.SigningAlg != "":
		return bad(prefix, "private_key_from, private_key_file and signing_alg go with auth_method: private_key_jwt")
	case (o.ClientSecretFrom == "") == (o.ClientSecretFile == ""):
		return bad(prefix, "name the client secret in client_secret_from (an environment variable) or client_secret_file, one of them")
	case o.AuthMethod != "" && o.AuthMethod != "client_secret_basic" && o.AuthMethod != "client_secret_post":
		return bad(prefix+".auth_method", "%q is not client_secret_basic, client_secret_post or private_key_jwt", o.AuthMethod)
	}
	return nil
}

// validateIssuer checks oauth.issuer, when set.
func validateIssuer(key string, o *BackendOAuth) error {
	if o.Issuer == "" {
		return nil
	}
	return fetchableURL(key+".oauth.issuer", o.Issuer)
}
