// sealed.go makes a Streamable HTTP session survive a change of replica,
// with no sticky load balancer and no shared session store. The
// Mcp-Session-Id is the session's state, sealed (AES-256-GCM) with a key
// every replica has. A replica that receives an id it does not hold opens
// it and rebuilds the session, as if it had served the initialize itself:
// the identity it belongs to, the revision, the client's info and
// capabilities. The gateway's shared backends are connected on every
// replica, so the session needs nothing more to reach them.
//
// What does not move: the replay log of a stream (a client resuming with
// Last-Event-ID on another replica gets the stream from now on). Nor does a
// request the server sent the client whose answer lands elsewhere, or a
// logging level set on another replica. A per-client upstream session of a
// stdio backend stays too: a child process belongs to one replica, and the
// resumed session gets a new one there.
//
// A sealed id names its owner by a hash of the identity's key: presented
// with another identity's credential it is refused as an unknown session,
// as an id of this replica's own would be. Its liveness is the Shared
// sessions' when there are some (Redis): ended by DELETE, idle past the
// timeout, the per-identity cap. Without them a sealed id is accepted for
// SealedMaxAge after it was issued, and a DELETE ends it on the replica
// that received it.
//
// Keys rotate: the Sealer seals with its key and opens with it or the
// previous one, so that ids issued before a rotation keep working.

package mcphttp

import (
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// SessionKeySize is the length of a sealing key in bytes (64 hex digits).
const SessionKeySize = 32

// sealedPrefix starts every sealed id: a format version, so that a later
// format can be told apart (and a random id never opened).
const sealedPrefix = "m1."

// maxSealedState bounds the state sealed into an id; a client whose info
// and capabilities do not fit gets a session of this replica's alone.
const maxSealedState = 6 << 10

// sealedAAD binds the ciphertext to its purpose: a key shared with
// something else cannot be made to open our ids, nor the reverse.
var sealedAAD = []byte("mcpgate Mcp-Session-Id v1")

// Sealer seals and opens session ids. It is safe for concurrent use.
type Sealer struct {
	seal cipher.AEAD
	open []cipher.AEAD // the current key first, then the previous
}

// NewSealer seals with key and opens with key or previous (nil: none).
func NewSealer(key, previous []byte) (*Sealer, error) {
	cur, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	s := &Sealer{seal: cur, open: []cipher.AEAD{cur}}
	if previous != nil {
		prev, err := newAEAD(previous)
		if err != nil {
			return nil, fmt.Errorf("previous key: %w", err)
		}
		s.open = append(s.open, prev)
	}
	return s, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != SessionKeySize {
		return nil, fmt.Errorf("a session key is %d bytes, not %d", SessionKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealedState is what an id carries. Short names: it travels in a header
// of every request.
type sealedState struct {
	SID      string          `json:"s"` // the session's own random id (logs, shared counts)
	Owner    string          `json:"o"` // ownerHash of the identity's key
	Budget   string          `json:"b"` // ownerHash of its budget (shared sessions are counted by it)
	Version  string          `json:"v"` // the negotiated revision
	Info     json.RawMessage `json:"i,omitempty"`
	Caps     json.RawMessage `json:"c,omitempty"`
	IssuedAt int64           `json:"t"`           // unix seconds
	Extra    json.RawMessage `json:"x,omitempty"` // SessionExtras.Opened's
}

// SessionExtras are told of sealed sessions, to seal what more a session
// needs on another replica into its id.
type SessionExtras interface {
	// Opened is told of a session initialized here, before its id is
	// sealed; what it returns (nil: nothing) is sealed with it.
	Opened(ctx context.Context, s *mcp.Session) json.RawMessage
	// Resumed is told of a session rebuilt from its sealed id, with what
	// Opened returned on the replica that initialized it.
	Resumed(s *mcp.Session, extra json.RawMessage)
}

// ownerHash names an identity without carrying its key (a token id, a
// subject) in every header; the id is sealed anyway, and this keeps it
// short.
func ownerHash(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// sealID seals st, or reports that it does not fit.
func (s *Sealer) sealID(st sealedState) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	if len(plain) > maxSealedState {
		return "", fmt.Errorf("session state of %d bytes is over %d", len(plain), maxSealedState)
	}
	nonce := make([]byte, s.seal.NonceSize(), s.seal.NonceSize()+len(plain)+s.seal.Overhead())
	_, _ = rand.Read(nonce)
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(s.seal.Seal(nonce, nonce, plain, sealedAAD)), nil
}

// errNotSealed is openID's answer to anything it cannot open: not ours,
// tampered with, sealed with a key no longer accepted.
var errNotSealed = errors.New("not a sealed session id")

// openID opens an id sealed with the current or the previous key.
func (s *Sealer) openID(id string) (sealedState, error) {
	var st sealedState
	rest, ok := strings.CutPrefix(id, sealedPrefix)
	if !ok || len(rest) > 2*maxSealedState {
		return st, errNotSealed
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return st, errNotSealed
	}
	for _, aead := range s.open {
		if len(raw) < aead.NonceSize()+aead.Overhead() {
			return st, errNotSealed
		}
		plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], sealedAAD)
		if err != nil {
			continue
		}
		if err := json.Unmarshal(plain, &st); err != nil || st.SID == "" || st.Version == "" {
			return sealedState{}, errNotSealed
		}
		return st, nil
	}
	return st, errNotSealed
}

// SharedSessions keep what replicas must agree on about sessions: whether
// one is still open, and how many an identity holds. Owners and session
// ids reach it as opaque strings (a hash and a random id).
type SharedSessions interface {
	// Open records session sid of owner, unless owner holds limit open
	// sessions already; sessions unused for idle are not counted.
	Open(ctx context.Context, owner, sid string, limit int, idle time.Duration) (bool, error)
	// Use reports whether sid is open (not ended, not idle past idle) and
	// marks it used now.
	Use(ctx context.Context, owner, sid string, idle time.Duration) (bool, error)
	// End forgets sid: no replica resumes it after.
	End(ctx context.Context, owner, sid string) error
}

// sharedTouchEvery is how often a session in use on this replica tells the
// shared sessions so, and hears whether it ended elsewhere. It is not a
// round trip per request. A session deleted through another replica is
// refused here within a second.
func (h *Handler) sharedTouchEvery() time.Duration { return min(time.Second, h.opts.IdleTimeout/8) }

// resume rebuilds the session a sealed id names, for the caller of r, or
// returns nil (the id is then unknown to the caller: 404).
func (h *Handler) resume(r *http.Request, id string) *httpSession {
	st, err := h.opts.Sealer.openID(id)
	if err != nil {
		return nil
	}
	owner := identityKey(r)
	if st.Owner != ownerHash(owner) {
		return nil
	}
	ctx := r.Context()
	if h.opts.Shared != nil {
		live, err := h.opts.Shared.Use(ctx, cmp.Or(st.Budget, st.Owner), st.SID, h.opts.IdleTimeout)
		if err != nil {
			h.opts.Logger.Warn("shared sessions unreachable: a session of another replica is not resumed", "err", err)
			return nil
		}
		if !live {
			return nil
		}
	} else if time.Since(time.Unix(st.IssuedAt, 0)) > h.opts.SealedMaxAge || h.table.ended(st.SID) {
		return nil
	}
	budget := budgetKey(r)
	if !h.makeRoom(budget) {
		return nil
	}
	hs := &httpSession{id: id, sid: st.SID, owner: owner, budget: budget, events: newEventLog(h.opts.ReplayEvents, h.opts.ReplayBytes)}
	hs.idHeader = []string{id}
	hs.sess = h.server.NewSession(mcp.SessionOptions{ID: st.SID, Out: hs, Identity: identityOf(r),
		Version: st.Version, ClientInfo: st.Info, ClientCapabilities: st.Caps, Transport: "streamable-http"})
	hs.sess.SetResumable()
	hs.touch()
	hs.sharedAt.Store(time.Now().UnixNano())
	if held := h.table.adopt(hs); held != hs { // another request resumed it first
		hs.sess.Close()
		return held
	}
	if h.opts.Extras != nil && len(st.Extra) > 0 {
		h.opts.Extras.Resumed(hs.sess, st.Extra)
	}
	h.opts.Logger.Debug("mcp session resumed from its sealed id", "session", st.SID)
	return hs
}

// seal gives a session just initialized its sealed id, or keeps the random
// one (logged) when its state does not fit.
func (h *Handler) seal(ctx context.Context, hs *httpSession) {
	st := sealedState{SID: hs.sid, Owner: ownerHash(hs.owner), Budget: ownerHash(hs.budget), Version: hs.sess.Version(),
		Info: hs.sess.ClientInfo(), Caps: hs.sess.ClientCapabilities(), IssuedAt: time.Now().Unix()}
	if h.opts.Extras != nil {
		st.Extra = h.opts.Extras.Opened(ctx, hs.sess)
	}
	id, err := h.opts.Sealer.sealID(st)
	if err != nil {
		h.opts.Logger.Warn("mcp session not sealed: it lives on this replica only", "session", hs.sid, "err", err)
		return
	}
	hs.id, hs.idHeader = id, []string{id}
	hs.sess.SetResumable()
}

// touchShared tells the shared sessions that hs is in use, at most every
// sharedTouchEvery; it reports false when they say hs has ended (on
// another replica, by DELETE or idleness).
func (h *Handler) touchShared(ctx context.Context, hs *httpSession) bool {
	if h.opts.Shared == nil || !hs.sealed() {
		return true
	}
	now := time.Now().UnixNano()
	last := hs.sharedAt.Load()
	if time.Duration(now-last) < h.sharedTouchEvery() || !hs.sharedAt.CompareAndSwap(last, now) {
		return true
	}
	live, err := h.opts.Shared.Use(ctx, ownerHash(hs.budget), hs.sid, h.opts.IdleTimeout)
	if err != nil {
		return true // the shared store's outage ends nobody's session
	}
	return live
}
