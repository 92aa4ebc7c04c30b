// client_transport.go sends a Streamable HTTP client's POSTs through the
// HTTP client's transport directly, when http.Client would add nothing to
// them. Client.Do copies every request's headers for a redirect that a
// backend almost never sends. It makes a cookie URL and a list of the
// requests it followed. A relay paid that on every relayed call.

package mcphttp

import (
	"net/http"
	"net/url"
)

// directTransport is hc's transport when a POST sent through it alone is
// what hc.Do would send: no cookie jar, no overall timeout, no
// credentials in the URL (Do turns them into basic authentication).
// Otherwise it is nil and every request goes through hc.Do. A redirect
// is still followed, by hc.Do (see postDirect).
func directTransport(hc *http.Client, u *url.URL) http.RoundTripper {
	if hc.Jar != nil || hc.Timeout != 0 || u.User != nil {
		return nil
	}
	if hc.Transport == nil {
		return http.DefaultTransport
	}
	return hc.Transport
}

// postDirect sends req through the transport; an answer that redirects is
// dropped and the POST made again through hc.Do, which follows it (and
// applies hc.CheckRedirect) as it would have.
func postDirect(t http.RoundTripper, hc *http.Client, req *http.Request, again func() *http.Request) (*http.Response, error) {
	resp, err := t.RoundTrip(req)
	return followRedirect(resp, err, hc, again)
}

// followRedirect is resp, unless it redirects: it is then dropped and the
// POST made again through hc.Do.
func followRedirect(resp *http.Response, err error, hc *http.Client, again func() *http.Request) (*http.Response, error) {
	if err != nil {
		return nil, err
	}
	if redirects(resp.StatusCode) {
		drain(resp.Body)
		return hc.Do(again())
	}
	return resp, nil
}

// redirects reports whether status is a redirect http.Client follows.
func redirects(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// sentSession reports whether the POST resp answers carried the session
// id: its Request says, or, for one sent by h1.Transport.Post without a
// Request, x.
func sentSession(resp *http.Response, x *exchange) bool {
	if resp.Request != nil {
		return resp.Request.Header.Get(HeaderSessionID) != ""
	}
	return x.sessioned
}
