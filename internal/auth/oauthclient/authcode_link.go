// authcode_link.go turns a backend's challenge into the link an admin
// opens: discovery of its authorization server, the issuer pinned, the
// signed state, and the line that says where to open it.

package oauthclient

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/oauth2"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/egress"
)

// challenged meets a 401 or a 403 the backend answered to a request that
// carried sent: the admin is asked (again) to authorize. It is not asked
// when a link is waiting for the scopes already. Nor is it when the backend
// refused a token that holds the very scopes it challenges for, or when
// there is a token now that the refused request did not carry (a 401 or a
// 403 alike).
func (a *Authorization) challenged(ctx context.Context, status int, ch oauthmeta.Challenge, sent string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.engaged.Store(true)
	a.load(ctx, true)
	loaded := a.rec.Token // what the store held: a token other than it, when this link is stored, is another replica's
	if t := a.rec.Token; t != nil && t.Access != sent {
		// A token this request did not carry (another replica's, a
		// refresh's, or an authorization that completed while it was on
		// its way): the next one sends it. A 403 to the old one says
		// nothing of what the new one may do.
		return
	}
	var held []string
	if t := a.rec.Token; t != nil {
		held = strings.Fields(t.Scope)
	}
	want := ch.Scope
	if status == http.StatusForbidden {
		if ch.Error != "insufficient_scope" {
			return
		}
		if len(want) > 0 && containsAll(held, want) || a.rec.Refused != "" && a.rec.Refused == strings.Join(union(held, want), " ") {
			msg := fmt.Sprintf("the backend refuses a token holding the scope %q it asks for; not asking the admin again", strings.Join(want, " "))
			a.rec.Refused = strings.Join(union(held, want), " ")
			a.fail(ctx, msg)
			a.save(ctx)
			return
		}
		want = union(held, want) // SEP-2350: keep what was granted
	} else {
		a.rec.Token = nil // refused: ask again
	}
	if a.linkServes(a.rec.Pending, want) {
		return // the admin has a link for this already
	}
	if err := a.begin(ctx, ch, want); err != nil {
		a.rec.Pending = nil
		a.fail(ctx, err.Error())
		a.save(ctx)
		return
	}
	a.saveLink(ctx, want, loaded)
	a.announce()
}

// linkServes reports whether p is a link, still good, for the scopes want.
func (a *Authorization) linkServes(p *pending, want []string) bool {
	return p != nil && a.now().Before(p.Expires) && containsAll(strings.Fields(p.Scope), want)
}

// saveLink stores the link begin just made (under a.mu). While begin asked
// the authorization server, another replica may have stored a link that
// serves as well, or a token this one has not seen. That record is then
// taken, and this link dropped. Every replica so shows one link, and the
// callback, wherever it lands, completes it. A link overwritten by another
// would fail, and a token overwritten would be lost.
func (a *Authorization) saveLink(ctx context.Context, want []string, loaded *tokenSet) {
	if a.vault() == nil {
		return
	}
	mine, _ := json.Marshal(a.rec)
	var theirs *record
	err := a.vault().Update(ctx, a.Backend, func(old []byte) ([]byte, error) {
		var cur record
		if old != nil && json.Unmarshal(old, &cur) == nil {
			newToken := cur.Token != nil && (loaded == nil || cur.Token.Access != loaded.Access)
			if newToken || a.linkServes(cur.Pending, want) {
				theirs = &cur
				return nil, nil // keep the record as it is
			}
		}
		return mine, nil
	})
	switch {
	case err != nil:
		a.log().Error("backend credentials not saved", "err", err)
	case theirs != nil:
		a.rec = *theirs
	}
}

// fail records why the backend has no token, logging each reason once.
func (a *Authorization) fail(_ context.Context, msg string) {
	a.rec.Failure = msg
	if a.logged != msg {
		a.logged = msg
		a.log().Error("backend authorization failed", "err", msg)
	}
}

// begin discovers the backend's authorization server, registers there
// if need be and makes the link the admin is to open (under a.mu).
func (a *Authorization) begin(ctx context.Context, ch oauthmeta.Challenge, challenged []string) error {
	var issuer string
	var as oauthmeta.ServerMetadata
	prm, err := DiscoverResource(ctx, a.http(), a.Resource, ch.ResourceMetadata)
	switch {
	case errors.Is(err, ErrNoResourceMetadata) && ch.ResourceMetadata == "":
		// A server of 2025-03-26: its authorization server is at its
		// origin. The token is asked for it as for any (resource).
		if issuer, as, err = oauthmeta.LegacyAuthorizationServer(ctx, a.http(), a.Resource); err != nil {
			return err
		}
		if err := a.pin(issuer); err != nil {
			return err
		}
		prm = ResourceMetadata{Resource: a.Resource}
		a.log().Info("backend serves no protected resource metadata: its authorization server is taken at its origin (2025-03-26)", "issuer", egress.Summary(issuer))
	case err != nil:
		return err
	case len(prm.AuthorizationServers) == 0:
		return fmt.Errorf("the resource metadata of %s names no authorization server", a.Resource)
	default:
		issuer = prm.AuthorizationServers[0]
		if want := cmp.Or(a.Issuer, a.rec.Issuer); want != "" && slices.Contains(prm.AuthorizationServers, want) {
			issuer = want // the one signed in at, among those the backend names
		}
		if err := a.pin(issuer); err != nil {
			return err // before anything is asked of it
		}
		if as, err = oauthmeta.DiscoverAuthorizationServer(ctx, a.http(), issuer); err != nil {
			return err
		}
	}
	switch {
	case !slices.Contains(as.CodeChallengeMethodsSupported, "S256"):
		return fmt.Errorf("the authorization server %s does not say it supports PKCE with S256 (code_challenge_methods_supported)", egress.Summary(issuer))
	case as.AuthorizationEndpoint == "" || as.TokenEndpoint == "":
		return fmt.Errorf("the authorization server %s names no authorization or token endpoint", egress.Summary(issuer))
	}
	for _, e := range []string{as.AuthorizationEndpoint, as.TokenEndpoint} {
		if err := oauthmeta.CheckFetchURL(e); err != nil {
			return fmt.Errorf("the authorization server %s: %w", egress.Summary(issuer), err)
		}
	}
	redirect := a.Env.RedirectURL()
	reg, err := a.registration(ctx, issuer, as, redirect)
	if err != nil {
		return err
	}
	scope := a.Scopes
	switch {
	case len(scope) > 0:
	case len(challenged) > 0:
		scope = challenged
	default:
		scope = prm.ScopesSupported
	}
	if len(scope) > 0 && slices.Contains(as.ScopesSupported, "offline_access") && !slices.Contains(scope, "offline_access") {
		scope = append(slices.Clone(scope), "offline_access") // SEP-2207: a refresh token, please
	}
	dpop := offersDPoP(as)
	if dpop && a.rec.DPoPKey == "" {
		if a.rec.DPoPKey, err = newDPoPKey(); err != nil {
			return err
		}
	}
	p := &pending{State: a.newState(), Verifier: oauth2.GenerateVerifier(), Issuer: issuer, DPoP: dpop,
		IssRequired: as.AuthorizationResponseIssParameterSupported, AuthEndpoint: as.AuthorizationEndpoint,
		TokenEndpoint: as.TokenEndpoint, Resource: prm.Resource, RedirectURI: redirect,
		Scope: strings.Join(scope, " "), Expires: a.now().Add(pendingFor)}
	cfg := oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect, Scopes: scope,
		Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint}}
	p.Link = cfg.AuthCodeURL(p.State, oauth2.S256ChallengeOption(p.Verifier), oauth2.SetAuthURLParam("resource", prm.Resource))
	a.rec.Pending, a.rec.Failure = p, ""
	return nil
}

// ErrIssuerChanged: the backend names an authorization server other than
// the one the gateway signs in at for it.
var ErrIssuerChanged = errors.New("the backend names another authorization server")

// pin admits the issuer discovered for the backend: the configured one,
// else the one first discovered, which it pins. A backend that comes to
// name another (a server that changed hands, or one naming itself to
// collect a refresh) is refused until an admin forgets the authorization.
func (a *Authorization) pin(issuer string) error {
	want := cmp.Or(a.Issuer, a.rec.Issuer)
	switch {
	case want == "":
		a.rec.Issuer = issuer
		return nil
	case issuer == want:
		a.rec.Issuer = issuer
		return nil
	case a.Issuer != "":
		return fmt.Errorf("%w: it names %s, and its configuration says %s", ErrIssuerChanged, egress.Summary(issuer), a.Issuer)
	}
	return fmt.Errorf("%w: it names %s, and it was first authorized at %s; an admin must forget the authorization (console, Forget authorization) before the gateway signs in at another",
		ErrIssuerChanged, egress.Summary(issuer), egress.Summary(want))
}

// announce logs the link waiting for the admin, once.
func (a *Authorization) announce() {
	if p := a.rec.Pending; p != nil && a.logged != p.Link && a.Owner != "" {
		a.logged = p.Link // theirs to open, from their own page: the log names no link
		a.log().Info("backend asks a person to authorize it: their link waits on their My credentials page",
			"issuer", egress.Summary(p.Issuer), "scope", egress.Summary(p.Scope))
	} else if p != nil && a.logged != p.Link {
		a.logged = p.Link
		open := p.Link // no console (authentication off, loopback only): the log is the only place
		if a.Env.ConsoleLink != nil {
			if l := a.Env.ConsoleLink(a.Backend); l != "" {
				open = l
			}
		}
		a.log().Warn("backend needs an admin to authorize the gateway at its authorization server: open it from the console (Backends, Authorize the gateway)",
			"issuer", egress.Summary(p.Issuer), "scope", egress.Summary(p.Scope), "open", open)
	}
}

// newState is the authorization's state: the backend's name (for the
// callback to find it), 16 random bytes, and their signature.
func (a *Authorization) newState() string {
	b := make([]byte, stateNonceBytes, stateNonceBytes+stateTagBytes)
	_, _ = rand.Read(b)
	b = append(b, a.Env.stateTag(a.stateName(), b)...)
	return base64.RawURLEncoding.EncodeToString([]byte(a.Backend)) + "." + base64.RawURLEncoding.EncodeToString(b)
}

// signedState reports whether state is one this gateway made for the
// backend: its signature checks out.
func (a *Authorization) signedState(state string) bool {
	name, rest, ok := strings.Cut(state, ".")
	if !ok || name != base64.RawURLEncoding.EncodeToString([]byte(a.Backend)) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(b) != stateNonceBytes+stateTagBytes {
		return false
	}
	return hmac.Equal(b[stateNonceBytes:], a.Env.stateTag(a.stateName(), b[:stateNonceBytes]))
}

// StateBackend is the backend a callback's state names ("": none).
func StateBackend(state string) string {
	name, _, ok := strings.Cut(state, ".")
	if !ok {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(name)
	if err != nil {
		return ""
	}
	return string(b)
}
