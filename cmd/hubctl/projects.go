package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

func projectsList(ctx context.Context, c *cli, args []string) error {
	if err := c.noArgs(c.flags("projects"), args, "projects"); err != nil {
		return err
	}
	r, err := c.admin.ListProjects(ctx, &hubv1.ListProjectsRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	rows := make([][]string, 0, len(r.GetProjects()))
	for _, p := range r.GetProjects() {
		rows = append(rows, []string{p.GetName(), strconv.FormatInt(p.GetAgentCount(), 10), dash(strings.Join(p.GetLinks(), ","))})
	}
	c.table([]string{"PROJECT", "AGENTS", "LINKED TO"}, rows)
	return nil
}

func projectsCreate(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("projects create")
	name, err := c.oneName(fs, args, "project")
	if err != nil {
		return err
	}
	r, err := c.admin.CreateProject(ctx, &hubv1.CreateProjectRequest{Name: name})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Created project %s: add agents with `hubctl agent add NAME --project %s`.\n", name, name)
	return nil
}

// projectsLink returns `projects link` (link) or `projects unlink`.
func projectsLink(link bool) func(context.Context, *cli, []string) error {
	name := "projects unlink"
	if link {
		name = "projects link"
	}
	return func(ctx context.Context, c *cli, args []string) error {
		fs := c.flags(name)
		pos, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 2 {
			return usageErrorf("give two projects, PROJECT OTHER; got %q", pos)
		}
		if link {
			_, err = c.admin.LinkProjects(ctx, &hubv1.LinkProjectsRequest{Project: pos[0], Other: pos[1]})
		} else {
			_, err = c.admin.UnlinkProjects(ctx, &hubv1.UnlinkProjectsRequest{Project: pos[0], Other: pos[1]})
		}
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(map[string]any{"project": pos[0], "other": pos[1], "linked": link})
		}
		if link {
			fmt.Fprintf(c.out, "Linked %s and %s: their agents may list and message each other's agents and channels.\n", pos[0], pos[1])
		} else {
			fmt.Fprintf(c.out, "Unlinked %s and %s.\n", pos[0], pos[1])
		}
		return nil
	}
}
