// pins.go is the gateway's side of pinning (catalogue/pin.go): the pins
// live in the store, shared by replicas, and catalogue.pinning says what
// a changed definition does. A change is said once: a log line, a count
// (mcpgate_definition_changes_total) and an audit record. Held entries
// are looked at again every pinRecheck, so that an approval made on
// another replica or with the CLI releases them here.

package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/tick"
	"github.com/mcpgate/mcpgate/mcp"
)

// pinRecheck is how often backends holding entries list them again.
const pinRecheck = 5 * time.Second

// pins is the gateway's pinning: its mode, and the backends holding
// entries now.
type pins struct {
	g    *Gateway
	st   store.PinStore
	mode string

	mu      sync.Mutex
	holding map[string]bool // backend → it holds entries
}

// pinner is the catalogue's Pin, nil when pinning is off or there is no
// store.
func (g *Gateway) pinner(st store.Store) catalogue.Pinner {
	mode := g.cfg.Catalogue.PinningMode()
	if mode == config.PinningOff || st == nil {
		return nil
	}
	g.pins = &pins{g: g, st: st, mode: mode, holding: map[string]bool{}}
	return g.pins.check
}

func (p *pins) check(ctx context.Context, backend string, seen []catalogue.Listed) []catalogue.Verdict {
	sights := make([]store.Sighting, len(seen))
	for i, s := range seen {
		sights[i] = store.Sighting{Kind: s.Kind, Name: s.Name, Fingerprint: s.Fingerprint, Definition: s.Definition}
	}
	out := make([]catalogue.Verdict, len(seen))
	now := time.Now().UTC()
	got, fresh, err := p.st.SightPins(ctx, backend, sights, now)
	enforce := p.mode == config.PinningEnforce
	holding := false
	if err != nil {
		// Unverified is unapproved under enforce.
		p.g.log.Error("catalogue: the pins could not be read; under enforce the backend's tools and prompts are held",
			"backend", backend, "err", err, "pinning", p.mode)
		for i := range out {
			out[i].Hold, holding = enforce, enforce
		}
	}
	for i, pin := range got {
		if seen[i].Fingerprint == pin.Fingerprint {
			continue
		}
		out[i].Hold = enforce
		holding = holding || enforce
		if fresh[i] {
			p.said(backend, seen[i], pin, now)
		}
	}
	p.mu.Lock()
	if holding {
		p.holding[backend] = true
	} else {
		delete(p.holding, backend)
	}
	p.mu.Unlock()
	return out
}

// said raises the alarm for a change seen for the first time.
func (p *pins) said(backend string, s catalogue.Listed, pin store.Pin, at time.Time) {
	held := p.mode == config.PinningEnforce
	p.g.log.Warn("catalogue: a backend changed a definition; it awaits approval (mcpgate catalogue pending)",
		"backend", backend, "kind", s.Kind, "name", s.Name, "held", held, "approved_by", pin.ApprovedBy)
	p.g.metrics.DefinitionChanged(backend, s.Kind)
	if p.g.audit != nil {
		_ = p.g.audit.Record(store.AuditRecord{Time: at, Subject: "catalogue", Kind: s.Kind, Name: s.Name, Backend: backend,
			Outcome: "definition_changed"})
	}
}

// recheck lists again, every pinRecheck until ctx ends, the backends
// holding entries.
func (p *pins) recheck(ctx context.Context) {
	tick.Every(ctx, pinRecheck, func(time.Time) bool {
		p.mu.Lock()
		names := make([]string, 0, len(p.holding))
		for name := range p.holding {
			names = append(names, name)
		}
		p.mu.Unlock()
		for _, name := range names {
			p.g.backends.Resync(name)
		}
		return true
	})
}

// decide approves or rejects a pending change for by, records it in the
// audit log, and lists the backend again so that this replica serves an
// approved entry at once (the others within pinRecheck).
func (p *pins) decide(ctx context.Context, st store.PinStore, backend, kind, name, fingerprint string, approve bool, by mcp.Identity) error {
	var err error
	outcome := "definition_rejected"
	now := time.Now().UTC()
	if approve {
		outcome = "definition_approved"
		err = st.ApprovePin(ctx, backend, kind, name, fingerprint, by.Subject, now)
	} else {
		err = st.RejectPin(ctx, backend, kind, name, fingerprint)
	}
	if err != nil {
		return err
	}
	if p == nil {
		return nil // pinning off here: nothing is held
	}
	if p.g.audit != nil {
		_ = p.g.audit.Record(store.AuditRecord{Time: now, Subject: by.Subject, TokenID: by.TokenID, Role: by.Role,
			Kind: kind, Name: name, Backend: backend, Outcome: outcome})
	}
	p.g.backends.Resync(backend)
	return nil
}
