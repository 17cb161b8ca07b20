package hub

import (
	"slices"
	"strings"
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
	// Projects are the projects the person may read, post and answer
	// in, sorted; empty: every project.
	Projects []string
}

// Sees reports whether the person may read, post and answer in project
// (DefaultProject for ""). A nil person is the admin token, which sees
// every project.
func (p *Person) Sees(project string) bool {
	return p.SeesAll() || slices.Contains(p.Projects, ProjectOr(project))
}

// SeesAll reports whether p sees every project: the admin (nil) and a
// person made with no projects.
func (p *Person) SeesAll() bool { return p == nil || len(p.Projects) == 0 }

// Acting returns the name p's answers and posts carry: the person's, or
// Operator for the admin token (a nil p).
func (p *Person) Acting() string {
	if p == nil {
		return Operator
	}
	return p.Name
}

// SeenBy keeps the items of a project p sees (every item for the admin, a
// nil p), as InProject keeps one project's.
func SeenBy[T any](items []T, p *Person, of func(T) string) []T {
	if p.SeesAll() {
		return items
	}
	return slices.DeleteFunc(items, func(it T) bool { return !p.Sees(of(it)) })
}

// postProject returns the project of a post by p, a person of several
// projects, that gives neither a project nor a channel, from the projects
// of the agents it is addressed to (people are in none): theirs when they
// share one. None, or several, is EINVALID naming the projects to choose
// from.
func (p *Person) postProject(agentProjects []string) (string, error) {
	projects := slices.Compact(slices.Sorted(slices.Values(agentProjects)))
	switch len(projects) {
	case 1:
		return projects[0], nil
	case 0:
		return "", Errorf(EINVALID, "person %s acts in the projects %s and to names no agent to tell which: give project, one of them", p.Name, strings.Join(p.Projects, ", "))
	}
	return "", Errorf(EINVALID, "to names agents of the projects %s, and a message is in one project: give project, or post to each project's agents apart", strings.Join(projects, " and "))
}

// CheckSees returns EPERMISSION unless p sees project: what is outside
// a person's projects is refused, never shown.
func CheckSees(p *Person, project string) error {
	if p.Sees(project) {
		return nil
	}
	return Errorf(EPERMISSION, "person %s may act only in the projects %v, not in project %s: ask the admin to make the person with that project too", p.Name, p.Projects, ProjectOr(project))
}

// Revoked reports whether the person's token was revoked.
func (p *Person) Revoked() bool { return !p.RevokedAt.IsZero() }
