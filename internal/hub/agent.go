package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Names of the senders that are not agents.
const (
	SenderAdmin        = "admin"
	SenderOrchestrator = "orchestrator"
)

// agentNameRE is the pattern every agent name matches (SPEC §2).
var agentNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// Agent is a registered agent. Its token is never part of it: only the
// token's hash is stored, in the store's own column.
type Agent struct {
	ID          int64
	Name        string
	DisplayName string
	Role        string
	Description string
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
}

// Disabled reports whether the agent is disabled.
func (a *Agent) Disabled() bool { return !a.DisabledAt.IsZero() }

// ValidateAgentName returns EINVALID unless name is a valid agent name.
func ValidateAgentName(name string) error {
	if name == "" {
		return Errorf(EINVALID, "agent name is required: 1-63 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
	}
	if !agentNameRE.MatchString(name) {
		return Errorf(EINVALID, "agent name %q is invalid: expected 1-63 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit (pattern ^[a-z0-9][a-z0-9._-]{0,62}$)", name)
	}
	if name == SenderAdmin || name == SenderOrchestrator {
		return Errorf(EINVALID, "agent name %q is reserved for the hub's own messages; choose another name", name)
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
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return sum[:]
}

// TokenHashEqual compares two token hashes in constant time.
func TokenHashEqual(a, b []byte) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare(a, b) == 1
}

// CreateAgentRequest is the input of Service.CreateAgent.
type CreateAgentRequest struct {
	Name, DisplayName, Role, Description, Locale string
}

// CreateAgent registers an agent and returns it with its token, which is
// shown once. Errors: EINVALID, ECONFLICT (name taken).
func (s *Service) CreateAgent(ctx context.Context, req CreateAgentRequest) (*Agent, string, error) {
	if err := ValidateAgentName(req.Name); err != nil {
		return nil, "", err
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"display_name", req.DisplayName, 200}, {"role", req.Role, 200}, {"description", req.Description, 4000}} {
		if err := validateAgentText(f.name, f.v, f.max); err != nil {
			return nil, "", err
		}
	}
	if req.Locale != "" {
		if _, err := ParseLocale(req.Locale); err != nil {
			return nil, "", err
		}
	}
	now := s.clock.Now()
	token, hash := NewToken()
	a := &Agent{
		Name:                req.Name,
		DisplayName:         req.DisplayName,
		Role:                req.Role,
		Description:         req.Description,
		Locale:              req.Locale,
		CreatedAt:           now,
		CurrentHeartbeatID:  FormatHeartbeatID(now, s.cfg.Location),
		HeartbeatStartedAt:  now.Truncate(time.Second),
		LastInteractionBeat: s.Beat(),
	}
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := tx.CreateAgent(a, hash); err != nil {
			return err
		}
		return s.hooks.agentCreated(ctx, tx, a)
	})
	if err != nil {
		return nil, "", err
	}
	return a, token, nil
}

// Agent returns the agent named name. Errors: EINVALID, ENOTFOUND.
func (s *Service) Agent(ctx context.Context, name string) (*Agent, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, err
	}
	var a *Agent
	err := s.store.View(ctx, func(tx Tx) (err error) {
		a, err = tx.AgentByName(name)
		return err
	})
	return a, err
}

// ListAgents lists agents by name.
func (s *Service) ListAgents(ctx context.Context, includeDisabled bool) ([]*Agent, error) {
	var as []*Agent
	err := s.store.View(ctx, func(tx Tx) (err error) {
		as, err = tx.ListAgents(includeDisabled)
		return err
	})
	return as, err
}

// CountAgents returns the number of agents, disabled ones included.
func (s *Service) CountAgents(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.View(ctx, func(tx Tx) (err error) {
		n, err = tx.CountAgents()
		return err
	})
	return n, err
}

// UpdateAgentRequest changes the non-nil fields of an agent.
type UpdateAgentRequest struct {
	Name                                   string
	DisplayName, Role, Description, Locale *string
}

// UpdateAgent changes an agent's descriptive fields. Errors: EINVALID, ENOTFOUND.
func (s *Service) UpdateAgent(ctx context.Context, req UpdateAgentRequest) (*Agent, error) {
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
	}{{"display_name", req.DisplayName, 200}, {"role", req.Role, 200}, {"description", req.Description, 4000}} {
		if f.v != nil {
			if err := validateAgentText(f.name, *f.v, f.max); err != nil {
				return nil, err
			}
		}
	}
	return s.modifyAgent(ctx, req.Name, func(tx Tx, a *Agent) error {
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
func (s *Service) SetAgentDisabled(ctx context.Context, name string, disabled bool) (*Agent, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	a, err := s.modifyAgent(ctx, name, func(tx Tx, a *Agent) error {
		switch {
		case disabled && a.DisabledAt.IsZero():
			a.DisabledAt = now
		case !disabled:
			a.DisabledAt = time.Time{}
		}
		return tx.UpdateAgent(a)
	})
	if err == nil && disabled {
		s.waiters.Notify(a.ID) // parked waits re-check and end with PermissionDenied
	}
	return a, err
}

// RotateToken gives an agent a new token; the old one stops working at once.
// With revoke set, no new token is issued. Errors: EINVALID, ENOTFOUND.
func (s *Service) RotateToken(ctx context.Context, name string, revoke bool) (*Agent, string, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, "", err
	}
	token, hash := NewToken()
	if revoke {
		token, hash = "", nil
	}
	a, err := s.modifyAgent(ctx, name, func(tx Tx, a *Agent) error {
		return tx.SetAgentToken(a.ID, hash)
	})
	if err != nil {
		return nil, "", err
	}
	return a, token, nil
}

// modifyAgent loads an agent by name in a write transaction and applies fn.
func (s *Service) modifyAgent(ctx context.Context, name string, fn func(Tx, *Agent) error) (*Agent, error) {
	// Authentication trusts cached agents: forget them before and after the
	// change, so no call in between is let in on the old state.
	s.auth.clear()
	defer s.auth.clear()
	var a *Agent
	err := s.store.Update(ctx, func(tx Tx) (err error) {
		if a, err = tx.AgentByName(name); err != nil {
			return err
		}
		return fn(tx, a)
	})
	return a, err
}
