package hub

import (
	"testing"
)

func TestParseChannelRef(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ref, home string
		want      ChannelRef
		code      string
	}{
		{"#ops", "red", ChannelRef{"red", "#ops"}, ""},
		{"blue/#ops", "red", ChannelRef{"blue", "#ops"}, ""},
		{"red/#ops", "red", ChannelRef{"red", "#ops"}, ""},
		{"ops", "red", ChannelRef{}, EINVALID},
		{"Blue/#ops", "red", ChannelRef{}, EINVALID},
		{"/#ops", "red", ChannelRef{}, EINVALID},
		{"blue/ops", "red", ChannelRef{}, EINVALID},
		{"a/b/#ops", "red", ChannelRef{}, EINVALID},
	} {
		got, err := ParseChannelRef(tc.ref, tc.home)
		if ErrorCode(err) != tc.code || got != tc.want {
			t.Errorf("ParseChannelRef(%q, %q) = %+v, %v; want %+v, code %q", tc.ref, tc.home, got, err, tc.want, tc.code)
		}
	}
}

func TestOrderedLink(t *testing.T) {
	t.Parallel()
	if a, b, err := OrderedLink("red", "blue"); err != nil || a != "blue" || b != "red" {
		t.Errorf("OrderedLink(red, blue) = %q, %q, %v; want blue, red", a, b, err)
	}
	for _, tc := range [][2]string{{"red", "red"}, {"red", ""}, {"Red", "blue"}} {
		if _, _, err := OrderedLink(tc[0], tc[1]); ErrorCode(err) != EINVALID {
			t.Errorf("OrderedLink(%q, %q) = %v, want EINVALID", tc[0], tc[1], err)
		}
	}
}

func TestReach(t *testing.T) {
	t.Parallel()
	linked := Reach{Home: "red", Linked: map[string]bool{"blue": true}}
	for _, tc := range []struct {
		name       string
		r          Reach
		project    string
		sees, owns bool
	}{
		{"own project", linked, "red", true, true},
		{"linked project", linked, "blue", true, false},
		{"other project", linked, "green", false, false},
		{"no links", Reach{Home: "red"}, "blue", false, false},
		{"admin", Reach{Admin: true}, "green", true, true},
	} {
		if got := tc.r.Sees(tc.project); got != tc.sees {
			t.Errorf("%s: Sees(%s) = %v, want %v", tc.name, tc.project, got, tc.sees)
		}
		if got := tc.r.Owns(tc.project); got != tc.owns {
			t.Errorf("%s: Owns(%s) = %v, want %v", tc.name, tc.project, got, tc.owns)
		}
	}
}
