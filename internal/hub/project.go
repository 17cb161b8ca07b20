package hub

import (
	"slices"
	"strings"
	"time"
)

// Projects keep teams apart on one hub. The rules, in one place:
//
//   - Agents, channels, messages, cron jobs, reservations and tasks belong
//     to a project. Whatever is created without one belongs to DefaultProject,
//     so a hub that never creates a project works as before. An agent's
//     project is set by the admin when the agent is created and never
//     changes; its token acts only inside it.
//   - Names: agent names stay unique across the hub (a name is how admins,
//     events, mentions and hooks address an agent, and it never needs a
//     prefix); channel names are unique per project, so "#general" of two
//     projects are two channels. Another project's channel is addressed as
//     "project/#channel".
//   - Without a link, another project does not exist for an agent: its
//     agents are "no agent named …" (ENOTFOUND, word for word what an
//     unknown name gets), its channels "not found", its messages "no such
//     message"; @name of its agents in a body is plain text; listings leave
//     it out. Nothing tells an agent that the project or the name exists.
//   - A link between two projects is made by the admin and is symmetric (a
//     conversation needs both directions). It lets the agents of each
//     project list the other's agents and channels, send direct messages
//     to and @mention its agents, and post to its channels as
//     "project/#channel" — without joining them. Nothing else crosses it:
//     an agent never joins, reads the history of, reserves paths in,
//     lists the reservations of, or sees or claims the tasks of another
//     project.
//   - A message belongs to its channel's project, else to its sender's (the
//     hub's own messages: to their recipient's or their cron job's).
//   - The admin sees and touches every project.

// DefaultProject is the project of everything created without one.
const DefaultProject = "default"

// Project is a named group of agents and what they own.
type Project struct {
	Name      string
	CreatedAt time.Time
	Links     []string // the projects linked to it, by name (filled by ListProjects)
	Agents    int64    // how many agents it has, disabled ones included (filled by ListProjects)
}

// ValidateProjectName returns EINVALID unless name is a valid project name
// (the pattern of agent names).
func ValidateProjectName(name string) error {
	if name == "" || !isName(name) {
		return Errorf(EINVALID, "project name %q is invalid: expected 1-63 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// ProjectOr returns name, or DefaultProject when name is empty.
func ProjectOr(name string) string {
	if name == "" {
		return DefaultProject
	}
	return name
}

// OrderedLink returns the two ends of a link in the order it is stored
// (a < b). Errors: EINVALID (bad name, or a project linked to itself).
func OrderedLink(a, b string) (string, string, error) {
	for _, n := range []string{a, b} {
		if err := ValidateProjectName(n); err != nil {
			return "", "", err
		}
	}
	if a == b {
		return "", "", Errorf(EINVALID, "cannot link project %q to itself: its agents already reach each other", a)
	}
	if b < a {
		a, b = b, a
	}
	return a, b, nil
}

// ChannelRef is a channel as addressed by a caller: its project and its
// name ("#general").
type ChannelRef struct {
	Project string
	Name    string
}

// String is the channel's qualified name, "project/#name".
func (c ChannelRef) String() string { return c.Project + "/" + c.Name }

// ParseChannelRef parses "#name" (a channel of home) or "project/#name".
// Errors: EINVALID.
func ParseChannelRef(ref, home string) (ChannelRef, error) {
	project, name, qualified := strings.Cut(ref, "/")
	if !qualified {
		project, name = home, ref
	} else if err := ValidateProjectName(project); err != nil {
		return ChannelRef{}, Errorf(EINVALID, "channel %q is invalid: expected \"#name\" for a channel of your project or \"project/#name\"", ref)
	}
	if err := ValidateChannel(name); err != nil {
		return ChannelRef{}, err
	}
	return ChannelRef{Project: project, Name: name}, nil
}

// Reach decides what a caller may see and touch in a project: the one
// place that answers "may this caller see that". The zero Reach with Admin
// set reaches everything.
type Reach struct {
	Admin  bool
	Home   string          // the caller's project
	Linked map[string]bool // the projects linked to Home
}

// Owns reports whether project is the caller's own (or the caller is the
// admin): reading a channel's history, joining channels, reservations.
func (r Reach) Owns(project string) bool { return r.Admin || project == r.Home }

// Sees reports whether the caller may list project's agents and channels
// and send messages to them: its own project or a linked one.
func (r Reach) Sees(project string) bool { return r.Owns(project) || r.Linked[project] }

// agentNotFound is the error for an agent the caller does not know or may
// not see: the same words either way.
func agentNotFound(name string) error {
	return Errorf(ENOTFOUND, "no agent named %q: check the name against the list of agents", name)
}

// channelNotFound is the error for another project's channel the caller
// may not post to or that does not exist: the same words either way.
func channelNotFound(c ChannelRef) error {
	return Errorf(ENOTFOUND, "channel %s not found: you may post to your project's channels and to existing channels of projects linked to it", c)
}

// InProject keeps the items of project, whose project of returns ("" keeps
// all): the admin's ?project= filter.
func InProject[T any](items []T, project string, of func(T) string) []T {
	if project == "" {
		return items
	}
	return slices.DeleteFunc(items, func(it T) bool { return ProjectOr(of(it)) != project })
}

// AgentProject returns an agent's project, for InProject.
func AgentProject(a *Agent) string { return a.Project }

// ReservationProject returns a reservation's project, for InProject.
func ReservationProject(r *Reservation) string { return r.Project }

// CronJobProject returns a cron job's project, for InProject.
func CronJobProject(j *CronJob) string { return j.Project }

// ChannelProject returns a channel's project, for InProject.
func ChannelProject(c ChannelSummary) string { return c.Project }
