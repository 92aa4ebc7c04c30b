// Package oauthclient is the gateway as an OAuth 2.1 client of the
// backends that demand access tokens. It gets tokens by client
// credentials (a secret or a signed JWT), by the JWT-bearer grant of a
// workload identity, or by the authorization code flow an admin runs
// once. It keeps them sealed in the store (Vault), binds them by DPoP
// where the server offers it, and answers a backend's challenge by
// asking again.
//
// What the three OAuth roles share lives in package oauthmeta.
package oauthclient
