package storesql

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.ProjectTx.

// CreateProject implements hub.ProjectTx. A taken name is reported
// without aborting the transaction.
func (x Statements) CreateProject(p *hub.Project) error {
	n, err := x.DB.Exec(`INSERT INTO projects (name, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, p.Name, row.Nanos(p.CreatedAt))
	if err != nil {
		return err
	}
	if n == 0 {
		return hub.ProjectNameTaken(p.Name)
	}
	return nil
}

// ProjectExists implements hub.ProjectTx.
func (x Statements) ProjectExists(name string) (bool, error) {
	var ok bool
	err := x.DB.QueryRow(`SELECT EXISTS (SELECT 1 FROM projects WHERE name = ?)`, name).Scan(&ok)
	return ok, err
}

// ListProjects implements hub.ProjectTx.
func (x Statements) ListProjects() ([]*hub.Project, error) {
	ps, err := all(x.DB, func(s row.Scanner) (*hub.Project, error) {
		var p hub.Project
		var created int64
		err := s.Scan(&p.Name, &created, &p.Agents)
		p.CreatedAt = row.Time(created)
		return &p, err
	}, `SELECT p.name, p.created_at, (SELECT COUNT(*) FROM agents a WHERE a.project = p.name) FROM projects p ORDER BY p.name`)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Links, err = x.LinkedProjects(p.Name); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// InsertProjectLink implements hub.ProjectTx.
func (x Statements) InsertProjectLink(a, b string, now int64) error {
	_, err := x.DB.Exec(`INSERT INTO project_links (a, b, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, a, b, now)
	return err
}

// DeleteProjectLink implements hub.ProjectTx.
func (x Statements) DeleteProjectLink(a, b string) (bool, error) {
	n, err := x.DB.Exec(`DELETE FROM project_links WHERE a = ? AND b = ?`, a, b)
	return n > 0, err
}

// LinkedProjects implements hub.ProjectTx.
func (x Statements) LinkedProjects(name string) ([]string, error) {
	return column[string](x.DB, `SELECT b FROM project_links WHERE a = ? UNION SELECT a FROM project_links WHERE b = ? ORDER BY 1`, name, name)
}
