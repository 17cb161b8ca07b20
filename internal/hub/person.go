package hub

import (
	"context"
	"time"
)

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

// PersonTx stores people and the hashes of their tokens.
type PersonTx interface {
	// InsertPerson inserts p with its token's hash and sets p.ID.
	// ECONFLICT if the name is taken.
	InsertPerson(p *Person, tokenHash []byte) error
	// PersonByName returns the person named name. ENOTFOUND.
	PersonByName(name string) (*Person, error)
	// PersonByTokenHash returns the person holding the token, revoked or
	// not. ENOTFOUND.
	PersonByTokenHash(hash []byte) (*Person, error)
	// ListPeople returns every person by name.
	ListPeople() ([]*Person, error)
	// RevokePerson forgets the person's token hash and sets RevokedAt.
	// ENOTFOUND.
	RevokePerson(name string, at time.Time) error
}

// People is the service of people and their tokens.
type People struct {
	store Store
	clock Clock
}

// NewPeople returns the people service over store.
func NewPeople(store Store, clock Clock) *People {
	return &People{store: store, clock: clock}
}

// CreatePerson names a person and returns its token, shown once. Errors:
// EINVALID (name), ECONFLICT (a person or an agent has it).
func (p *People) CreatePerson(ctx context.Context, name string) (*Person, string, error) {
	if name == Operator {
		return nil, "", Errorf(EINVALID, "person name %q is the admin token's: choose another name", name)
	}
	if err := ValidateNewAgentName(name); err != nil {
		return nil, "", Errorf(EINVALID, "person name: %s", ErrorMessage(err))
	}
	tok, _ := NewToken()
	tok = personTokenPrefix + tok[len(tokenPrefix):]
	per := &Person{Name: name, CreatedAt: p.clock.Now()}
	err := p.store.Update(ctx, func(tx Tx) error {
		if _, err := tx.AgentByName(name); err == nil {
			return Errorf(ECONFLICT, "%q is an agent's name: a person needs a name of their own, so that messages to them reach them", name)
		} else if ErrorCode(err) != ENOTFOUND {
			return err
		}
		err := tx.InsertPerson(per, HashToken(tok))
		if ErrorCode(err) == ECONFLICT {
			return Errorf(ECONFLICT, "a person named %q exists: `hubctl people list` shows them", name)
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return per, tok, nil
}

// ListPeople returns every person by name.
func (p *People) ListPeople(ctx context.Context) ([]*Person, error) {
	var out []*Person
	err := p.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListPeople()
		return err
	})
	return out, err
}

// RevokePerson revokes the person's token: its calls are refused from
// now on; what it answered stays. Errors: ENOTFOUND.
func (p *People) RevokePerson(ctx context.Context, name string) error {
	return p.store.Update(ctx, func(tx Tx) error { return tx.RevokePerson(name, p.clock.Now()) })
}

// AuthenticatePerson returns the person holding token. Errors:
// EUNAUTHORIZED (no such token, or revoked), or the store's.
func (p *People) AuthenticatePerson(ctx context.Context, token string) (*Person, error) {
	if len(token) < len(personTokenPrefix) || token[:len(personTokenPrefix)] != personTokenPrefix {
		return nil, Errorf(EUNAUTHORIZED, "not a person token")
	}
	var per *Person
	rctx, cancel := detachedRead(ctx)
	defer cancel()
	err := p.store.View(rctx, func(tx Tx) (err error) {
		per, err = tx.PersonByTokenHash(HashToken(token))
		return err
	})
	if ErrorCode(err) == ENOTFOUND || err == nil && per.Revoked() {
		return nil, Errorf(EUNAUTHORIZED, "unknown or revoked person token")
	}
	return per, err
}

// isPerson reports whether name is a person's (the operator's included),
// for routing a message to people.
func isPerson(tx PersonTx, name string) (bool, error) {
	if name == Operator {
		return true, nil
	}
	p, err := tx.PersonByName(name)
	if ErrorCode(err) == ENOTFOUND {
		return false, nil
	}
	return err == nil && !p.Revoked(), err
}
