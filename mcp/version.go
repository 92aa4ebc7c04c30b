// version.go lists the MCP revisions this engine speaks and negotiates one
// at initialize.

package mcp

import "slices"

// The protocol revisions mcpgate supports, oldest first.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"

	// LatestVersion is answered to a client asking for a revision we do not
	// speak; the client then decides whether to go on.
	LatestVersion = Version20251125
)

// supportedVersions is every revision of the session era we answer to,
// oldest first. Unexported: a package variable another package could
// change was everyone's state.
var supportedVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125}

// SupportedVersions is every revision of the session era we answer to,
// oldest first (a copy).
func SupportedVersions() []string { return slices.Clone(supportedVersions) }

// IsSupportedVersion reports whether v is a revision we speak.
func IsSupportedVersion(v string) bool { return slices.Contains(supportedVersions, v) }

// NegotiateVersion answers a client's requested revision: the same one if
// we speak it, else the newest we do.
func NegotiateVersion(requested string) string {
	if IsSupportedVersion(requested) {
		return requested
	}
	return LatestVersion
}

// AllowsBatch reports whether revision v accepts JSON-RPC batches. Only
// 2025-03-26 did; 2025-06-18 removed them again.
func AllowsBatch(v string) bool { return v == Version20250326 }
