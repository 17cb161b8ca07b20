package hub

import (
	"context"
	"slices"
)

// Projects is the service of projects and the links between them.
type Projects struct {
	*core
	store txs[projectsTx] // the store methods it uses
}

// projectsTx is what the projects service reads and writes in one transaction:
// the store methods it uses, by their group.
type projectsTx interface {
	// ProjectTx
	CreateProject(p *Project) error
	DeleteProjectLink(a, b string) (bool, error)
	InsertProjectLink(a, b string, now int64) error
	ListProjects() ([]*Project, error)
	ProjectExists(name string) (bool, error)
}

// NewProjects returns the projects' service.
func NewProjects(c *Core) *Projects {
	return &Projects{core: c.core, store: txsOf[projectsTx](c.store)}
}

// ProjectTx stores projects and the links between them.
type ProjectTx interface {
	// CreateProject inserts p. ECONFLICT if the name is taken.
	CreateProject(p *Project) error
	// ProjectExists reports whether a project named name exists.
	ProjectExists(name string) (bool, error)
	// ListProjects returns every project by name, with its links and its
	// number of agents.
	ListProjects() ([]*Project, error)
	// InsertProjectLink links a and b (a < b); a no-op if they are linked.
	InsertProjectLink(a, b string, now int64) error
	// DeleteProjectLink removes the link between a and b (a < b) and reports
	// whether there was one.
	DeleteProjectLink(a, b string) (bool, error)
	// LinkedProjects returns the projects linked to name.
	LinkedProjects(name string) ([]string, error)
}

// CreateProject creates a project. Errors: EINVALID, ECONFLICT.
func (s *Projects) CreateProject(ctx context.Context, name string) (*Project, error) {
	if err := ValidateProjectName(name); err != nil {
		return nil, err
	}
	p := &Project{Name: name, CreatedAt: s.clock.Now()}
	err := update(ctx, s.store, func(tx projectsTx) error { return tx.CreateProject(p) })
	return p, err
}

// ListProjects lists every project with its links and agent count.
func (s *Projects) ListProjects(ctx context.Context) ([]*Project, error) {
	var ps []*Project
	err := view(ctx, s.store, func(tx projectsTx) (err error) {
		ps, err = tx.ListProjects()
		return err
	})
	return ps, err
}

// LinkProjects links two projects (see project.go for what a link allows);
// linking linked projects again changes nothing. Errors: EINVALID,
// ENOTFOUND (a project).
func (s *Projects) LinkProjects(ctx context.Context, a, b string) error {
	a, b, err := OrderedLink(a, b)
	if err != nil {
		return err
	}
	now := s.clock.Now().UnixNano()
	return update(ctx, s.store, func(tx projectsTx) error {
		for _, n := range []string{a, b} {
			if err := requireProject(tx, n); err != nil {
				return err
			}
		}
		return tx.InsertProjectLink(a, b, now)
	})
}

// UnlinkProjects removes the link between two projects. Errors: EINVALID,
// ENOTFOUND (no such link).
func (s *Projects) UnlinkProjects(ctx context.Context, a, b string) error {
	a, b, err := OrderedLink(a, b)
	if err != nil {
		return err
	}
	return update(ctx, s.store, func(tx projectsTx) error {
		ok, err := tx.DeleteProjectLink(a, b)
		if err == nil && !ok {
			err = Errorf(ENOTFOUND, "projects %q and %q are not linked", a, b)
		}
		return err
	})
}

// projectExistsTx reads whether a project exists.
type projectExistsTx interface {
	ProjectExists(name string) (bool, error)
}

// requireProject returns ENOTFOUND unless project name exists.
func requireProject(tx projectExistsTx, name string) error {
	ok, err := tx.ProjectExists(name)
	if err == nil && !ok {
		err = Errorf(ENOTFOUND, "no project named %q: create it with `hubctl projects create %s`", name, name)
	}
	return err
}

// linkedProjectsTx reads a project's links.
type linkedProjectsTx interface {
	LinkedProjects(name string) ([]string, error)
}

// reachOf returns what caller may reach: everything for nil (the admin
// or the hub itself), else its project and the projects linked to it.
func reachOf(tx linkedProjectsTx, caller *Agent) (Reach, error) {
	if caller == nil {
		return Reach{Admin: true}, nil
	}
	r := Reach{Home: ProjectOr(caller.Project)}
	linked, err := tx.LinkedProjects(r.Home)
	if err != nil {
		return r, err
	}
	if len(linked) > 0 {
		r.Linked = make(map[string]bool, len(linked))
		for _, p := range linked {
			r.Linked[p] = true
		}
	}
	return r, nil
}

// reachTx is what deciding a caller's reach reads: agents and projects.
type reachTx interface {
	// AgentTx
	AddresseeByName(name string) (Addressee, error)
	// ProjectTx
	LinkedProjects(name string) ([]string, error)
}

// lazyReach loads a caller's reach the first time a decision needs more
// than "is it the caller's own project", so a post inside one project
// costs no extra query.
type lazyReach struct {
	tx     reachTx
	caller *Agent
	person *Person // with no caller: the person posting (nil: the admin or the hub)
	r      *Reach
}

// sees reports whether the caller may message and list project.
func (l *lazyReach) sees(project string) (bool, error) {
	if l.caller == nil {
		return l.person.Sees(project), nil
	}
	if project == ProjectOr(l.caller.Project) {
		return true, nil
	}
	if l.r == nil {
		r, err := reachOf(l.tx, l.caller)
		if err != nil {
			return false, err
		}
		l.r = &r
	}
	return l.r.Sees(project), nil
}

// visibleAgent returns the agent named name if the caller may reach it,
// and for any other name the same ENOTFOUND as for an unknown one.
func (l *lazyReach) visibleAgent(name string) (Addressee, error) {
	a, err := l.tx.AddresseeByName(name)
	if ErrorCode(err) == ENOTFOUND {
		return Addressee{}, agentNotFound(name)
	} else if err != nil {
		return Addressee{}, err
	}
	ok, err := l.sees(ProjectOr(a.Project))
	if err != nil {
		return Addressee{}, err
	}
	if !ok {
		return Addressee{}, agentNotFound(name)
	}
	return a, nil
}

// visibleOf keeps the items whose project the caller may see.
func visibleOf[T any, G reachTx](ctx context.Context, st txs[G], caller *Agent, items []T, project func(T) string) ([]T, error) {
	if caller == nil {
		return items, nil
	}
	var r Reach
	err := view(ctx, st, func(tx G) (err error) {
		r, err = reachOf(tx, caller)
		return err
	})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(items, func(it T) bool { return !r.Sees(ProjectOr(project(it))) }), nil
}
