package hub

import "time"

// People take part in the hub beside agents (SPEC §13): the operator,
// who holds the admin token, and the people the admin names, each with a
// person token. A person token may answer the inbox and post messages in
// its person's name; it may not administer the hub.

// Operator is the name the admin token's answers and messages carry.
const Operator = "operator"

// personTokenPrefix makes a leaked person token recognisable.
const personTokenPrefix = "ahp_"

// Person is a named person with a token.
type Person struct {
	ID        int64
	Name      string
	CreatedAt time.Time
	RevokedAt time.Time // zero while the token works
}

// Revoked reports whether the person's token was revoked.
func (p *Person) Revoked() bool { return !p.RevokedAt.IsZero() }
