package hub

import (
	"context"
	"time"
)

// Agents is the service of agents, their tokens and join codes: creating,
// authenticating, changing and deleting agents.
type Agents struct {
	*core
	store txs[agentsTx] // the store methods it uses
}

// agentsTx is what the agents service reads and writes in one transaction:
// the store methods it uses, by their group.
type agentsTx interface {
	// AgentDeleteTx
	DeleteAgent(a *Agent, after int64) (int64, error)
	DeleteAgentRows(agentID int64, limit int) (int64, error)
	DeleteSentMessages(sender string, after int64, scan, limit int) (SentBatch, error)
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	AgentByTokenHash(hash []byte) (*Agent, error)
	CountAgents() (int64, error)
	CreateAgent(a *Agent, tokenHash []byte) error
	ListAgents(includeDisabled bool) ([]*Agent, error)
	SetAgentToken(agentID int64, hash []byte) error
	UpdateAgent(a *Agent) error
	// ChangesTx
	Recording() *Changes
	// EventTx
	InsertEvent(e *Event) error
	// HealthTx
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
	// JoinCodeTx
	InsertJoinCode(c *JoinCode, hash []byte) error
	JoinCodeByHash(hash []byte) (*JoinCode, error)
	JoinCodeByID(id int64) (*JoinCode, error)
	JoinCodes() ([]*JoinCode, error)
	RevokeJoinCode(id int64, at time.Time) error
	UseJoinCode(id int64, now time.Time) (bool, error)
	// NudgeTx
	ScheduleAgentCheck(agentID int64, at time.Time) error
	// PersonTx
	PersonByName(name string) (*Person, error)
	// ProjectTx
	ProjectExists(name string) (bool, error)
}

// NewAgents returns the agents' service.
func NewAgents(c *Core) *Agents {
	return &Agents{core: c.core, store: txsOf[agentsTx](c.store)}
}

// CreateAgentRequest is the input of Service.CreateAgent.
type CreateAgentRequest struct {
	Name, DisplayName, Role, Description, Locale string
	Project                                      string // DefaultProject if empty
}

// CreateAgent registers an agent in its project and returns it with its
// token, which is shown once. Errors: EINVALID, ECONFLICT (name taken),
// ENOTFOUND (no such project).
func (s *Agents) CreateAgent(ctx context.Context, req CreateAgentRequest) (*Agent, string, error) {
	a, token, hash, err := s.newAgent(req)
	if err != nil {
		return nil, "", err
	}
	if err := update(ctx, s.store, func(tx agentsTx) error { return s.insertAgent(tx, a, hash) }); err != nil {
		return nil, "", err
	}
	return a, token, nil
}

// newAgent checks req and returns the agent it describes, not yet stored,
// with a fresh token and its hash. Errors: EINVALID.
func (s *Agents) newAgent(req CreateAgentRequest) (*Agent, string, []byte, error) {
	if err := ValidateNewAgentName(req.Name); err != nil {
		return nil, "", nil, err
	}
	for _, f := range []struct {
		name, v string
		max     int
		line    bool
	}{{"display_name", req.DisplayName, 200, true}, {"role", req.Role, 200, true}, {"description", req.Description, 4000, false}} {
		if err := validateAgentText(f.name, f.v, f.max); err != nil {
			return nil, "", nil, err
		}
		if err := checkLine(f.name, f.v); f.line && err != nil {
			return nil, "", nil, err
		}
	}
	if req.Locale != "" {
		if _, err := ParseLocale(req.Locale); err != nil {
			return nil, "", nil, err
		}
	}
	req.Project = ProjectOr(req.Project)
	if err := ValidateProjectName(req.Project); err != nil {
		return nil, "", nil, err
	}
	now := s.clock.Now()
	token, hash := NewToken()
	return &Agent{
		Name:                req.Name,
		DisplayName:         req.DisplayName,
		Role:                req.Role,
		Description:         req.Description,
		Locale:              req.Locale,
		Project:             req.Project,
		CreatedAt:           now,
		CurrentHeartbeatID:  FormatHeartbeatID(now, s.cfg.Location),
		HeartbeatStartedAt:  now.Truncate(time.Second),
		LastInteractionBeat: s.beat.Load(),
	}, token, hash, nil
}

// insertAgentTx is what insertAgent reads and writes.
type insertAgentTx interface {
	// AgentTx
	AgentByName(name string) (*Agent, error)
	CreateAgent(a *Agent, tokenHash []byte) error
	// HealthTx
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
	// NudgeTx
	ScheduleAgentCheck(agentID int64, at time.Time) error
	// PersonTx
	PersonByName(name string) (*Person, error)
	// ProjectTx
	ProjectExists(name string) (bool, error)
}

// insertAgent stores a new agent with its liveness state and its place in
// the nudge schedule (checked at the next tick). EINVALID: reserved name;
// ECONFLICT: name taken, by an agent or a person (claimName); ENOTFOUND:
// no such project.
func (s *Agents) insertAgent(tx insertAgentTx, a *Agent, tokenHash []byte) error {
	if err := requireProject(tx, a.Project); err != nil {
		return err
	}
	if err := claimName(tx, a.Name); err != nil {
		return err
	}
	if err := tx.CreateAgent(a, tokenHash); err != nil {
		return err
	}
	if err := s.createHealth(tx, a); err != nil {
		return err
	}
	return tx.ScheduleAgentCheck(a.ID, a.CreatedAt)
}

// Agent returns the agent named name. Errors: EINVALID, ENOTFOUND.
func (s *Agents) Agent(ctx context.Context, name string) (*Agent, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, err
	}
	var a *Agent
	err := view(ctx, s.store, func(tx agentsTx) (err error) {
		a, err = tx.AgentByName(name)
		return err
	})
	return a, err
}

// ListAgents lists agents by name.
func (s *Agents) ListAgents(ctx context.Context, includeDisabled bool) ([]*Agent, error) {
	var as []*Agent
	err := view(ctx, s.store, func(tx agentsTx) (err error) {
		as, err = tx.ListAgents(includeDisabled)
		return err
	})
	return as, err
}

// CountSeenBy returns how many agents the projects p sees hold, disabled
// ones included, and how many waits they have parked: every agent and
// every wait for the admin (a nil p) and a person of every project.
func (s *Agents) CountSeenBy(ctx context.Context, p *Person) (agents, parked int64, err error) {
	if p.SeesAll() {
		err = view(ctx, s.store, func(tx agentsTx) (err error) {
			agents, err = tx.CountAgents()
			return err
		})
		return agents, int64(s.waiters.Count()), err
	}
	var all []*Agent
	err = view(ctx, s.store, func(tx agentsTx) (err error) {
		all, err = tx.ListAgents(true)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	for _, a := range SeenBy(all, p, func(a *Agent) string { return a.Project }) {
		agents++
		parked += int64(s.waiters.AgentCount(a.ID))
	}
	return agents, parked, nil
}

// UpdateAgentRequest changes the non-nil fields of an agent.
type UpdateAgentRequest struct {
	Name                                   string
	DisplayName, Role, Description, Locale *string
}

// UpdateAgent changes an agent's descriptive fields. Errors: EINVALID, ENOTFOUND.
func (s *Agents) UpdateAgent(ctx context.Context, req UpdateAgentRequest) (*Agent, error) {
	if err := ValidateAgentName(req.Name); err != nil {
		return nil, err
	}
	if req.Locale != nil && *req.Locale != "" {
		if _, err := ParseLocale(*req.Locale); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
		line bool
	}{{"display_name", req.DisplayName, 200, true}, {"role", req.Role, 200, true}, {"description", req.Description, 4000, false}} {
		if f.v != nil {
			if err := validateAgentText(f.name, *f.v, f.max); err != nil {
				return nil, err
			}
			if err := checkLine(f.name, *f.v); f.line && err != nil {
				return nil, err
			}
		}
	}
	return s.modifyAgent(ctx, req.Name, 0, func(tx agentsTx, a *Agent) error {
		set := func(dst *string, src *string) {
			if src != nil {
				*dst = *src
			}
		}
		set(&a.DisplayName, req.DisplayName)
		set(&a.Role, req.Role)
		set(&a.Description, req.Description)
		set(&a.Locale, req.Locale)
		return tx.UpdateAgent(a)
	})
}

// SetAgentDisabled disables or re-enables an agent. A disabled agent's token
// is refused with EPERMISSION. Errors: EINVALID, ENOTFOUND.
func (s *Agents) SetAgentDisabled(ctx context.Context, name string, disabled bool) (*Agent, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	change := AgentEnabled
	if disabled {
		change = AgentDisabled // its parked calls end at the commit
	}
	return s.modifyAgent(ctx, name, change, func(tx agentsTx, a *Agent) error {
		switch {
		case disabled && a.DisabledAt.IsZero():
			a.DisabledAt = now
		case !disabled:
			a.DisabledAt = time.Time{}
		}
		return tx.UpdateAgent(a)
	})
}

// RotateToken gives an agent a new token; the old one stops working at once.
// With revoke set, no new token is issued. Errors: EINVALID, ENOTFOUND.
func (s *Agents) RotateToken(ctx context.Context, name string, revoke bool) (*Agent, string, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, "", err
	}
	token, hash := NewToken()
	if revoke {
		token, hash = "", nil
	}
	// Calls parked with the old token end at the commit.
	a, err := s.modifyAgent(ctx, name, TokenChanged, func(tx agentsTx, a *Agent) error {
		return tx.SetAgentToken(a.ID, hash)
	})
	if err != nil {
		return nil, "", err
	}
	return a, token, nil
}

// AgentChanged is told by the store that another process changed agent id.
// The change goes through the commit's wake-ups (wake.go) as this
// process's own changes do: the agents cached for authentication are
// forgotten, so an old token or a disabled agent is refused at its next
// call, and for a token change, a disable or a deletion the agent's parked
// calls end (a deletion also drops its unflushed presence).
func (s *Agents) AgentChanged(id int64, change AgentChange) {
	var ch Changes
	ch.AgentChanged(id, change)
	s.wake(&ch)
}

// ForgetAgents forgets the agents cached for authentication; the store
// calls it when changes made by other processes may have been missed.
func (s *Agents) ForgetAgents() { s.auth.clear() }

// AuthCacheMisses returns how many agent tokens were checked by reading the
// store since the hub started (Authenticate, KnownToken): the cache did not
// hold them, or no longer trusted them.
func (s *Agents) AuthCacheMisses() int64 { return s.auth.misses.Load() }

// ListenerConnected is told by a store shared by several processes
// (Config.SharedStore) whether its listener is connected: while it is,
// other processes' changes to agents are reported (AgentChanged) and
// authentication trusts the agents it cached (up to authCacheTTL); from
// the moment it loses its connection, changes may be missed, and nothing
// is cached until it listens again. The cache is forgotten either way.
func (s *Agents) ListenerConnected(connected bool) { s.auth.reported(connected) }

// ListenerHeard is told by a store shared by several processes that its
// listener heard from the server (a notification, or the answer to a
// ping): the cached agents stay trusted for listenerLease from now, so
// that a connection gone silent, not yet found out, is not trusted for
// longer.
func (s *Agents) ListenerHeard() { s.auth.heardFrom() }

// modifyAgent loads an agent by name in a write transaction, applies fn
// and records the agent's change (0: its profile alone) for the commit.
func (s *Agents) modifyAgent(ctx context.Context, name string, change AgentChange, fn func(agentsTx, *Agent) error) (*Agent, error) {
	// Authentication trusts cached agents: forget them before the change,
	// so that no read begun before it is cached, and again at its commit
	// (the record's wake-up), so no call after it is let in on the old state.
	s.auth.clear()
	var a *Agent
	err := update(ctx, s.store, func(tx agentsTx) (err error) {
		if a, err = tx.AgentByName(name); err != nil {
			return err
		}
		if err := fn(tx, a); err != nil {
			return err
		}
		tx.Recording().AgentChanged(a.ID, change)
		return nil
	})
	return a, err
}

// IsAdminToken reports whether token is the admin token (constant time).
func (s *Agents) IsAdminToken(token string) bool {
	return s.isAdminHash(HashToken(token))
}

// isAdminHash reports whether hash is the admin token's hash.
func (s *Agents) isAdminHash(hash []byte) bool {
	return len(s.cfg.AdminTokenHash) > 0 && TokenHashEqual(hash, s.cfg.AdminTokenHash)
}

// Authenticate returns the agent holding token and records the call for
// presence. Errors: EUNAUTHORIZED (missing or unknown token), EPERMISSION
// (disabled agent), or the store's. What a caller is told, and how to fix
// it, is the admission gate's to say (internal/admission).
func (s *Agents) Authenticate(ctx context.Context, token string) (*Agent, error) {
	if token == "" {
		return nil, Errorf(EUNAUTHORIZED, "missing token")
	}
	epoch := s.waiters.Epoch() // before the check: see Waiters.Epoch
	hash := HashToken(token)
	a, ok := s.auth.get(hash)
	if !ok {
		gen := s.auth.generation()
		rctx, cancel := detachedRead(ctx)
		err := view(rctx, s.store, func(tx agentsTx) (err error) {
			a, err = tx.AgentByTokenHash(hash)
			return err
		})
		cancel()
		if ErrorCode(err) == ENOTFOUND {
			return nil, Errorf(EUNAUTHORIZED, "unknown or revoked token")
		} else if err != nil {
			return nil, err
		}
		if a.Disabled() {
			return nil, Errorf(EPERMISSION, "agent %q is disabled: an admin can enable it with `hubctl agent enable %s`", a.Name, a.Name)
		}
		s.auth.put(hash, a, gen)
	}
	// The agent as returned carries its previous interaction (since_last is
	// the gap before this call); then this call is recorded.
	prevCall, prevBeat := s.presence.Touch(a, s.clock.Now(), s.beat.Load())
	if prevCall.After(a.LastSeenAt) {
		a.LastSeenAt = prevCall
	}
	a.LastInteractionBeat = max(a.LastInteractionBeat, prevBeat)
	a.authEpoch, a.authHash = epoch, hash
	return a, nil
}

// AgentTx stores agents and their tokens.
type AgentTx interface {
	// CreateAgent inserts a and sets a.ID. ECONFLICT if the name is taken.
	CreateAgent(a *Agent, tokenHash []byte) error
	// AgentByName returns the agent named name. ENOTFOUND.
	AgentByName(name string) (*Agent, error)
	// AddresseeByName returns what routing a message reads of the agent
	// named name, as of this transaction (every earlier write of it
	// included). ENOTFOUND.
	AddresseeByName(name string) (Addressee, error)
	// AgentByID returns the agent with the given ID. ENOTFOUND.
	AgentByID(id int64) (*Agent, error)
	// AgentByTokenHash returns the agent holding the token. ENOTFOUND.
	AgentByTokenHash(hash []byte) (*Agent, error)
	// ListAgents returns agents ordered by name.
	ListAgents(includeDisabled bool) ([]*Agent, error)
	// CountAgents returns the number of agents, disabled ones included.
	CountAgents() (int64, error)
	// UpdateAgent writes every mutable field of a. ENOTFOUND.
	UpdateAgent(a *Agent) error
	// StartHeartbeat sets the agent's current heartbeat ID and when it
	// started, and returns the agent's unread messages and mentions at its
	// read cursor (InboxCounts). ENOTFOUND.
	StartHeartbeat(agentID int64, id string, startedAt time.Time) (unread, mentions int64, err error)
	// SetReadCursor moves the agent's read cursor to upTo (its unread
	// counts follow). ENOTFOUND.
	SetReadCursor(agentID, upTo int64) error
	// SetAgentToken replaces the agent's token hash; nil revokes the token.
	SetAgentToken(agentID int64, hash []byte) error
	// TouchAgents records last-seen times and interaction beats in bulk.
	TouchAgents(touches []Touch) error
}
