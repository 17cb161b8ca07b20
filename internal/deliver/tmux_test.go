package deliver

import (
	"strings"
	"testing"
)

func TestExpect(t *testing.T) {
	t.Parallel()
	def, err := ParseExpect(strings.Join(DefaultExpect, ","))
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]bool{
		"claude": true, "codex": true, "gemini": true, "2.1.34": true, "/usr/bin/claude": true,
		"bash": false, "-zsh": false, "script": false, "sudo": false, "ssh": false, "mosh-client": false,
		"docker": false, "node": false, "python3": false, "": false,
	} {
		if got := def.Allows(Pane{Command: cmd}); got != want {
			t.Errorf("default Allows(%q) = %v, want %v", cmd, got, want)
		}
	}
	// A pattern that matches a shell still never lets one through.
	wide, err := ParseExpect("node, *")
	if err != nil {
		t.Fatal(err)
	}
	if !wide.Allows(Pane{Command: "node"}) || wide.Allows(Pane{Command: "bash"}) || wide.Allows(Pane{Command: "fish"}) {
		t.Errorf("--expect '*' let a shell through or refused node")
	}
	for _, bad := range []string{"", " , ", "bash", "claude,zsh", "[", "-fish"} {
		if _, err := ParseExpect(bad); err == nil {
			t.Errorf("ParseExpect(%q) accepted", bad)
		}
	}
}
