package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// testProjects: projects and their links, the project of agents,
// messages, channels and reservations as written and read back, and
// channel names unique per project only.
func testProjects(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	mustUpdate(t, db, func(tx hub.Tx) error {
		for _, n := range []string{"red", "blue", "green"} {
			if err := tx.CreateProject(&hub.Project{Name: n, CreatedAt: t0}); err != nil {
				return err
			}
		}
		if err := tx.CreateProject(&hub.Project{Name: "red", CreatedAt: t0}); hub.ErrorCode(err) != hub.ECONFLICT {
			t.Errorf("CreateProject of a taken name = %v, want ECONFLICT", err)
		}
		if err := tx.CreateProject(&hub.Project{Name: hub.DefaultProject, CreatedAt: t0}); hub.ErrorCode(err) != hub.ECONFLICT {
			t.Errorf("CreateProject(default) = %v, want ECONFLICT: the schema creates it", err)
		}
		for _, l := range [][2]string{{"blue", "red"}, {"blue", "red"}, {"green", "red"}} { // linking twice is a no-op
			if err := tx.InsertProjectLink(l[0], l[1], t0.UnixNano()); err != nil {
				return err
			}
		}
		return nil
	})
	red := &hub.Agent{Name: "r1", Project: "red", CreatedAt: t0}
	blue := &hub.Agent{Name: "b1", Project: "blue", CreatedAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error {
		for _, a := range []*hub.Agent{red, blue} {
			if err := tx.CreateAgent(a, hub.HashToken("token-"+a.Name)); err != nil {
				return err
			}
		}
		return tx.CreateAgent(&hub.Agent{Name: "d1", CreatedAt: t0}, hub.HashToken("token-d1")) // no project: default
	})
	mustView(t, db, func(tx hub.Tx) error {
		for _, tc := range []struct{ project, want string }{
			{"red", "[blue green]"}, {"blue", "[red]"}, {"green", "[red]"}, {hub.DefaultProject, "[]"}, {"nowhere", "[]"},
		} {
			got, err := tx.LinkedProjects(tc.project)
			if err != nil {
				return err
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("LinkedProjects(%s) = %v, want %s", tc.project, got, tc.want)
			}
		}
		ps, err := tx.ListProjects()
		if err != nil {
			return err
		}
		var got []string
		for _, p := range ps {
			got = append(got, fmt.Sprintf("%s:%d:%v", p.Name, p.Agents, p.Links))
		}
		if want := []string{"blue:1:[red]", "default:1:[]", "green:0:[red]", "red:1:[blue green]"}; !slices.Equal(got, want) {
			t.Errorf("ListProjects = %v, want %v", got, want)
		}
		for name, want := range map[string]bool{"red": true, hub.DefaultProject: true, "nowhere": false} {
			if ok, err := tx.ProjectExists(name); err != nil || ok != want {
				t.Errorf("ProjectExists(%s) = %v, %v; want %v", name, ok, err, want)
			}
		}
		for name, want := range map[string]string{"r1": "red", "b1": "blue", "d1": hub.DefaultProject} {
			a, err := tx.AgentByName(name)
			if err != nil {
				return err
			}
			if a.Project != want {
				t.Errorf("agent %s project = %q, want %q", name, a.Project, want)
			}
		}
		return nil
	})
	mustUpdate(t, db, func(tx hub.Tx) error {
		if ok, err := tx.DeleteProjectLink("green", "red"); err != nil || !ok {
			t.Errorf("DeleteProjectLink(green, red) = %v, %v; want true", ok, err)
		}
		if ok, err := tx.DeleteProjectLink("green", "red"); err != nil || ok {
			t.Errorf("DeleteProjectLink again = %v, %v; want false", ok, err)
		}
		return nil
	})

	// "#general" of two projects: two channels, each with its members.
	var redGeneral, blueGeneral int64
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		if redGeneral, err = tx.EnsureChannel("red", "#general", t0); err != nil {
			return err
		}
		if blueGeneral, err = tx.EnsureChannel("blue", "#general", t0); err != nil {
			return err
		}
		if again, err := tx.EnsureChannel("red", "#general", t0); err != nil || again != redGeneral {
			t.Errorf("EnsureChannel(red, #general) again = %d, %v; want %d", again, err, redGeneral)
		}
		if err := tx.InsertChannelMember(redGeneral, red.ID, t0); err != nil {
			return err
		}
		return tx.InsertChannelMember(blueGeneral, blue.ID, t0)
	})
	if redGeneral == blueGeneral {
		t.Fatalf("#general of red and of blue are one channel (%d)", redGeneral)
	}
	mustView(t, db, func(tx hub.Tx) error {
		if _, err := tx.ChannelByName("green", "#general"); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("ChannelByName(green, #general) = %v, want ENOTFOUND", err)
		}
		if id, err := tx.ChannelByName("blue", "#general"); err != nil || id != blueGeneral {
			t.Errorf("ChannelByName(blue, #general) = %d, %v; want %d", id, err, blueGeneral)
		}
		cs, err := tx.ListChannels(red.ID)
		if err != nil {
			return err
		}
		if got, want := fmt.Sprint(cs), "[{blue #general 1 false} {red #general 1 true}]"; got != want {
			t.Errorf("ListChannels = %s, want %s", got, want)
		}
		return nil
	})

	// Messages keep their project; the admin's list filters by it.
	mustUpdate(t, db, func(tx hub.Tx) error {
		ms := []*hub.Message{
			{Project: "red", From: "r1", Channel: "#general", Body: "one", Kind: hub.KindMessage, CreatedAt: t0},
			{Project: "blue", From: "b1", Channel: "#general", Body: "two", Kind: hub.KindMessage, CreatedAt: t0},
		}
		if err := tx.InsertMessages(ms, [][]hub.Delivery{{{AgentID: red.ID}}, {{AgentID: blue.ID}}}); err != nil {
			return err
		}
		return tx.InsertMessage(&hub.Message{Project: "red", From: "r1", To: []string{"b1"}, Body: "three", Kind: hub.KindMessage, CreatedAt: t0},
			[]hub.Delivery{{AgentID: blue.ID}})
	})
	mustView(t, db, func(tx hub.Tx) error {
		for _, tc := range []struct {
			q    hub.MessageQuery
			want string
		}{
			{hub.MessageQuery{Limit: 10}, "[red:one blue:two red:three]"},
			{hub.MessageQuery{Project: "red", Limit: 10}, "[red:one red:three]"},
			{hub.MessageQuery{Project: "blue", Channel: "#general", Limit: 10}, "[blue:two]"},
			{hub.MessageQuery{Project: "green", Limit: 10}, "[]"},
			{hub.MessageQuery{Projects: []string{"blue"}, Limit: 10}, "[blue:two]"},
			{hub.MessageQuery{Projects: []string{"green", "red"}, Limit: 10, Newest: true}, "[red:one red:three]"},
		} {
			ms, err := tx.ListMessages(tc.q)
			if err != nil {
				return err
			}
			var got []string
			for _, m := range ms {
				got = append(got, m.Project+":"+m.Body)
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("ListMessages(%+v) = %v, want %s", tc.q, got, tc.want)
			}
		}
		in, err := tx.Inbox(blue.ID, hub.InboxQuery{Limit: 10})
		if err != nil {
			return err
		}
		if len(in) != 2 || in[0].Project != "blue" || in[1].Project != "red" {
			t.Errorf("blue's inbox = %+v, want the blue channel message then red's direct one", in)
		}
		return nil
	})

	// The admin's search filters by project too.
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.InsertMessages([]*hub.Message{
			{Project: "red", From: "r1", Channel: "#general", Body: "rocket launch", Kind: hub.KindMessage, CreatedAt: t0},
			{Project: "blue", From: "b1", Channel: "#general", Body: "rocket launch", Kind: hub.KindMessage, CreatedAt: t0},
		}, [][]hub.Delivery{{{AgentID: red.ID}}, {{AgentID: blue.ID}}})
	})
	mustView(t, db, func(tx hub.Tx) error {
		for project, want := range map[string]int{"": 2, "blue": 1, "green": 0} {
			hits, err := tx.SearchMessages(hub.SearchQuery{Terms: [][]string{{"rocket"}}, Project: project, Limit: 10})
			if err != nil {
				return err
			}
			if len(hits) != want || (project != "" && want > 0 && hits[0].Message.Project != project) {
				t.Errorf("SearchMessages(rocket, project %q) = %d hits, want %d of that project", project, len(hits), want)
			}
		}
		return nil
	})

	// A reservation is of its holder's project.
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.InsertReservations([]*hub.Reservation{
			{AgentID: red.ID, Pattern: "src", Mode: hub.ReservationExclusive, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
			{AgentID: blue.ID, Pattern: "src", Mode: hub.ReservationExclusive, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		})
	})
	mustView(t, db, func(tx hub.Tx) error {
		rs, err := tx.ActiveReservations(t0, 0)
		if err != nil {
			return err
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.AgentName+":"+r.Project)
		}
		slices.Sort(got)
		if want := []string{"b1:blue", "r1:red"}; !slices.Equal(got, want) {
			t.Errorf("reservations = %v, want %v", got, want)
		}
		return nil
	})
}
