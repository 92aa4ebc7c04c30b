// seen.go keeps what a Sync worked out of each definition a backend
// listed — its fingerprint (pin.go), its scan for text aimed at the model
// (flag) — while the backend lists the same bytes. A backend of a
// thousand tools resynced without a change so decodes none of them again.

package catalogue

import "encoding/json"

// seenDef is what was worked out of one definition, as raw.
type seenDef struct {
	raw         string
	fingerprint string // "": not worked out yet
	scanned     bool   // flag has looked at it
}

// seenOf is what was worked out of k's entry name as listed now (raw),
// carried into the Sync under way. b.mu is held.
func (b *Mirror) seenOf(k kind, name string, raw json.RawMessage) *seenDef {
	key := string(k) + "/" + name
	d := b.seenNext[key] // this Sync's, else the last one's
	if d == nil {
		d = b.seen[key]
	}
	if d == nil || d.raw != string(raw) {
		d = &seenDef{raw: string(raw)}
	}
	if b.seenNext != nil {
		b.seenNext[key] = d
	} else {
		b.seen[key] = d
	}
	return d
}

// fingerprintOf is fingerprint(k, raw), worked out once while raw is what
// the backend lists. b.mu is held.
func (b *Mirror) fingerprintOf(k kind, name string, raw json.RawMessage) string {
	d := b.seenOf(k, name, raw)
	if d.fingerprint == "" {
		d.fingerprint = fingerprint(k, raw)
	}
	return d.fingerprint
}
