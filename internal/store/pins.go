// pins.go keeps the catalogue's pins (issue 28): for each tool and prompt
// of each backend, the fingerprint of the definition approved, who
// approved it and when, and a changed definition awaiting approval. Every
// store keeps them the same way, through PinSQL.

package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// FirstSight is who approved a definition pinned the first time the
// gateway saw it (trust on first use).
const FirstSight = "first sight"

// Pin is one entry's approved definition, and a changed one awaiting
// approval.
type Pin struct {
	Backend, Kind, Name string // Name is the backend's own
	Fingerprint         string // of the approved definition
	Definition          json.RawMessage
	ApprovedBy          string // FirstSight, or who approved it
	ApprovedAt          time.Time
	// Pending is the fingerprint of a changed definition awaiting
	// approval ("" for none), PendingDefinition the definition.
	Pending           string
	PendingDefinition json.RawMessage
	PendingSince      time.Time
	// Rejected is the fingerprint of a changed definition an admin
	// rejected: it stays held, and is no longer pending.
	Rejected string
}

// Sighting is one entry as a backend lists it now.
type Sighting struct {
	Kind, Name  string
	Fingerprint string
	Definition  json.RawMessage
}

// PinStore keeps pins.
type PinStore interface {
	// SightPins records what backend lists now, in one transaction: an
	// entry never seen is pinned (approved by FirstSight); a changed one
	// becomes pending unless rejected. It returns each sighting's pin
	// after, and which of them became pending now.
	SightPins(ctx context.Context, backend string, seen []Sighting, at time.Time) (pins []Pin, fresh []bool, err error)
	// PendingPins are the pins awaiting approval, oldest first.
	PendingPins(ctx context.Context) ([]Pin, error)
	// PinOf is one entry's pin; ErrNotFound for an entry never seen.
	PinOf(ctx context.Context, backend, kind, name string) (Pin, error)
	// ApprovePin approves the pending definition whose fingerprint is
	// given; RejectPin rejects it. ErrNotFound when it is not pending.
	ApprovePin(ctx context.Context, backend, kind, name, fingerprint, by string, at time.Time) error
	RejectPin(ctx context.Context, backend, kind, name, fingerprint string) error
}

// PinSQL implements PinStore over a store's transactions (the same as
// OAuthSQL's: ? placeholders, numbered by the PostgreSQL store's SQLTx).
type PinSQL struct {
	Tx func(ctx context.Context, fn func(SQLTx) error) error
}

const pinColumns = "backend, kind, name, fingerprint, definition, approved_by, approved_at, pending, pending_definition, pending_since, rejected"

func scanPin(r Row) (Pin, error) {
	var pin Pin
	var def, pdef string
	var at, since int64
	if err := r.Scan(&pin.Backend, &pin.Kind, &pin.Name, &pin.Fingerprint, &def, &pin.ApprovedBy, &at,
		&pin.Pending, &pdef, &since, &pin.Rejected); err != nil {
		return Pin{}, err
	}
	pin.Definition, pin.ApprovedAt, pin.PendingSince = json.RawMessage(def), DecodeTime(at), DecodeTime(since)
	if pdef != "" {
		pin.PendingDefinition = json.RawMessage(pdef)
	}
	return pin, nil
}

// SightPins is PinStore's.
func (p PinSQL) SightPins(ctx context.Context, backend string, seen []Sighting, at time.Time) ([]Pin, []bool, error) {
	pins, fresh := make([]Pin, len(seen)), make([]bool, len(seen))
	err := p.Tx(ctx, func(tx SQLTx) error {
		// The backend's pins in one query: a sync of a large catalogue
		// costs one round trip, and a write only for what is new or
		// changed.
		kept, err := p.pinsOf(ctx, tx, backend)
		if err != nil {
			return err
		}
		for i, s := range seen {
			pin, ok := kept[s.Kind+"\x00"+s.Name]
			if !ok {
				// First sight, unless a replica pinned it meanwhile: then
				// its pin is the one to compare with.
				pin = Pin{Backend: backend, Kind: s.Kind, Name: s.Name, Fingerprint: s.Fingerprint, Definition: s.Definition,
					ApprovedBy: FirstSight, ApprovedAt: at}
				n, err := tx.Exec(ctx, "INSERT INTO catalogue_pins ("+pinColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, '', '', 0, '')"+
					" ON CONFLICT (backend, kind, name) DO NOTHING",
					backend, s.Kind, s.Name, s.Fingerprint, string(s.Definition), FirstSight, EncodeTime(at))
				if err != nil {
					return err
				}
				if n == 0 {
					if pin, err = p.pinOf(ctx, tx, backend, s.Kind, s.Name); err != nil {
						return err
					}
				}
			}
			switch {
			case s.Fingerprint == pin.Fingerprint || s.Fingerprint == pin.Pending || s.Fingerprint == pin.Rejected:
				// As approved, or a change already known.
			default:
				pin.Pending, pin.PendingDefinition, pin.PendingSince, fresh[i] = s.Fingerprint, s.Definition, at, true
				if _, err := tx.Exec(ctx, "UPDATE catalogue_pins SET pending = ?, pending_definition = ?, pending_since = ? WHERE backend = ? AND kind = ? AND name = ?",
					s.Fingerprint, string(s.Definition), EncodeTime(at), backend, s.Kind, s.Name); err != nil {
					return err
				}
			}
			pins[i] = pin
			kept[s.Kind+"\x00"+s.Name] = pin // an entry listed twice is one
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("pins of %s: %w", backend, err)
	}
	return pins, fresh, nil
}

// queryPins are the pins the query after "SELECT columns FROM
// catalogue_pins" selects.
func queryPins(ctx context.Context, tx SQLTx, where string, args ...any) ([]Pin, error) {
	rows, done, err := tx.Query(ctx, "SELECT "+pinColumns+" FROM catalogue_pins "+where, args...)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []Pin
	for rows.Next() {
		pin, err := scanPin(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, pin)
	}
	return out, rows.Err()
}

// pinsOf are backend's pins, by kind and name.
func (p PinSQL) pinsOf(ctx context.Context, tx SQLTx, backend string) (map[string]Pin, error) {
	pins, err := queryPins(ctx, tx, "WHERE backend = ?", backend)
	out := make(map[string]Pin, len(pins))
	for _, pin := range pins {
		out[pin.Kind+"\x00"+pin.Name] = pin
	}
	return out, err
}

// PendingPins is PinStore's.
func (p PinSQL) PendingPins(ctx context.Context) ([]Pin, error) {
	var out []Pin
	err := p.Tx(ctx, func(tx SQLTx) error {
		var err error
		out, err = queryPins(ctx, tx, "WHERE pending <> '' ORDER BY pending_since, backend, kind, name")
		return err
	})
	return out, err
}

// PinOf is PinStore's.
func (p PinSQL) PinOf(ctx context.Context, backend, kind, name string) (Pin, error) {
	var pin Pin
	err := p.Tx(ctx, func(tx SQLTx) error {
		var err error
		pin, err = p.pinOf(ctx, tx, backend, kind, name)
		return err
	})
	return pin, err
}

// pinOf is one pin, read in tx; ErrNotFound for none.
func (p PinSQL) pinOf(ctx context.Context, tx SQLTx, backend, kind, name string) (Pin, error) {
	return scanPin(tx.QueryRow(ctx, "SELECT "+pinColumns+" FROM catalogue_pins WHERE backend = ? AND kind = ? AND name = ?", backend, kind, name))
}

// ApprovePin is PinStore's.
func (p PinSQL) ApprovePin(ctx context.Context, backend, kind, name, fingerprint, by string, at time.Time) error {
	return p.Tx(ctx, func(tx SQLTx) error {
		n, err := tx.Exec(ctx, `UPDATE catalogue_pins SET fingerprint = pending, definition = pending_definition,
			approved_by = ?, approved_at = ?, pending = '', pending_definition = '', pending_since = 0, rejected = ''
			WHERE backend = ? AND kind = ? AND name = ? AND pending = ? AND pending <> ''`,
			by, EncodeTime(at), backend, kind, name, fingerprint)
		if err == nil && n == 0 {
			err = ErrNotFound
		}
		return err
	})
}

// RejectPin is PinStore's.
func (p PinSQL) RejectPin(ctx context.Context, backend, kind, name, fingerprint string) error {
	return p.Tx(ctx, func(tx SQLTx) error {
		n, err := tx.Exec(ctx, `UPDATE catalogue_pins SET rejected = pending, pending = '', pending_definition = '', pending_since = 0
			WHERE backend = ? AND kind = ? AND name = ? AND pending = ? AND pending <> ''`,
			backend, kind, name, fingerprint)
		if err == nil && n == 0 {
			err = ErrNotFound
		}
		return err
	})
}
