// rules.go is the gate's rules in CEL (cel.dev/cel-go, the language
// Kubernetes and Envoy evaluate): finer than roles, they read who calls
// (principal), what is called and with what (request), and the time
// (now). A rule whose match holds denies the call unless its deny_unless
// holds too. Expressions are compiled and type-checked once, when the
// configuration loads, and run under a cost limit, so that none can stall
// a call. A rule that fails at run time denies, and the log says why.

package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/textcut"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// RuleSpec is one rule as configured.
type RuleSpec struct {
	Name string
	// Match selects the calls the rule is about ("": every call).
	Match string
	// DenyUnless is what a matched call must satisfy to go on.
	DenyUnless string
	// Message is what a denied caller is told ("": the rule's name).
	Message string
}

// Rules are compiled rules, evaluated in order; the first to deny wins.
type Rules struct {
	rules []*celRule
	log   *slog.Logger
	// claims: an expression reads the principal's claims or groups,
	// which are decoded then.
	claims bool
}

type celRule struct {
	spec RuleSpec
	// match is nil for a rule of every call; partial programs decide
	// what they can without the request's arguments (Visible).
	match, deny               cel.Program
	matchPartial, denyPartial cel.Program
	// matchArgs, denyArgs: the expression reads request.arguments
	// (decoded then).
	matchArgs, denyArgs bool
	// passed and denied count the calls it matched, by its decision.
	passed, denied atomic.Int64
}

// ruleCostLimit bounds what one expression with a comprehension may
// spend, in CEL's cost units: generous for a rule, far short of a stalled
// call.
const ruleCostLimit = 100_000

// celEnv is the rules' environment: the three variables and CEL's string
// extensions.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("principal", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("now", cel.TimestampType),
		ext.Strings(),
	)
})

// unknownArguments marks request.arguments unknown, for what a list
// decides without them.
var unknownArguments = cel.AttributePattern("request").QualString("arguments")

// RuleError is a rule refused when it is compiled: Key names the rule's
// key (policy.rules[2].match), Msg the rule and what is wrong, at which
// position of the expression.
type RuleError struct{ Key, Msg string }

func (e *RuleError) Error() string { return e.Key + ": " + e.Msg }

// CompileRules compiles and type-checks specs; a *RuleError names the
// rule, its key and the position in the expression.
func CompileRules(specs []RuleSpec, log *slog.Logger) (*Rules, error) {
	env, err := celEnv()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := &Rules{log: log}
	seen := map[string]bool{}
	for i, s := range specs {
		where := fmt.Sprintf("policy.rules[%d]", i)
		switch {
		case s.Name == "":
			return nil, &RuleError{where + ".name", "required"}
		case seen[s.Name]:
			return nil, &RuleError{where + ".name", fmt.Sprintf("%q names another rule too", s.Name)}
		case s.DenyUnless == "":
			return nil, &RuleError{where + ".deny_unless", "required (rule " + s.Name + "): what a matched call must satisfy"}
		}
		seen[s.Name] = true
		r := &celRule{spec: s}
		if s.Match != "" {
			if r.match, r.matchPartial, err = compileRule(env, s.Match); err != nil {
				return nil, &RuleError{where + ".match", "rule " + s.Name + ": " + err.Error()}
			}
		}
		if r.deny, r.denyPartial, err = compileRule(env, s.DenyUnless); err != nil {
			return nil, &RuleError{where + ".deny_unless", "rule " + s.Name + ": " + err.Error()}
		}
		text := s.Match + " " + s.DenyUnless
		r.matchArgs, r.denyArgs = readsArguments(s.Match), readsArguments(s.DenyUnless)
		out.claims = out.claims || strings.Contains(text, "claims") || strings.Contains(text, "groups")
		out.rules = append(out.rules, r)
	}
	return out, nil
}

// compileRule is expr's program, and its partial twin.
func compileRule(env *cel.Env, expr string) (full, partial cel.Program, err error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, nil, errors.New(strings.TrimPrefix(iss.Err().Error(), "ERROR: "))
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, nil, fmt.Errorf("is %s, not a bool", ast.OutputType())
	}
	// Only a comprehension (all, exists, map, filter) can spend more than
	// its input's size: those run under the cost limit, whose tracking
	// doubles what a rule costs, and the others without.
	var fullOpts, partialOpts []cel.ProgramOption
	if loops(ast) {
		fullOpts = append(fullOpts, cel.CostLimit(ruleCostLimit))
		partialOpts = append(partialOpts, cel.CostLimit(ruleCostLimit))
	}
	if full, err = env.Program(ast, append(fullOpts, cel.EvalOptions(cel.OptOptimize))...); err != nil {
		return nil, nil, err
	}
	partial, err = env.Program(ast, append(partialOpts, cel.EvalOptions(cel.OptPartialEval))...)
	return full, partial, err
}

// loops reports whether a holds a comprehension.
func loops(a *cel.Ast) bool {
	found := false
	celast.PreOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		found = found || e.Kind() == celast.ComprehensionKind
	}))
	return found
}

// Len is the number of rules.
func (rs *Rules) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.rules)
}

// Denied is the data of a -32001 refusal by a rule.
type Denied struct {
	Kind mcp.ErrorKind `json:"kind"` // always mcp.KindForbidden
	Rule string        `json:"rule"` // the rule that denied
}

// Check answers whether the call r (nil: none, its entry e alone) of id
// may go on: nil, or the -32001 of the first rule that denies it, whose
// name r records for the audit.
func (rs *Rules) Check(ctx context.Context, id mcp.Identity, e mcp.Entry, r *mcp.Request) error {
	if rs.Len() == 0 {
		return nil
	}
	v := newVars(id, e, r, time.Now(), rs.claims)
	for _, ru := range rs.rules {
		ok, matched, err := ru.allows(v)
		if err != nil {
			rs.log.Warn("policy: a rule failed, and so denied the call", "rule", ru.spec.Name, "entry", e.Name, "err", err)
		}
		if ok && err == nil {
			if matched {
				ru.passed.Add(1)
			}
			continue
		}
		ru.denied.Add(1)
		r.SetDeniedBy(ru.spec.Name)
		msg := ru.spec.Message
		if msg == "" {
			msg = "denied by policy rule " + ru.spec.Name
		}
		return jsonrpc.NewError(jsonrpc.CodeForbidden, msg, Denied{Kind: mcp.KindForbidden, Rule: ru.spec.Name})
	}
	return nil
}

// Visible reports whether no rule denies id entry e whatever its
// arguments: a rule that needs them to decide leaves e listed.
func (rs *Rules) Visible(id mcp.Identity, e mcp.Entry) bool {
	if rs.Len() == 0 {
		return true
	}
	v := newVars(id, e, nil, time.Now(), rs.claims)
	v.partial = true
	for _, ru := range rs.rules {
		if ru.match != nil {
			m, err := decide(ru.matchPartial, v)
			if err != nil || m == nil {
				continue // undecided without the arguments, or failing: listed
			}
			if !*m {
				continue
			}
		}
		d, err := decide(ru.denyPartial, v)
		if err == nil && d != nil && !*d {
			return false
		}
	}
	return true
}

// allows evaluates the rule on v: true when it does not match or its
// deny_unless holds; matched says whether it matched. An expression
// that reads arguments a backend could read apart from it fails.
func (ru *celRule) allows(v *vars) (ok, matched bool, err error) {
	if ru.match != nil {
		if ru.matchArgs {
			if err := v.decodeArguments(); err != nil {
				return false, false, err
			}
		}
		m, err := evalBool(ru.match, v)
		if err != nil || !m {
			return !m && err == nil, false, err
		}
	}
	if ru.denyArgs {
		if err := v.decodeArguments(); err != nil {
			return false, true, err
		}
	}
	ok, err = evalBool(ru.deny, v)
	return ok, true, err
}

// readsArguments reports whether expr may read request.arguments.
func readsArguments(expr string) bool { return strings.Contains(expr, "arguments") }

// RuleStat is one rule as configured, and how many calls it matched
// since it was put in force, by its decision.
type RuleStat struct {
	RuleSpec
	Passed, Denied int64
}

// Stats are the rules, in order, with their counts.
func (rs *Rules) Stats() []RuleStat {
	if rs == nil {
		return nil
	}
	out := make([]RuleStat, len(rs.rules))
	for i, ru := range rs.rules {
		out[i] = RuleStat{RuleSpec: ru.spec, Passed: ru.passed.Load(), Denied: ru.denied.Load()}
	}
	return out
}

func evalBool(p cel.Program, v *vars) (bool, error) {
	out, _, err := p.Eval(v)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("the expression gave %v, not a bool", out)
	}
	return b, nil
}

// decide is p on v, partially: nil when it needs what v does not know.
func decide(p cel.Program, v *vars) (*bool, error) {
	out, _, err := p.Eval(v)
	if err != nil {
		return nil, err
	}
	if types.IsUnknown(out) {
		return nil, nil
	}
	b, ok := out.Value().(bool)
	if !ok {
		return nil, fmt.Errorf("the expression gave %v, not a bool", out)
	}
	return &b, nil
}

// vars are a call's variables, as the rules read them.
type vars struct {
	principal map[string]any
	request   map[string]any
	now       ref.Val
	r         *mcp.Request
	decoded   bool
	argsErr   error // why the arguments cannot be read (decodeArguments)
	// partial: request.arguments are unknown (Visible).
	partial bool
}

var _ interpreter.PartialActivation = (*vars)(nil)

func newVars(id mcp.Identity, e mcp.Entry, r *mcp.Request, now time.Time, withClaims bool) *vars {
	claims := map[string]any{}
	if withClaims {
		claims = presentedClaims(id)
	}
	groups, _ := claims["groups"].([]any)
	if groups == nil {
		groups = []any{}
	}
	principal := map[string]any{"subject": id.Subject, "role": id.Role, "token": id.TokenID, "id": id.Budget(),
		"groups": groups, "claims": claims}
	request := map[string]any{"entry": e.Name, "kind": string(e.Kind), "backend": e.Owner, "origin": e.Origin,
		"arguments": map[string]any{}, "uri": "", "method": "", "era": "", "client": ""}
	if e.Origin == "" {
		request["origin"] = e.Name
	}
	if e.Kind == mcp.KindResource {
		request["uri"] = e.Name
	}
	if r != nil {
		request["method"], request["client"] = r.Method, r.ClientName()
		request["era"] = "2025"
		if r.Version() >= mcp.Version20260728 {
			request["era"] = "2026"
		}
		if r.Version() == "" {
			request["era"] = ""
		}
	}
	return &vars{principal: principal, request: request, now: types.Timestamp{Time: now}, r: r}
}

// decodeArguments reads the request's arguments, once. Arguments with
// twin keys (FoldTwins) are not read: a backend could read other values
// than a rule does (Go's encoding/json matches keys without case, and
// readers differ on which of two equal keys wins).
func (v *vars) decodeArguments() error {
	if v.decoded || v.r == nil {
		return v.argsErr
	}
	v.decoded = true
	raw, _ := jsonrpc.Lookup(v.r.Params, "arguments")
	if key, other, twins := jsonrpc.FoldTwins(raw); twins {
		v.argsErr = &TwinKeysError{Key: key, Other: other}
		return v.argsErr
	}
	var args map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &args) == nil && args != nil {
		v.request["arguments"] = args
	}
	return nil
}

// TwinKeysError is why a rule could not read a call's arguments: two keys
// of one object in them that a reader matching keys without case takes
// for one (or one key twice).
type TwinKeysError struct{ Key, Other string }

func (e *TwinKeysError) Error() string {
	// The keys are the caller's: cut to a bounded length for the log.
	return fmt.Sprintf("the arguments hold the keys %q and %q, which a backend may read as one; no rule reads them",
		textcut.Valid(e.Key, maxQuotedKey), textcut.Valid(e.Other, maxQuotedKey))
}

// maxQuotedKey bounds each key TwinKeysError quotes.
const maxQuotedKey = 128

func (v *vars) ResolveName(name string) (any, bool) {
	switch name {
	case "principal":
		return v.principal, true
	case "request":
		return v.request, true
	case "now":
		return v.now, true
	}
	return nil, false
}

func (v *vars) Parent() interpreter.Activation { return nil }

// UnknownAttributePatterns marks the arguments unknown in a partial
// evaluation, and nothing in a full one.
func (v *vars) UnknownAttributePatterns() []*interpreter.AttributePattern {
	if v.partial {
		return []*interpreter.AttributePattern{unknownArguments}
	}
	return nil
}

// presentedClaims are the claims of the token id presented, when it is a
// JWT (verified at authentication: read here, not checked again); empty
// for the gateway's own credentials.
func presentedClaims(id mcp.Identity) map[string]any {
	claims := jwt.MapClaims{}
	if tok := id.Presented.Reveal(); tok != "" {
		if _, _, err := jwt.NewParser().ParseUnverified(tok, claims); err != nil {
			return map[string]any{}
		}
	}
	return claims
}

// Condition is one expression over the rules' variables, on its own: an
// interceptor's match.
type Condition struct {
	prg               cel.Program
	arguments, claims bool
}

// CompileCondition compiles and type-checks expr; the error says where
// in it.
func CompileCondition(expr string) (*Condition, error) {
	env, err := celEnv()
	if err != nil {
		return nil, err
	}
	prg, _, err := compileRule(env, expr)
	if err != nil {
		return nil, err
	}
	return &Condition{prg: prg, arguments: readsArguments(expr),
		claims: strings.Contains(expr, "claims") || strings.Contains(expr, "groups")}, nil
}

// Holds evaluates c for the call r of id to entry e (a nil c holds).
func (c *Condition) Holds(id mcp.Identity, e mcp.Entry, r *mcp.Request) (bool, error) {
	if c == nil {
		return true, nil
	}
	v := newVars(id, e, r, time.Now(), c.claims)
	if c.arguments {
		if err := v.decodeArguments(); err != nil {
			return false, err
		}
	}
	return evalBool(c.prg, v)
}
