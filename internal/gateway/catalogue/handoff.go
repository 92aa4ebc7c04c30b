// handoff.go carries a 2026-07-28 caller's retry to the replica where its
// call is parked. The call to a 2025-era backend waits there, on the
// backend's connection, for the caller's answer (park.go). A load
// balancer may send the retry to any replica: that one hands it over
// (ParkHandOff, Redis), the replica holding the park resumes the call,
// and the answer comes back the same way. The retry was admitted, gated
// and audited where it arrived; where it is resumed it is not again.

package catalogue

import (
	"context"
	"encoding/json"
)

// ParkedRetry is a caller's retry of a parked call, with what the replica
// holding the park needs to resume it.
type ParkedRetry struct {
	Backend      string          `json:"backend"`
	Park         string          `json:"park"`      // the park's id, its replica's name first
	Principal    string          `json:"principal"` // the caller (mcp.Identity.Key): the park is theirs alone
	Method       string          `json:"method"`
	Entry        string          `json:"entry"`
	Params       json.RawMessage `json:"params"`       // the retry's: inputResponses is read
	Capabilities json.RawMessage `json:"capabilities"` // the caller's, for what the backend asks next
}

// ParkHandOff carries retries between the replicas of a gateway.
type ParkHandOff interface {
	// Replica is this replica's name in the parks it makes, or "" while
	// no retry could be handed to it.
	Replica() string
	// Resume hands retry to replica, and is that replica's answer. A
	// replica that does not listen (gone, restarted) is the answer to a
	// park unknown.
	Resume(ctx context.Context, replica string, retry ParkedRetry) (json.RawMessage, error)
}

// ShareParks lets retries of calls parked here come through any replica,
// and those of other replicas' parks go to them: set before any backend
// relays.
func (c *Claims) ShareParks(h ParkHandOff) { c.parkHandOff = h }

// ResumeParked resumes a call parked here with a retry another replica
// handed over.
func (c *Claims) ResumeParked(ctx context.Context, retry ParkedRetry) (json.RawMessage, error) {
	c.mu.Lock()
	b := c.live[retry.Backend]
	c.mu.Unlock()
	if b == nil {
		return nil, ErrParkUnknown
	}
	return b.resume(ctx, nil, retry)
}
