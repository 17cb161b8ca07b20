package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// userConfig is a user's ~/.claude.json with another server's secret.
const userConfig = `{"mcpServers": {"other": {"command": "other-mcp", "env": {"OTHER_TOKEN": "secret-of-another-server"}}}}`

func symlinkOpts(home, project string) Options {
	return Options{Host: "claude", Home: home, Project: project, HubPath: "/usr/local/bin/hub", Addr: "127.0.0.1:7700", TokenFile: filepath.Join(home, ".config", "agent-hub", "a.token")}
}

func mustWrite(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func isLink(t *testing.T, path string) bool {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()&os.ModeSymlink != 0
}

// TestProjectLinkLeavingTheProjectIsRefused: a project file (or a
// directory on its way) that is a symlink out of the project would carry
// the user's own config, secrets included, into a file meant to be
// committed. Setup refuses, naming the link and its target, and writes
// nothing.
func TestProjectLinkLeavingTheProjectIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, home, proj string) (link, target string)
	}{
		{"file", func(t *testing.T, home, proj string) (string, string) {
			mustLink(t, filepath.Join(home, ".claude.json"), filepath.Join(proj, ".mcp.json"))
			return filepath.Join(proj, ".mcp.json"), filepath.Join(home, ".claude.json")
		}},
		{"relative", func(t *testing.T, home, proj string) (string, string) {
			mustLink(t, "../home/.claude.json", filepath.Join(proj, ".mcp.json"))
			return filepath.Join(proj, ".mcp.json"), filepath.Join(home, ".claude.json")
		}},
		{"directory", func(t *testing.T, home, proj string) (string, string) {
			mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"theme": "dark"}`, 0o644)
			mustLink(t, filepath.Join(home, ".claude"), filepath.Join(proj, ".claude"))
			return filepath.Join(proj, ".claude"), filepath.Join(home, ".claude")
		}},
		{"dangling", func(t *testing.T, home, proj string) (string, string) {
			mustLink(t, filepath.Join(home, "nowhere.json"), filepath.Join(proj, ".mcp.json"))
			return filepath.Join(proj, ".mcp.json"), filepath.Join(home, "nowhere.json")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
			mustWrite(t, filepath.Join(home, ".claude.json"), userConfig, 0o600)
			if err := os.MkdirAll(proj, 0o755); err != nil {
				t.Fatal(err)
			}
			link, target := tc.make(t, home, proj)
			changes, err := Plan(symlinkOpts(home, proj))
			if err == nil {
				_, err = Apply(changes, time.Now())
				t.Errorf("Plan accepted a project path linked out of the project (Apply: %v)", err)
			} else if !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), target) || !strings.Contains(err.Error(), "outside the project") {
				t.Errorf("error %q: want the link %s, its target %s and why", err, link, target)
			}
			if b, _ := os.ReadFile(filepath.Join(home, ".claude.json")); string(b) != userConfig {
				t.Errorf("the user's config changed:\n%s", b)
			}
			if !isLink(t, link) {
				t.Errorf("%s was replaced", link)
			}
		})
	}
}

// TestProjectLinkInsideTheProjectIsFollowed: a link that stays in the
// project is edited at its target and kept.
func TestProjectLinkInsideTheProjectIsFollowed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	mustWrite(t, filepath.Join(proj, "config", "mcp.json"), `{"mcpServers": {}}`, 0o644)
	mustLink(t, filepath.Join("config", "mcp.json"), filepath.Join(proj, ".mcp.json"))
	changes, err := Plan(symlinkOpts(home, proj))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(changes, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !isLink(t, filepath.Join(proj, ".mcp.json")) {
		t.Error("the in-project link was replaced by a file")
	}
	if m := readJSON(t, filepath.Join(proj, "config", "mcp.json")); m["mcpServers"].(map[string]any)["hub"] == nil {
		t.Errorf("the link's target lacks the hub: %v", m)
	}
}

// TestUserLinkIsEditedInPlace: a user file that is a dotfiles symlink
// stays a symlink; its target gets the hub, keeps the rest and its mode;
// the backup is a new regular file beside the link.
func TestUserLinkIsEditedInPlace(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dot := filepath.Join(home, "dotfiles", "claude.json")
	mustWrite(t, dot, userConfig, 0o600)
	mustLink(t, dot, filepath.Join(home, ".claude.json"))
	changes, err := Plan(symlinkOpts(home, ""))
	if err != nil {
		t.Fatal(err)
	}
	backups, err := Apply(changes, time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !isLink(t, filepath.Join(home, ".claude.json")) {
		t.Fatal("the dotfiles symlink was replaced by a regular file")
	}
	m := readJSON(t, dot)
	servers := m["mcpServers"].(map[string]any)
	if servers["hub"] == nil || servers["other"] == nil {
		t.Errorf("the target holds %v: want the hub beside the other server", servers)
	}
	if st, _ := os.Stat(dot); st.Mode().Perm() != 0o600 {
		t.Errorf("the target's mode is %v, want 0600 kept", st.Mode().Perm())
	}
	if len(backups) != 1 || filepath.Dir(backups[0]) != home || !strings.HasPrefix(filepath.Base(backups[0]), ".claude.json.bak-") {
		t.Fatalf("backups %v: want one beside the link", backups)
	}
	if isLink(t, backups[0]) {
		t.Error("the backup is a link")
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != userConfig {
		t.Errorf("the backup holds %q", b)
	}
}

// TestBackupIsCreatedExclusively: a link planted at the backup's name
// (another user's, or a stale one) is never written through; the backup
// takes another name.
func TestBackupIsCreatedExclusively(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	mustWrite(t, victim, "untouched", 0o644)
	mustWrite(t, filepath.Join(home, ".claude.json"), userConfig, 0o600)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	planted := filepath.Join(home, ".claude.json.bak-"+now.Format("20060102-150405"))
	mustLink(t, victim, planted)
	changes, err := Plan(symlinkOpts(home, ""))
	if err != nil {
		t.Fatal(err)
	}
	backups, err := Apply(changes, now)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("the backup was written through the planted link: %q", b)
	}
	if len(backups) != 1 || backups[0] == planted || isLink(t, backups[0]) {
		t.Fatalf("backups %v: want one regular file under another name than %s", backups, planted)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != userConfig {
		t.Errorf("the backup holds %q", b)
	}
	if st, _ := os.Stat(backups[0]); st.Mode().Perm() != 0o600 {
		t.Errorf("the backup's mode is %v, want the file's 0600", st.Mode().Perm())
	}
}

// TestDirectoriesAreCreatedPrivate: the directories setup creates (for
// the settings and the token file) are 0700.
func TestDirectoriesAreCreatedPrivate(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	o := symlinkOpts(home, "")
	changes, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := TokenFileChange(o.TokenFile, "ahk_x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(append(changes, tc), time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(home, ".claude"), filepath.Join(home, ".config"), filepath.Join(home, ".config", "agent-hub")} {
		st, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o700 {
			t.Errorf("%s was created %v, want 0700", dir, st.Mode().Perm())
		}
	}
}
