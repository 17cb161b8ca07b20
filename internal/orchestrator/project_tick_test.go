package orchestrator_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestTickAcrossProjects: nudges and pulses reach each agent whatever its
// project, each in its own project; a cron job of one project posts to
// that project's channel only, not to a channel of the same name in
// another project; a pulse answer goes to the agent's own project.
func TestTickAcrossProjects(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, p := range []string{"red", "blue"} {
		if _, err := r.svc.Projects.CreateProject(r.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[string]string{}
	for name, project := range map[string]string{"d1": "", "r1": "red", "b1": "blue"} {
		a, token, err := r.svc.Agents.CreateAgent(r.ctx, hub.CreateAgentRequest{Name: name, Project: project})
		if err != nil {
			t.Fatal(err)
		}
		r.agents[token], tokens[name] = a, token
		if _, err := r.svc.Messages.JoinChannel(r.ctx, a, "#ops"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"r1", "b1"} {
		if _, err := r.svc.Schedule.SetPulseConfig(r.ctx, name, hub.PulseConfig{Enabled: true, Interval: time.Hour, Instructions: "Check reminders."}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := r.svc.Schedule.CreateCronJob(r.ctx, hub.CronJob{Name: "standup", Kind: hub.CronEvery, EverySeconds: 3600,
		Project: "blue", Target: "#ops", Message: "blue standup", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	r.tick()
	rep := r.run(70*time.Minute, 5*time.Second)
	if rep.CronRuns == 0 {
		t.Fatalf("no cron run in 70 minutes: %+v", rep)
	}
	for name, project := range map[string]string{"d1": hub.DefaultProject, "r1": "red", "b1": "blue"} {
		ns := r.inbox(tokens[name], hub.KindNudge)
		if len(ns) == 0 || ns[0].Project != project {
			t.Errorf("%s's nudges = %+v, want at least one of project %s", name, ns, project)
		}
		pulses := r.inbox(tokens[name], hub.KindHeartbeat)
		if wantPulse := name != "d1"; (len(pulses) > 0) != wantPulse || wantPulse && pulses[0].Project != project {
			t.Errorf("%s's pulses = %+v; want one of project %s: %v", name, pulses, project, wantPulse)
		}
		crons := r.inbox(tokens[name], hub.KindCron)
		if wantCron := name == "b1"; (len(crons) > 0) != wantCron {
			t.Errorf("%s got %d cron posts; want them only in blue's #ops (%v)", name, len(crons), wantCron)
		}
	}
	reply, err := r.svc.Schedule.RespondToPulse(r.ctx, r.call(tokens["r1"]), "found two reminders")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Message == nil || reply.Message.Project != "red" {
		t.Errorf("r1's pulse answer = %+v, want a post in project red", reply.Message)
	}
}
