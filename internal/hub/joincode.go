package hub

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"time"
)

// JoinCode lets agents register themselves: an admin creates it with an
// expiry, a number of uses and the role the agents it registers get, and
// hands its code (shown once; only its hash is stored) to the agents'
// hosts. Each use registers one agent and returns that agent's token.
type JoinCode struct {
	ID        int64
	Role      string // role of every agent registered with the code
	Project   string // project of every agent registered with the code
	Note      string // what the code is for, for the admin
	MaxUses   int64
	Uses      int64
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt time.Time // zero while not revoked
}

// JoinCodeState is what a join code can do at a given time.
type JoinCodeState string

// The states of a join code, in the order they are checked.
const (
	JoinCodeRevoked JoinCodeState = "revoked"
	JoinCodeExpired JoinCodeState = "expired"
	JoinCodeUsedUp  JoinCodeState = "used_up"
	JoinCodeActive  JoinCodeState = "active"
)

// State returns the code's state at now: revoked wins over expired, which
// wins over used up.
func (c *JoinCode) State(now time.Time) JoinCodeState {
	switch {
	case !c.RevokedAt.IsZero():
		return JoinCodeRevoked
	case !now.Before(c.ExpiresAt):
		return JoinCodeExpired
	case c.Uses >= c.MaxUses:
		return JoinCodeUsedUp
	}
	return JoinCodeActive
}

// Refusal returns nil when the code can register an agent at now, else the
// error saying why not. Whoever presents a code that exists learns its
// state: the code is a secret an admin handed out, so its holder is told
// plainly what to ask for; a guessed code is only ever "unknown"
// (errUnknownJoinCode).
func (c *JoinCode) Refusal(now time.Time) error {
	switch c.State(now) {
	case JoinCodeRevoked:
		return Errorf(EPERMISSION, "join code %d was revoked at %s: ask an admin for a new one (`hubctl join-codes create`)", c.ID, c.RevokedAt.UTC().Format(time.RFC3339))
	case JoinCodeExpired:
		return Errorf(EPRECONDITION, "join code %d expired at %s: ask an admin for a new one (`hubctl join-codes create`)", c.ID, c.ExpiresAt.UTC().Format(time.RFC3339))
	case JoinCodeUsedUp:
		return Errorf(EPRECONDITION, "join code %d is used up: all %d of its uses registered agents; ask an admin for a new one (`hubctl join-codes create --max-uses N`)", c.ID, c.MaxUses)
	}
	return nil
}

func errUnknownJoinCode() error {
	return Errorf(EUNAUTHORIZED, "unknown join code: check the code an admin gave you (it starts with %q; `hubctl join-codes list` shows the codes that exist)", joinCodePrefix)
}

// Bounds of a join code.
const (
	JoinCodeMaxUses    = 10000
	JoinCodeMaxExpiry  = 366 * 24 * time.Hour
	joinCodeMinExpiry  = time.Minute
	joinCodeDefaultTTL = 24 * time.Hour
	joinCodePrefix     = "ahj_"
	joinCodeRandBytes  = 24
)

// joinCodeLen is the length of every join code: the prefix and 24 random
// bytes in unpadded base64url.
var joinCodeLen = len(joinCodePrefix) + base64.RawURLEncoding.EncodedLen(joinCodeRandBytes)

// LooksLikeJoinCode reports whether s has the shape of a join code (prefix
// and length), so a call carrying anything else is refused without a
// store read.
func LooksLikeJoinCode(s string) bool {
	return len(s) == joinCodeLen && strings.HasPrefix(s, joinCodePrefix)
}

// newJoinCode returns a fresh 192-bit random join code and its hash (the
// same SHA-256 as tokens: the code is random, not a password).
func newJoinCode() (code string, hash []byte) {
	var b [joinCodeRandBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	code = joinCodePrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return code, HashToken(code)
}
