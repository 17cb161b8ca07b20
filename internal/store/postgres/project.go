package postgres

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.ProjectTx.

// CreateProject implements hub.ProjectTx. A taken name is reported
// without aborting the transaction (ON CONFLICT DO NOTHING).
func (t *Tx) CreateProject(p *hub.Project) error {
	tag, err := t.exec(`INSERT INTO projects (name, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, p.Name, row.Nanos(p.CreatedAt))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return hub.ProjectNameTaken(p.Name)
	}
	return nil
}

// ProjectExists implements hub.ProjectTx.
func (t *Tx) ProjectExists(name string) (bool, error) {
	var ok bool
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM projects WHERE name = $1)`, name).Scan(&ok)
	return ok, err
}

// ListProjects implements hub.ProjectTx.
func (t *Tx) ListProjects() ([]*hub.Project, error) {
	rows, err := t.query(`SELECT p.name, p.created_at, (SELECT COUNT(*) FROM agents a WHERE a.project = p.name),
		ARRAY(SELECT b FROM project_links WHERE a = p.name UNION SELECT a FROM project_links WHERE b = p.name ORDER BY 1)
		FROM projects p ORDER BY p.name`)
	return scanRows(rows, err, func(r pgx.Rows) (*hub.Project, error) {
		var p hub.Project
		var created int64
		err := r.Scan(&p.Name, &created, &p.Agents, &p.Links)
		p.CreatedAt, p.Links = row.Time(created), unlist(p.Links)
		return &p, err
	})
}

// LinkProjects implements hub.ProjectTx.
func (t *Tx) LinkProjects(a, b string, now int64) error {
	_, err := t.exec(`INSERT INTO project_links (a, b, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, a, b, now)
	return err
}

// UnlinkProjects implements hub.ProjectTx.
func (t *Tx) UnlinkProjects(a, b string) (bool, error) {
	tag, err := t.exec(`DELETE FROM project_links WHERE a = $1 AND b = $2`, a, b)
	return tag.RowsAffected() > 0, err
}

// LinkedProjects implements hub.ProjectTx.
func (t *Tx) LinkedProjects(name string) ([]string, error) {
	return queryColumn[string](t, `SELECT b FROM project_links WHERE a = $1 UNION SELECT a FROM project_links WHERE b = $1 ORDER BY 1`, name)
}
