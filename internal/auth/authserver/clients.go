// clients.go is how a client becomes known. One way is a Client ID Metadata
// Document: its client_id is the https URL of a JSON document naming its
// redirect URIs. It is fetched when the client asks for authorization, and
// kept as long as the answer's Cache-Control allows. The other is Dynamic
// Client Registration (RFC 7591), which stores it. At most ClientLimit
// clients are stored, and RegisterRate registrations a second, so that
// registration cannot fill the store.

package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/loopback"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/textcut"
)

// Limits of what a client may say of itself.
const (
	maxMetadataBytes = 16 << 10
	maxRedirectURIs  = 10
	maxURILength     = 2000
	maxClientName    = 200
)

// client is a client as the authorization endpoint needs it.
type client struct {
	ID           string
	Name         string
	RedirectURIs []string
}

// errClient is a client_id that names no client this server will serve,
// or registration metadata it refuses. redirect is set when the fault is
// a redirect URI (RFC 7591's invalid_redirect_uri).
type errClient struct {
	why      string
	redirect bool
}

func (e errClient) Error() string { return e.why }

// lookupClient finds id: a URL is a metadata document (cached as its
// answer allows), anything else a registered client.
func (s *Server) lookupClient(ctx context.Context, id string) (client, error) {
	if strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://") {
		now := s.cfg.Now()
		if c, ok := s.documents.get(id, now); ok {
			return c, nil
		}
		c, ttl, err := s.fetchClient(ctx, id)
		if err == nil && ttl > 0 {
			s.documents.put(id, c, now.Add(ttl))
		}
		return c, err
	}
	c, err := s.cfg.Store.OAuthClient(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return client{}, errClient{why: "no client is registered with this client_id"}
	}
	if err != nil {
		return client{}, err
	}
	return client{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs}, nil
}

// fetchClient reads a Client ID Metadata Document: https (or http on
// loopback), no redirect, at most maxMetadataBytes, JSON whose client_id
// is the URL itself and whose redirect URIs pass checkRedirectURI. ttl
// is how long the answer may be kept (documentTTL).
func (s *Server) fetchClient(ctx context.Context, id string) (_ client, ttl time.Duration, _ error) {
	u, err := url.Parse(id)
	if err != nil || u.Fragment != "" || u.User != nil || u.Path == "" || u.Path == "/" {
		return client{}, 0, errClient{why: "a client_id URL must have a path and no fragment or user"}
	}
	if err := oauthmeta.CheckFetchURL(id); err != nil {
		return client{}, 0, errClient{why: "the client metadata URL " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return client{}, 0, errClient{why: "the client metadata document could not be fetched"}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return client{}, 0, errClient{why: fmt.Sprintf("the client metadata document answered %d", resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil || len(body) > maxMetadataBytes {
		return client{}, 0, errClient{why: "the client metadata document is unreadable or larger than 16 KiB"}
	}
	var md clientMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		return client{}, 0, errClient{why: "the client metadata document is not a JSON object"}
	}
	if md.ClientID != id {
		return client{}, 0, errClient{why: "the client metadata document names another client_id"}
	}
	if err := md.check(); err != nil {
		return client{}, 0, err
	}
	return client{ID: id, Name: md.ClientName, RedirectURIs: md.RedirectURIs}, documentTTL(resp.Header), nil
}

// How long a metadata document is kept: as its Cache-Control says, within
// these bounds; nothing is kept that said no-store or no-cache, or that
// failed to fetch or check.
const (
	documentDefaultTTL = 5 * time.Minute
	documentMaxTTL     = time.Hour
	documentsKept      = 256
)

// documentTTL is how long an answer with header h may be kept.
func documentTTL(h http.Header) time.Duration {
	ttl := documentDefaultTTL
	for _, d := range strings.Split(strings.ToLower(strings.Join(h.Values("Cache-Control"), ",")), ",") {
		d = strings.TrimSpace(d)
		switch {
		case d == "no-store" || d == "no-cache":
			return 0
		case strings.HasPrefix(d, "max-age="):
			n, err := strconv.Atoi(strings.TrimPrefix(d, "max-age="))
			if err != nil || n < 0 {
				return 0
			}
			ttl = time.Duration(n) * time.Second
		}
	}
	return min(ttl, documentMaxTTL)
}

// documentCache keeps fetched metadata documents, at most documentsKept:
// a client_id is anybody's to choose, so a full cache drops the entry
// closest to expiry rather than grow.
type documentCache struct {
	mu   sync.Mutex
	kept map[string]cachedClient
}

type cachedClient struct {
	c     client
	until time.Time
}

func (d *documentCache) get(id string, now time.Time) (client, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.kept[id]
	if !ok || !now.Before(e.until) {
		delete(d.kept, id)
		return client{}, false
	}
	return e.c, true
}

func (d *documentCache) put(id string, c client, until time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.kept == nil {
		d.kept = map[string]cachedClient{}
	}
	if _, ok := d.kept[id]; !ok && len(d.kept) >= documentsKept {
		soonest := ""
		for k, e := range d.kept {
			if soonest == "" || e.until.Before(d.kept[soonest].until) {
				soonest = k
			}
		}
		delete(d.kept, soonest)
	}
	d.kept[id] = cachedClient{c, until}
}

// clientMetadata is what a client says of itself (RFC 7591 §2), the part
// this server reads.
type clientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// check holds the metadata to what is served here: public clients of the
// code flow, with redirect URIs that cannot be used for an open redirect.
func (md *clientMetadata) check() error {
	switch md.TokenEndpointAuthMethod {
	case "", "none":
	default:
		return errClient{why: "only public clients are served: token_endpoint_auth_method must be none"}
	}
	for _, g := range md.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return errClient{why: fmt.Sprintf("grant type %q is not served", g)}
		}
	}
	for _, r := range md.ResponseTypes {
		if r != "code" {
			return errClient{why: fmt.Sprintf("response type %q is not served", r)}
		}
	}
	// A control character would reach the consent page, and a NUL is
	// more than PostgreSQL's text holds.
	if len(md.ClientName) > maxClientName || !textcut.Plain(md.ClientName) {
		return errClient{why: "client_name is longer than 200 bytes, not UTF-8 or holds a control character"}
	}
	if len(md.RedirectURIs) == 0 || len(md.RedirectURIs) > maxRedirectURIs {
		return errClient{why: "redirect_uris must name 1 to 10 URIs", redirect: true}
	}
	for _, r := range md.RedirectURIs {
		if err := checkRedirectURI(r); err != nil {
			return err
		}
	}
	return nil
}

// checkRedirectURI takes an absolute URI without a fragment: https, http
// on a loopback host (RFC 8252 §7.3), or a private-use scheme with a dot
// (§7.1), never a scheme a browser would run or read locally.
func checkRedirectURI(r string) error {
	u, err := url.Parse(r)
	if err != nil || len(r) > maxURILength || !u.IsAbs() || u.Fragment != "" || strings.ContainsAny(r, " \t\r\n\"<>\\") {
		return errClient{why: fmt.Sprintf("redirect URI %q is not an absolute URI without a fragment", r), redirect: true}
	}
	if strings.ContainsAny(r, ";,'") {
		// The consent page names the redirect's origin in its CSP
		// form-action: a ; or , there would end the directive and start
		// one of the client's choosing.
		return errClient{why: fmt.Sprintf("redirect URI %q has a character that is refused (; , or ')", r), redirect: true}
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https" && u.Host != "":
	case scheme == "http" && loopback.Host(u.Hostname()):
	case strings.Contains(scheme, ".") && u.User == nil:
	default:
		return errClient{why: fmt.Sprintf("redirect URI %q: only https, http on loopback, or a private-use scheme (com.example.app:/…)", r), redirect: true}
	}
	return nil
}

// serveRegister is Dynamic Client Registration.
func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	if !s.sources.allow(r, start) {
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusTooManyRequests, oauthError{"temporarily_unavailable", "too many registrations from this address; try again later"})
		return
	}
	if !s.register.AllowN(start, 1) {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, oauthError{"temporarily_unavailable", "too many registrations; try again shortly"})
		return
	}
	s.prune(r.Context(), start)
	var md clientMetadata
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxMetadataBytes))
	if err := dec.Decode(&md); err != nil {
		writeJSON(w, http.StatusBadRequest, oauthError{"invalid_client_metadata", "the body is not a JSON object of at most 16 KiB"})
		return
	}
	if err := md.check(); err != nil {
		code := "invalid_client_metadata"
		if ec, ok := err.(errClient); ok && ec.redirect {
			code = "invalid_redirect_uri"
		}
		writeJSON(w, http.StatusBadRequest, oauthError{code, err.Error()})
		return
	}
	c := store.OAuthClient{ID: secret("mcpc_"), Name: md.ClientName, RedirectURIs: md.RedirectURIs, CreatedAt: start.UTC()}
	switch err := s.cfg.Store.RegisterOAuthClient(r.Context(), c, s.cfg.ClientLimit); {
	case errors.Is(err, store.ErrLimit):
		s.log.Warn("authserver: client registration refused: the limit of registered clients is reached", "limit", s.cfg.ClientLimit)
		s.audit("register", "", "", "", "rate_limited", start)
		writeJSON(w, http.StatusServiceUnavailable, oauthError{"temporarily_unavailable", "no more clients can be registered here; use a client ID metadata document"})
		return
	case err != nil:
		s.log.Error("authserver: client registration", "err", err)
		writeJSON(w, http.StatusInternalServerError, oauthError{"server_error", "the client could not be stored"})
		return
	}
	s.audit("register", c.Name, c.ID, "", "ok", start)
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  c.ID,
		"client_id_issued_at":        c.CreatedAt.Unix(),
		"client_name":                c.Name,
		"redirect_uris":              c.RedirectURIs,
		"token_endpoint_auth_method": "none",
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
	})
}

// How long used codes and ended grants outlive their use (store.OAuthPrune).
const (
	prunedCodeAge  = time.Hour
	prunedGrantAge = 7 * 24 * time.Hour
	pruneEvery     = time.Minute
)

// prune deletes, at most once a minute and before a registration counts
// against the limit, the clients that never completed a sign-in, and the
// codes and grants past use.
func (s *Server) prune(ctx context.Context, now time.Time) {
	last := s.pruned.Load()
	if now.UnixNano()-last < int64(pruneEvery) || !s.pruned.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	n, err := s.cfg.Store.PruneOAuth(ctx, now, store.OAuthPrune{IdleClient: s.cfg.ClientIdle, Code: prunedCodeAge, Grant: prunedGrantAge})
	if err != nil {
		s.log.Error("authserver: pruning the store", "err", err)
		return
	}
	if n != (store.OAuthPruned{}) {
		s.log.Info("authserver: pruned", "clients", n.Clients, "codes", n.Codes, "grants", n.Grants)
	}
}

// oauthError is an error response of RFC 6749 §5.2.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}
