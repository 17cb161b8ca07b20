package sqlite

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// CreateProject implements hub.ProjectTx.
func (t *Tx) CreateProject(p *hub.Project) error {
	res, err := t.exec(`INSERT INTO projects (name, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, p.Name, row.Nanos(p.CreatedAt))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return projectTaken(p.Name, err)
	}
	return nil
}

// ProjectExists implements hub.ProjectTx.
func (t *Tx) ProjectExists(name string) (bool, error) {
	var ok bool
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM projects WHERE name = ?)`, name).Scan(&ok)
	return ok, err
}

// ListProjects implements hub.ProjectTx.
func (t *Tx) ListProjects() ([]*hub.Project, error) {
	rows, err := t.query(`SELECT p.name, p.created_at, (SELECT COUNT(*) FROM agents a WHERE a.project = p.name)
		FROM projects p ORDER BY p.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ps []*hub.Project
	for rows.Next() {
		var p hub.Project
		var created int64
		if err := rows.Scan(&p.Name, &created, &p.Agents); err != nil {
			return nil, err
		}
		p.CreatedAt = row.Time(created)
		ps = append(ps, &p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Links, err = t.LinkedProjects(p.Name); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// LinkProjects implements hub.ProjectTx.
func (t *Tx) LinkProjects(a, b string, now int64) error {
	_, err := t.exec(`INSERT INTO project_links (a, b, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, a, b, now)
	return err
}

// UnlinkProjects implements hub.ProjectTx.
func (t *Tx) UnlinkProjects(a, b string) (bool, error) {
	res, err := t.exec(`DELETE FROM project_links WHERE a = ? AND b = ?`, a, b)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// LinkedProjects implements hub.ProjectTx.
func (t *Tx) LinkedProjects(name string) ([]string, error) {
	return queryColumn[string](t, `SELECT b FROM project_links WHERE a = ? UNION SELECT a FROM project_links WHERE b = ? ORDER BY 1`, name, name)
}

// projectTaken is CreateProject's error for a name in use.
func projectTaken(name string, err error) error {
	if err != nil {
		return err
	}
	return hub.ProjectNameTaken(name)
}
