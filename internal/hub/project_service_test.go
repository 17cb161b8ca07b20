package hub_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// projectWorld is a hub with projects red and blue (and green), an agent
// in each, and blue's channel, message and reservation that red's agent
// tries to reach.
type projectWorld struct {
	h          *testHub
	r1, b1, g1 *hub.Agent
	blueMsg    *hub.Message // b1's post in blue's #general
}

func newProjectWorld(t *testing.T, link bool) *projectWorld {
	t.Helper()
	ctx := context.Background()
	h := newTestHub(t)
	for _, p := range []string{"red", "blue", "green"} {
		if _, err := h.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if link {
		if err := h.LinkProjects(ctx, "red", "blue"); err != nil {
			t.Fatal(err)
		}
	}
	w := &projectWorld{h: h}
	for _, a := range []struct {
		dst           **hub.Agent
		name, project string
	}{{&w.r1, "r1", "red"}, {&w.b1, "b1", "blue"}, {&w.g1, "g1", "green"}} {
		_, token, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: a.name, Project: a.project})
		if err != nil {
			t.Fatal(err)
		}
		*a.dst = h.auth(t, token)
	}
	h.post(t, w.r1, hub.PostRequest{Channel: "#general", Body: "red here"})
	w.blueMsg = h.post(t, w.b1, hub.PostRequest{Channel: "#general", Body: "blue secret"})
	if _, _, err := h.ReservePaths(ctx, w.b1, hub.ReservationRequest{Patterns: []string{"src"}}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestProjectIsolation is the isolation matrix: an agent of red tries to
// reach blue, without and with a red–blue link. Refusals are ENOTFOUND
// with the words an unknown name gets (nothing tells red that blue or its
// agent exists), except joining another project's channel, which is
// refused whatever the channel.
func TestProjectIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	delivered := func(w *projectWorld, a *hub.Agent, body string) bool {
		return slices.ContainsFunc(w.h.inbox(t, a), func(m *hub.Message) bool { return m.Body == body })
	}
	tests := []struct {
		name string
		// try does it as r1 and returns the error.
		try func(w *projectWorld) error
		// unlinked and linked are the codes wanted without and with the link.
		unlinked, linked string
		// check, if set, checks the outcome (linked says which world).
		check func(t *testing.T, w *projectWorld, linked bool)
	}{
		{name: "post to an agent", unlinked: hub.ENOTFOUND,
			try: func(w *projectWorld) error {
				_, err := w.h.Post(ctx, w.r1, "", hub.PostRequest{To: []string{"b1"}, Body: "psst"})
				return err
			},
			check: func(t *testing.T, w *projectWorld, linked bool) {
				if got := delivered(w, w.b1, "psst"); got != linked {
					t.Errorf("b1 got the direct message: %v, want %v", got, linked)
				}
			}},
		{name: "post to a channel", unlinked: hub.ENOTFOUND,
			try: func(w *projectWorld) error {
				_, err := w.h.Post(ctx, w.r1, "", hub.PostRequest{Channel: "blue/#general", Body: "hello blue"})
				return err
			},
			check: func(t *testing.T, w *projectWorld, linked bool) {
				if got := delivered(w, w.b1, "hello blue"); got != linked {
					t.Errorf("b1 got the channel post: %v, want %v", got, linked)
				}
				if delivered(w, w.r1, "blue secret") {
					t.Errorf("posting to blue's channel made r1 a reader of it")
				}
			}},
		{name: "post to a channel that does not exist", unlinked: hub.ENOTFOUND, linked: hub.ENOTFOUND,
			try: func(w *projectWorld) error {
				_, err := w.h.Post(ctx, w.r1, "", hub.PostRequest{Channel: "blue/#nothing", Body: "x"})
				return err
			}},
		{name: "mention explicitly", unlinked: hub.ENOTFOUND,
			try: func(w *projectWorld) error {
				_, err := w.h.Post(ctx, w.r1, "", hub.PostRequest{Channel: "#general", Mentions: []string{"b1"}, Body: "see this"})
				return err
			}},
		{name: "mention in the body",
			try: func(w *projectWorld) error {
				_, err := w.h.Post(ctx, w.r1, "", hub.PostRequest{Channel: "#general", Body: "ping @b1"})
				return err
			},
			check: func(t *testing.T, w *projectWorld, linked bool) {
				if got := delivered(w, w.b1, "ping @b1"); got != linked {
					t.Errorf("b1 got the body mention: %v, want %v", got, linked)
				}
			}},
		{name: "reply to a message", unlinked: hub.ENOTFOUND,
			try: func(w *projectWorld) error {
				_, err := w.h.Post(ctx, w.r1, "", hub.PostRequest{Channel: "#general", Body: "re", ReplyTo: hub.FormatMessageID(w.blueMsg.ID)})
				return err
			}},
		{name: "join a channel", unlinked: hub.EPERMISSION, linked: hub.EPERMISSION,
			try: func(w *projectWorld) error {
				_, err := w.h.JoinChannel(ctx, w.r1, "blue/#general")
				return err
			}},
		{name: "read messages",
			try: func(w *projectWorld) error { return nil },
			check: func(t *testing.T, w *projectWorld, _ bool) {
				if delivered(w, w.r1, "blue secret") {
					t.Errorf("r1 reads blue's channel message")
				}
			}},
		{name: "list agents",
			try: func(w *projectWorld) error { return nil },
			check: func(t *testing.T, w *projectWorld, linked bool) {
				ps, err := w.h.ListPeers(ctx, w.r1)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, p := range ps {
					names = append(names, p.Name)
				}
				want := []string{"r1"}
				if linked {
					want = []string{"b1", "r1"}
				}
				if !slices.Equal(names, want) {
					t.Errorf("ListPeers(r1) = %v, want %v", names, want)
				}
			}},
		{name: "list channels",
			try: func(w *projectWorld) error { return nil },
			check: func(t *testing.T, w *projectWorld, linked bool) {
				cs, err := w.h.ListChannels(ctx, w.r1)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, c := range cs {
					names = append(names, c.Project+"/"+c.Name)
				}
				want := []string{"red/#general"}
				if linked {
					want = []string{"blue/#general", "red/#general"}
				}
				if !slices.Equal(names, want) {
					t.Errorf("ListChannels(r1) = %v, want %v", names, want)
				}
			}},
		{name: "reserve",
			try: func(w *projectWorld) error {
				_, conflicts, err := w.h.ReservePaths(ctx, w.r1, hub.ReservationRequest{Patterns: []string{"src"}})
				if len(conflicts) > 0 {
					t.Errorf("r1's reservation conflicts with %v: projects reserve apart", conflicts)
				}
				return err
			}},
		{name: "list reservations",
			try: func(w *projectWorld) error { return nil },
			check: func(t *testing.T, w *projectWorld, _ bool) {
				rs, err := w.h.ListReservations(ctx, hub.ReservationFilter{Project: "red"})
				if err != nil || len(rs) != 0 {
					t.Errorf("red's reservations = %v, %v; want none (b1's are blue's)", rs, err)
				}
				_, err = w.h.ListReservations(ctx, hub.ReservationFilter{Project: "red", Agent: "b1"})
				wantCode(t, "red lists b1's reservations", err, hub.ENOTFOUND)
			}},
		{name: "a link is not transitive", unlinked: hub.ENOTFOUND, linked: hub.ENOTFOUND,
			try: func(w *projectWorld) error {
				if err := w.h.LinkProjects(ctx, "green", "red"); err != nil {
					t.Fatal(err)
				}
				_, err := w.h.Post(ctx, w.g1, "", hub.PostRequest{To: []string{"b1"}, Body: "via red"})
				return err
			}},
	}
	for _, tt := range tests {
		for _, linked := range []bool{false, true} {
			name := tt.name + "/unlinked"
			want := tt.unlinked
			if linked {
				name, want = tt.name+"/linked", tt.linked
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				w := newProjectWorld(t, linked)
				wantCode(t, tt.name, tt.try(w), want)
				if tt.check != nil {
					tt.check(t, w, linked)
				}
			})
		}
	}
}

// TestProjectRefusalsLeakNothing: what an agent of red is told about
// blue's agent, channel and message is word for word what it is told
// about ones that do not exist (the name or ID it gave aside).
func TestProjectRefusalsLeakNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newProjectWorld(t, false)
	refusal := func(req hub.PostRequest, given string) string {
		_, err := w.h.Post(ctx, w.r1, "", req)
		wantCode(t, "post "+given, err, hub.ENOTFOUND)
		return strings.ReplaceAll(hub.ErrorMessage(err), given, "X")
	}
	blueID := hub.FormatMessageID(w.blueMsg.ID)
	for _, tc := range []struct {
		name            string
		hidden, missing string
	}{
		{"agent", refusal(hub.PostRequest{To: []string{"b1"}, Body: "x"}, "b1"), refusal(hub.PostRequest{To: []string{"b9"}, Body: "x"}, "b9")},
		{"mention", refusal(hub.PostRequest{Channel: "#general", Mentions: []string{"b1"}, Body: "x"}, "b1"),
			refusal(hub.PostRequest{Channel: "#general", Mentions: []string{"b9"}, Body: "x"}, "b9")},
		{"reply", refusal(hub.PostRequest{Channel: "#general", ReplyTo: blueID, Body: "x"}, blueID),
			refusal(hub.PostRequest{Channel: "#general", ReplyTo: "999999", Body: "x"}, "999999")},
		{"channel", refusal(hub.PostRequest{Channel: "blue/#general", Body: "x"}, "blue"),
			refusal(hub.PostRequest{Channel: "nowhere/#general", Body: "x"}, "nowhere")},
	} {
		if tc.hidden != tc.missing {
			t.Errorf("%s of another project: %q; one that does not exist: %q", tc.name, tc.hidden, tc.missing)
		}
	}
}

// A join code registers its agents in its project; a code for a project
// that does not exist is refused.
func TestJoinCodeProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	if _, _, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{Project: "red"}); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("join code for a missing project: %v, want ENOTFOUND", err)
	}
	if _, err := h.CreateProject(ctx, "red"); err != nil {
		t.Fatal(err)
	}
	c, code, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{Project: "red"})
	if err != nil || c.Project != "red" {
		t.Fatalf("CreateJoinCode(red) = %+v, %v", c, err)
	}
	a, token, err := h.Join(ctx, hub.JoinRequest{Code: code, Name: "joiner"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Project != "red" || h.auth(t, token).Project != "red" {
		t.Errorf("joined agent's project = %q, want red", a.Project)
	}
}

// Search: an agent finds only messages delivered to it (never another
// project's channel), the project filter is the admin's.
func TestSearchAndProjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newProjectWorld(t, true)
	hits, _, err := w.h.Search(ctx, w.r1, hub.SearchRequest{Query: "secret"})
	if err != nil || len(hits) != 0 {
		t.Errorf("r1 searches for blue's channel message: %d hits, %v; want none", len(hits), err)
	}
	_, _, err = w.h.Search(ctx, w.r1, hub.SearchRequest{Query: "secret", Project: "blue"})
	wantCode(t, "an agent's search with a project filter", err, hub.EINVALID)
	for project, want := range map[string]int{"blue": 1, "red": 0} {
		hits, _, err := w.h.AdminSearch(ctx, hub.SearchRequest{Query: "secret", Project: project})
		if err != nil || len(hits) != want {
			t.Errorf("admin search in %s = %d hits, %v; want %d", project, len(hits), err, want)
		}
	}
}
