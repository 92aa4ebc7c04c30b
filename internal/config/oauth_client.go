// oauth_client.go configures the gateway as an OAuth client of its
// backends. An http or sse backend that answers 401 with a Bearer challenge
// is signed in to the way the MCP specification's clients do it. Its
// authorization server is discovered, and the gateway registers there:
// backends[].oauth with grant authorization_code for a client registered
// out of band, else a Client ID Metadata Document, else dynamic
// registration. An admin opens the link the gateway logs and shows in the
// console, once. The tokens are kept in the store sealed under the key
// named here, or in memory only when none is.

package config

import (
	"fmt"
	"strings"
)

// OAuthClientConfig configures the gateway as an OAuth client of its backends.
type OAuthClientConfig struct {
	// RedirectURL is the gateway's callback as the admin's browser
	// reaches it, ending in /oauth/callback (default: on the origin of
	// auth.oauth.resource, else on the listen address).
	RedirectURL string `yaml:"redirect_url"`
	// ClientMetadataURL is the gateway's Client ID Metadata Document URL,
	// its client_id at authorization servers that support them (https;
	// the gateway serves the document at /oauth/client-metadata.json).
	// Default: that path on the redirect URL's origin when it is https;
	// none on a loopback http one, which no authorization server reaches.
	ClientMetadataURL string `yaml:"client_metadata_url"`
	// ClientName is the client_name the gateway registers (default
	// "mcpgate").
	ClientName string `yaml:"client_name"`
	// SealingKey (key_from, key_file) names the key that seals the
	// backends' tokens in the store. Without one the tokens live in
	// memory only, and an admin authorizes again after a restart.
	SealingKey `yaml:",inline"`
	// Disabled: a backend that demands OAuth is not signed in to, only
	// reported down.
	Disabled bool `yaml:"disabled"`
}

// Key is the sealing key (nil: none configured). The error names the
// key, never its value.
func (o OAuthClientConfig) Key() ([]byte, error) { return o.SealingKey.Key("oauth_client") }

func (c *Config) validateOAuthClient() error {
	o := c.OAuthClient
	if o.RedirectURL != "" {
		if err := fetchableURL("oauth_client.redirect_url", o.RedirectURL); err != nil {
			return err
		}
		if !strings.HasSuffix(strings.SplitN(o.RedirectURL, "?", 2)[0], "/oauth/callback") || strings.ContainsAny(o.RedirectURL, "?#") {
			return bad("oauth_client.redirect_url", "must end in /oauth/callback, with no query or fragment (it is where the gateway takes the answer)")
		}
	}
	if u := o.ClientMetadataURL; u != "" {
		if !strings.HasPrefix(u, "https://") || strings.Count(u, "/") < 3 || strings.HasSuffix(u, "/") {
			return bad("oauth_client.client_metadata_url", "%q: a client ID metadata document URL is https with a path", u)
		}
	}
	if _, err := o.Key(); err != nil {
		return err
	}
	return nil
}

// String keeps the key out of any print of the configuration.
func (o OAuthClientConfig) String() string {
	return fmt.Sprintf("{redirect_url:%s client_metadata_url:%s key_from:%s key_file:%s}", o.RedirectURL, o.ClientMetadataURL, o.KeyFrom, o.KeyFile)
}
