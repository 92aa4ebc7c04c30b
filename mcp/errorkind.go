// errorkind.go names what an error's data.kind may say. A program branches
// on the kind, not on the message, so every kind mcpgate emits is one of
// these constants, and every check compares against one.

package mcp

// ErrorKind is the data.kind of an error: what went wrong, for a program.
type ErrorKind string

// The kinds mcpgate's errors carry.
const (
	// KindForbidden: the caller's role may not use the entry (-32001).
	KindForbidden ErrorKind = "forbidden"
	// KindRateLimited: the caller's bucket is empty (-32000).
	KindRateLimited ErrorKind = "rate_limited"
	// KindTooLarge: an answer was over a transport's size limit.
	KindTooLarge ErrorKind = "too_large"
	// KindTimeout: a backend did not answer in time.
	KindTimeout ErrorKind = "timeout"
	// KindSessionLimit: a caller holds as many sessions as it may.
	KindSessionLimit ErrorKind = "session_limit"
	// KindTaskLimit: a caller holds as many tasks as it may.
	KindTaskLimit ErrorKind = "task_limit"
	// KindAmbiguousKey: two keys of one object fold to the same name.
	KindAmbiguousKey ErrorKind = "ambiguous_key"
	// KindDefinitionChanged: a backend changed the entry's definition
	// and the change awaits an admin's approval (-32603).
	KindDefinitionChanged ErrorKind = "definition_changed"
	// KindCredentialRequired: the backend acts as each caller, and this
	// one has stored no credential for it (CodeURLElicitationRequired).
	KindCredentialRequired ErrorKind = "credential_required"
)
