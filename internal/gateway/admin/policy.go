// policy.go is the console's Policy page: each rule and interceptor in
// force, what it says, how many calls it decided which way, and the calls
// it refused most recently (from the audit log).

package admin

import (
	"net/http"

	"github.com/mcpgate/mcpgate/internal/store"
)

// PolicyView is what the Policy page shows.
type PolicyView struct {
	Rules        []PolicyRuleRow
	Interceptors []InterceptorRow
}

// PolicyRuleRow is one rule: as configured, its counts since it was put
// in force, and its latest denials.
type PolicyRuleRow struct {
	Name, Match, DenyUnless, Message string
	Passed, Denied                   int64
	Recent                           []store.AuditRecord
}

// InterceptorRow is one interceptor: what it calls and when, its outcomes
// counted since the gateway started, and the calls it refused latest.
type InterceptorRow struct {
	Name, Calls, On, Mode, Fail, Match string
	Outcomes                           []OutcomeCount
	Recent                             []store.AuditRecord
}

// OutcomeCount is how many of an interceptor's calls ended one way.
type OutcomeCount struct {
	Outcome string
	N       int64
}

func (h *Handler) policy(w http.ResponseWriter, r *http.Request, c caller) {
	v := view{Title: "Policy", Nav: "policy", Data: h.src.Policy(r.Context())}
	h.render(w, http.StatusOK, "policy", *v.from(c))
}
