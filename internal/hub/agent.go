package hub

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"
)

// Names of the senders that are not agents.
const (
	SenderAdmin        = "admin"
	SenderOrchestrator = "orchestrator"
)

// maxNameLen is the longest agent, project or channel name (without '#').
const maxNameLen = 63

// isName reports whether s is an agent name (SPEC §2), which is also the
// pattern of project names and, after '#', of channel names:
// ^[a-z0-9][a-z0-9._-]{0,62}$. Written out rather than as a regexp: it is
// checked for every recipient of every post.
func isName(s string) bool {
	if s == "" || len(s) > maxNameLen || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

// isNameStart reports whether c may begin a name: [a-z0-9].
func isNameStart(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// isNameByte reports whether c may appear in a name: [a-z0-9._-].
func isNameByte(c byte) bool { return isNameStart(c) || c == '.' || c == '_' || c == '-' }

// Agent is a registered agent. Its token is never part of it: only the
// token's hash is stored, in the store's own column.
type Agent struct {
	ID          int64
	Name        string
	DisplayName string
	Role        string
	Description string
	// Project is the project the agent belongs to (DefaultProject unless
	// the admin chose another when creating it); its token acts only there.
	Project string
	// Locale overrides the hub's message language for this agent ("" = hub default).
	Locale     string
	CreatedAt  time.Time
	DisabledAt time.Time // zero while enabled

	// CurrentHeartbeatID names the agent's current unit of work and
	// HeartbeatStartedAt is the instant it encodes.
	CurrentHeartbeatID string
	HeartbeatStartedAt time.Time

	// ReadUpTo is the agent's read cursor: every message with an ID ≤ ReadUpTo is read.
	ReadUpTo int64

	// LastSeenAt and LastInteractionBeat are flushed from the in-memory
	// presence tracker by the orchestrator; see Presence.
	LastSeenAt          time.Time
	LastInteractionBeat int64
	// SessionEndedAt is when its session last ended cleanly (EndSession):
	// it is offline from then until its next call.
	SessionEndedAt time.Time
	// RetiredAt is set while the agent is retired: offline past the
	// retirement age with nothing held (retire.go). Its next call brings
	// it back.
	RetiredAt time.Time

	// authEpoch is the waiters' revocation epoch when this agent's token was
	// checked (Authenticate): a wait started with it ends if the token is
	// revoked afterwards.
	authEpoch uint64
	// authHash is the hash of the token Authenticate checked: a wait keeps
	// it, so that the hub can check the token again (RecheckWaits).
	authHash []byte
}

// Addressee is what routing a message reads of an agent it names: who it
// is, the project it belongs to and whether it is disabled
// (AgentTx.AddresseeByName).
type Addressee struct {
	ID       int64
	Name     string
	Project  string
	Disabled bool
}

// Disabled reports whether the agent is disabled.
func (a *Agent) Disabled() bool { return !a.DisabledAt.IsZero() }

// ValidateAgentName returns EINVALID unless name is a valid agent name.
func ValidateAgentName(name string) error {
	if name == "" {
		return Errorf(EINVALID, "agent name is required: 1-63 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
	}
	if !isName(name) {
		return Errorf(EINVALID, "agent name %q is invalid: expected 1-63 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit (pattern ^[a-z0-9][a-z0-9._-]{0,62}$)", name)
	}
	if name == SenderAdmin || name == SenderOrchestrator {
		return Errorf(EINVALID, "agent name %q is reserved for the hub's own messages; choose another name", name)
	}
	return nil
}

// reservedNames are names no new agent may take: they read as the hub,
// the system or the people around it (@operator is the person holding the
// admin token), so an agent named so could pass for one of them.
var reservedNames = map[string]bool{
	"hub": true, "system": true, "root": true, "user": true, "operator": true, "admin": true,
	"administrator": true, "orchestrator": true, "everyone": true, "all": true, "here": true,
}

// ValidateNewAgentName returns EINVALID unless a new agent may be named
// name: a valid name (ValidateAgentName) that is not reserved.
func ValidateNewAgentName(name string) error {
	if err := ValidateAgentName(name); err != nil {
		return err
	}
	if reservedNames[name] {
		return Errorf(EINVALID, "agent name %q is reserved: it names the hub or the people using it; choose another name", name)
	}
	return nil
}

// validateAgentText checks the free-text fields of an agent.
func validateAgentText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s must be valid UTF-8", field)
	}
	if len(s) > max {
		return Errorf(EINVALID, "%s is %d bytes long; the limit is %d bytes", field, len(s), max)
	}
	return nil
}

// Token prefix: makes a leaked token recognisable (secret scanners, logs).
const tokenPrefix = "ahk_"

// NewToken returns a fresh 256-bit random bearer token and its hash.
func NewToken() (token string, hash []byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	token = tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token)
}

// HashToken returns the stored form of a token (SHA-256: tokens are 256-bit
// random, so a fast hash is enough; no password stretching is needed).
func HashToken(token string) []byte {
	// The token's bytes are copied on the stack (a token is 47 bytes): every
	// call the hub admits hashes its token.
	var buf [64]byte
	sum := sha256.Sum256(append(buf[:0], strings.TrimSpace(token)...))
	return sum[:]
}

// TokenHashEqual compares two token hashes in constant time.
func TokenHashEqual(a, b []byte) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare(a, b) == 1
}

// AgentChange is what changed about an agent's token or state: recorded by
// a write for its commit (Changes.AgentChanged), or reported by another hub
// process sharing the store (Agents.AgentChanged).
type AgentChange uint8

// The changes of an agent's token or state.
const (
	TokenChanged  AgentChange = iota + 1 // the token was rotated or revoked
	AgentDisabled                        // the agent was disabled
	AgentEnabled                         // the agent was enabled again
	AgentDeleted                         // the agent was deleted
)
