package hub

import (
	"context"
	"slices"
	"time"
)

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
	// ActivePerson reports whether a person whose token was not revoked
	// holds name: routing reads it for every name a post gives, so a
	// store should answer it from memory where it can (SQLite's writer
	// does).
	ActivePerson(name string) (bool, error)
	// People returns every person by name.
	People() ([]*Person, error)
	// RevokePerson forgets the person's token hash and sets RevokedAt.
	// ENOTFOUND.
	RevokePerson(name string, at time.Time) error
}

// peopleTx is what the people's service reads and writes in one
// transaction.
type peopleTx interface {
	// AgentTx
	AgentByName(name string) (*Agent, error)
	// ChangesTx
	Recording() *Changes
	// PersonTx
	InsertPerson(p *Person, tokenHash []byte) error
	People() ([]*Person, error)
	PersonByName(name string) (*Person, error)
	PersonByTokenHash(hash []byte) (*Person, error)
	RevokePerson(name string, at time.Time) error
	// ProjectTx
	ProjectExists(name string) (bool, error)
}

// People is the service of people and their tokens.
type People struct {
	*core
	store txs[peopleTx] // the store methods it uses
}

// NewPeople returns the people's service.
func NewPeople(c *Core) *People { return &People{core: c.core, store: txsOf[peopleTx](c.store)} }

// CreatePerson names a person who may act in projects (none: every
// project) and returns its token, shown once. Errors: EINVALID (name, a
// project's name), ENOTFOUND (no such project), ECONFLICT (a person or an
// agent has the name).
func (p *People) CreatePerson(ctx context.Context, name string, projects []string) (*Person, string, error) {
	if name == Operator {
		return nil, "", Errorf(EINVALID, "person name %q is the admin token's: choose another name", name)
	}
	if err := ValidateNewAgentName(name); err != nil {
		return nil, "", Errorf(EINVALID, "person name: %s", ErrorMessage(err))
	}
	for _, pr := range projects {
		if err := ValidateProjectName(pr); err != nil {
			return nil, "", err
		}
	}
	tok, _ := NewToken()
	tok = personTokenPrefix + tok[len(tokenPrefix):]
	per := &Person{Name: name, CreatedAt: p.clock.Now(), Projects: slices.Compact(slices.Sorted(slices.Values(projects)))}
	err := update(ctx, p.store, func(tx peopleTx) error {
		if err := claimName(tx, name); err != nil {
			return err
		}
		for _, pr := range per.Projects {
			if err := requireProject(tx, pr); err != nil {
				return err
			}
		}
		return tx.InsertPerson(per, HashToken(tok))
	})
	if err != nil {
		return nil, "", err
	}
	return per, tok, nil
}

// ListPeople returns every person by name.
func (p *People) ListPeople(ctx context.Context) ([]*Person, error) {
	var out []*Person
	err := view(ctx, p.store, func(tx peopleTx) (err error) {
		out, err = tx.People()
		return err
	})
	return out, err
}

// RevokePerson revokes the person's token: its calls are refused from
// now on; what it answered stays. Errors: ENOTFOUND.
func (p *People) RevokePerson(ctx context.Context, name string) error {
	return update(ctx, p.store, func(tx peopleTx) error {
		if err := tx.RevokePerson(name, p.clock.Now()); err != nil {
			return err
		}
		tx.Recording().PersonRevoked(name) // the person's streams end at the commit (park.go)
		return nil
	})
}

// PersonRevoked ends the open change streams of the person named name,
// revoked on another replica sharing the database, through the commit's
// wake-ups as this process's own revocations (wake.go).
func (p *People) PersonRevoked(name string) {
	var ch Changes
	ch.PersonRevoked(name)
	p.wake(&ch)
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
	err := view(rctx, p.store, func(tx peopleTx) (err error) {
		per, err = tx.PersonByTokenHash(HashToken(token))
		return err
	})
	if ErrorCode(err) == ENOTFOUND || err == nil && per.Revoked() {
		return nil, Errorf(EUNAUTHORIZED, "unknown or revoked person token")
	}
	return per, err
}

// activePersonTx reads whether a name is an active person's.
type activePersonTx interface {
	ActivePerson(name string) (bool, error)
}

// isPerson reports whether name is a person's (the operator's included),
// for routing a message to people.
func isPerson(tx activePersonTx, name string) (bool, error) {
	if name == Operator {
		return true, nil
	}
	return tx.ActivePerson(name)
}
