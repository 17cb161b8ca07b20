package hub

import (
	"context"
	"fmt"
	"time"
)

// Event kinds of join codes: the admin's creations and revocations
// (hub-wide) and each use (the registered agent's).
const (
	EventJoinCodeCreated EventKind = "join_code_created"
	EventJoinCodeRevoked EventKind = "join_code_revoked"
	EventJoined          EventKind = "joined"
)

// JoinCodeTx stores join codes. Only the code's hash is stored.
type JoinCodeTx interface {
	// InsertJoinCode inserts c and sets c.ID. ECONFLICT if the hash is taken.
	InsertJoinCode(c *JoinCode, hash []byte) error
	// JoinCodeByHash returns the code with that hash. ENOTFOUND.
	JoinCodeByHash(hash []byte) (*JoinCode, error)
	// JoinCodeByID returns the code with that ID. ENOTFOUND.
	JoinCodeByID(id int64) (*JoinCode, error)
	// JoinCodes returns every code, newest first.
	JoinCodes() ([]*JoinCode, error)
	// UseJoinCode counts one use of code id if, at now, it is neither
	// revoked nor expired nor used up, in one conditional write: of two
	// transactions racing for its last use, exactly one gets true.
	UseJoinCode(id int64, now time.Time) (bool, error)
	// RevokeJoinCode sets the code's revocation time unless it is already
	// revoked. ENOTFOUND.
	RevokeJoinCode(id int64, at time.Time) error
}

// CreateJoinCodeRequest is the input of CreateJoinCode. Zero ExpiresIn
// and MaxUses take the defaults (24 hours, one use).
type CreateJoinCodeRequest struct {
	Role, Note string
	Project    string // of the agents it registers; DefaultProject if empty
	ExpiresIn  time.Duration
	MaxUses    int64
}

// CreateJoinCode creates a join code and returns it with its code, shown
// once. The role is what CreateAgent accepts as a role (free text, at most
// 200 bytes): every agent the code registers gets it, and is put in the
// code's project. Errors: EINVALID, ENOTFOUND (no such project).
func (s *Agents) CreateJoinCode(ctx context.Context, req CreateJoinCodeRequest) (*JoinCode, string, error) {
	if req.ExpiresIn == 0 {
		req.ExpiresIn = joinCodeDefaultTTL
	}
	if req.MaxUses == 0 {
		req.MaxUses = 1
	}
	if req.ExpiresIn < joinCodeMinExpiry || req.ExpiresIn > JoinCodeMaxExpiry {
		return nil, "", Errorf(EINVALID, "expiry %v is out of range: give 1m to %v (default 24h)", req.ExpiresIn, JoinCodeMaxExpiry)
	}
	if req.MaxUses < 1 || req.MaxUses > JoinCodeMaxUses {
		return nil, "", Errorf(EINVALID, "max_uses %d is out of range: give 1 to %d (default 1)", req.MaxUses, JoinCodeMaxUses)
	}
	if err := validateAgentText("role", req.Role, 200); err != nil {
		return nil, "", err
	}
	if err := validateAgentText("note", req.Note, 200); err != nil {
		return nil, "", err
	}
	if err := checkLine("role", req.Role); err != nil {
		return nil, "", err
	}
	if err := checkLine("note", req.Note); err != nil {
		return nil, "", err
	}
	req.Project = ProjectOr(req.Project)
	if err := ValidateProjectName(req.Project); err != nil {
		return nil, "", err
	}
	now := s.clock.Now()
	code, hash := newJoinCode()
	c := &JoinCode{Role: req.Role, Project: req.Project, Note: req.Note, MaxUses: req.MaxUses, CreatedAt: now, ExpiresAt: now.Add(req.ExpiresIn)}
	err := update(ctx, s.store, func(tx agentsTx) error {
		if err := requireProject(tx, c.Project); err != nil {
			return err
		}
		if err := tx.InsertJoinCode(c, hash); err != nil {
			return err
		}
		return recordEvent(tx, 0, EventJoinCodeCreated, fmt.Sprintf("join code %d created: role %q, %d uses, expires %s",
			c.ID, c.Role, c.MaxUses, c.ExpiresAt.UTC().Format(time.RFC3339)), now)
	})
	if err != nil {
		return nil, "", err
	}
	return c, code, nil
}

// ListJoinCodes returns every join code, newest first.
func (s *Agents) ListJoinCodes(ctx context.Context) ([]*JoinCode, error) {
	var cs []*JoinCode
	err := view(ctx, s.store, func(tx agentsTx) (err error) {
		cs, err = tx.JoinCodes()
		return err
	})
	return cs, err
}

// RevokeJoinCode revokes a join code: it registers no agent from now on
// (the agents it registered keep their tokens). Revoking a revoked code
// changes nothing. Errors: EINVALID, ENOTFOUND.
func (s *Agents) RevokeJoinCode(ctx context.Context, id int64) (*JoinCode, error) {
	if id <= 0 {
		return nil, Errorf(EINVALID, "join code ID %d is invalid: give the ID `hubctl join-codes list` shows", id)
	}
	now := s.clock.Now()
	var c *JoinCode
	err := update(ctx, s.store, func(tx agentsTx) (err error) {
		if c, err = tx.JoinCodeByID(id); err != nil {
			return err
		}
		if !c.RevokedAt.IsZero() {
			return nil
		}
		if err := tx.RevokeJoinCode(id, now); err != nil {
			return err
		}
		c.RevokedAt = now
		return recordEvent(tx, 0, EventJoinCodeRevoked, fmt.Sprintf("join code %d revoked after %d of %d uses", c.ID, c.Uses, c.MaxUses), now)
	})
	return c, err
}

// CheckJoinCode is the cheap check of a join call made from its headers,
// before its body is read: nil when code exists and can register an agent
// now, else why not (EUNAUTHORIZED for a code of the wrong shape or
// unknown, see JoinCode.Refusal for the others). One indexed read at most.
func (s *Agents) CheckJoinCode(ctx context.Context, code string) error {
	if !LooksLikeJoinCode(code) {
		return errUnknownJoinCode()
	}
	var c *JoinCode
	err := view(ctx, s.store, func(tx agentsTx) (err error) {
		c, err = tx.JoinCodeByHash(HashToken(code))
		return err
	})
	switch {
	case ErrorCode(err) == ENOTFOUND:
		return errUnknownJoinCode()
	case err != nil:
		return err
	}
	return c.Refusal(s.clock.Now())
}

// JoinRequest is the input of Join: the agent a join code registers. Its
// role is the code's.
type JoinRequest struct {
	Code, Name, DisplayName, Description string
}

// Join registers an agent with a join code and returns it with its token
// (shown once). The use is counted in the same transaction as the agent is
// created, so a refused registration (name taken) uses nothing, and of
// two callers racing for a code's last use exactly one registers. Each use
// is an event of the new agent. Errors: EUNAUTHORIZED (unknown code),
// EPERMISSION (revoked), EPRECONDITION (expired, used up), EINVALID,
// ECONFLICT (name taken).
func (s *Agents) Join(ctx context.Context, req JoinRequest) (*Agent, string, error) {
	if !LooksLikeJoinCode(req.Code) {
		return nil, "", errUnknownJoinCode()
	}
	if reservedNames[req.Name] {
		return nil, "", nameUnavailable(req.Name)
	}
	a, token, hash, err := s.newAgent(CreateAgentRequest{Name: req.Name, DisplayName: req.DisplayName, Description: req.Description})
	if err != nil {
		return nil, "", err
	}
	now := a.CreatedAt
	err = update(ctx, s.store, func(tx agentsTx) error {
		c, err := tx.JoinCodeByHash(HashToken(req.Code))
		if ErrorCode(err) == ENOTFOUND {
			return errUnknownJoinCode()
		} else if err != nil {
			return err
		}
		if err := c.Refusal(now); err != nil {
			return err
		}
		if ok, err := tx.UseJoinCode(c.ID, now); err != nil {
			return err
		} else if !ok { // another registration took the last use first
			if c, err = tx.JoinCodeByID(c.ID); err != nil {
				return err
			}
			c.Uses = max(c.Uses, c.MaxUses)
			return c.Refusal(now)
		}
		a.Role, a.Project = c.Role, ProjectOr(c.Project)
		if err := s.insertAgent(tx, a, hash); ErrorCode(err) == ECONFLICT {
			// Taken, in this project or another: the same answer, so that a
			// join code does not tell who else is on the hub.
			return nameUnavailable(a.Name)
		} else if err != nil {
			return err
		}
		return recordEvent(tx, a.ID, EventJoined, fmt.Sprintf("registered with join code %d (use %d of %d), role %q",
			c.ID, c.Uses+1, c.MaxUses, c.Role), now)
	})
	if err != nil {
		return nil, "", err
	}
	return a, token, nil
}

// nameUnavailable is a join's refusal of a name that is taken or reserved:
// it does not say which, nor in which project.
func nameUnavailable(name string) error {
	return Errorf(ECONFLICT, "name %q is unavailable: choose another name", name)
}
