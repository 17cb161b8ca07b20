package hub

// principalTx is what claiming a principal's name reads: agents and people.
type principalTx interface {
	// AgentTx
	AgentByName(name string) (*Agent, error)
	// PersonTx
	PersonByName(name string) (*Person, error)
}

// claimName is the one check every door that creates a principal (an
// agent made by the admin or by a join code, a person) makes inside the
// transaction that creates it: the name must be valid, not reserved, and
// held by no agent and no person, revoked or not (what a revoked person
// answered still carries the name). Errors: EINVALID (invalid or
// reserved), ECONFLICT (taken: the text says by which kind; a join answers
// its own text, which does not).
func claimName(tx principalTx, name string) error {
	if err := ValidateNewAgentName(name); err != nil {
		return err
	}
	if _, err := tx.AgentByName(name); err == nil {
		return Errorf(ECONFLICT, "an agent named %q already exists: agents and people share one namespace, choose another name", name)
	} else if ErrorCode(err) != ENOTFOUND {
		return err
	}
	if _, err := tx.PersonByName(name); err == nil {
		return Errorf(ECONFLICT, "a person named %q already exists: agents and people share one namespace, choose another name", name)
	} else if ErrorCode(err) != ENOTFOUND {
		return err
	}
	return nil
}
