// Package policy decides who may see and use what in an mcpgate server.
// It holds the role hierarchy (Roles), the gate the MCP engine consults
// before every tools/call, resources/read and prompts/get (Gate), rules in
// CEL finer than roles (Rules), and per-caller token buckets (Limiter).
//
// The model, in the order a call meets it:
//
//  1. Authentication (package auth, or configuration for stdio) puts an
//     mcp.Identity in the request context. No identity, no access.
//  2. Lists show only the entries the caller's role reaches (Gate.Visible),
//     so that an agent does not spend a turn on a tool it may not call.
//  3. A call is admitted by role first (Gate.Admit): a refusal is -32001
//     naming the role required, so that the agent asks for a better
//     credential instead of retrying.
//  4. Then by the rules (rules.go): a denial is -32001 with the rule's
//     message, and spends no budget either. A rule decided without the
//     arguments hides the entry too (Gate.Visible).
//  5. Then by rate: a refusal is -32000 with an honest retryAfterSeconds.
//     Role comes first so that a caller knocking on a door it may never
//     open does not drain the budget it needs for the doors it may.
//
// Seed 003 is the cautionary tale behind every rule here. Its gate read
// only the identity (for rate limiting) and never the role. Two of its
// three gated methods bypassed the gate, so a viewer token reached data a
// REST viewer was refused. The engine (package mcp) now calls the gate at
// the one place every gated method passes; this package makes the gate
// answer the role question for real.
package policy
