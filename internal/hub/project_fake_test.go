package hub

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// projectsInMemory is ProjectTx in memory: the projects' rules tested on
// values, without a database.
type projectsInMemory struct {
	projects map[string]*Project
	links    map[[2]string]bool // (a, b) with a < b
}

func newProjectsInMemory(names ...string) *projectsInMemory {
	p := &projectsInMemory{projects: map[string]*Project{}, links: map[[2]string]bool{}}
	for _, n := range names {
		p.projects[n] = &Project{Name: n}
	}
	return p
}

func (p *projectsInMemory) CreateProject(pr *Project) error {
	if p.projects[pr.Name] != nil {
		return Errorf(ECONFLICT, "project %q exists", pr.Name)
	}
	p.projects[pr.Name] = pr
	return nil
}

func (p *projectsInMemory) ProjectExists(name string) (bool, error) {
	return p.projects[name] != nil, nil
}

func (p *projectsInMemory) ListProjects() ([]*Project, error) {
	var out []*Project
	for _, pr := range p.projects {
		out = append(out, pr)
	}
	slices.SortFunc(out, func(a, b *Project) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (p *projectsInMemory) InsertProjectLink(a, b string, _ int64) error {
	p.links[[2]string{a, b}] = true
	return nil
}

func (p *projectsInMemory) DeleteProjectLink(a, b string) (bool, error) {
	ok := p.links[[2]string{a, b}]
	delete(p.links, [2]string{a, b})
	return ok, nil
}

func (p *projectsInMemory) LinkedProjects(name string) ([]string, error) {
	var out []string
	for l := range p.links {
		switch name {
		case l[0]:
			out = append(out, l[1])
		case l[1]:
			out = append(out, l[0])
		}
	}
	slices.Sort(out)
	return out, nil
}

// TestReachOf: what a caller reaches, decided over the project store's
// group alone (in memory): the admin everything, an agent its project and
// the linked ones, in both directions of a link, and a missing project is
// named with the command that creates it.
func TestReachOf(t *testing.T) {
	t.Parallel()
	tx := newProjectsInMemory(DefaultProject, "red", "blue", "green")
	a, b, _ := OrderedLink("red", "blue")
	tx.InsertProjectLink(a, b, time.Now().UnixNano())
	for _, tt := range []struct {
		caller       *Agent
		sees, hidden []string
		owns         string
	}{
		{nil, []string{"red", "blue", "green", DefaultProject}, nil, "green"},
		{&Agent{Name: "r", Project: "red"}, []string{"red", "blue"}, []string{"green", DefaultProject}, "red"},
		{&Agent{Name: "b", Project: "blue"}, []string{"blue", "red"}, []string{"green"}, "blue"},
		{&Agent{Name: "d"}, []string{DefaultProject}, []string{"red", "blue"}, DefaultProject},
	} {
		r, err := reachOf(tx, tt.caller)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tt.sees {
			if !r.Sees(p) {
				t.Errorf("%v does not see %s", tt.caller, p)
			}
		}
		for _, p := range tt.hidden {
			if r.Sees(p) {
				t.Errorf("%v sees %s", tt.caller, p)
			}
		}
		if !r.Owns(tt.owns) || (tt.caller != nil && r.Owns("blue") && tt.owns != "blue") {
			t.Errorf("%v: owns %s = %v; a linked project is not owned", tt.caller, tt.owns, r.Owns(tt.owns))
		}
	}
	if err := requireProject(tx, "purple"); ErrorCode(err) != ENOTFOUND || !strings.Contains(ErrorMessage(err), "hubctl projects create purple") {
		t.Errorf("requireProject(purple) = %v, want ENOTFOUND naming the command", err)
	}
	if err := requireProject(tx, "red"); err != nil {
		t.Errorf("requireProject(red) = %v", err)
	}
}
