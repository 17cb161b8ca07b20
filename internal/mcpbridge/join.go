package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// DefaultTokenFile is where an agent that registered with a join code
// keeps its token when no file is named: agent-hub/NAME.token in the
// user's configuration directory ($XDG_CONFIG_HOME, else ~/.config, on
// Linux). The hub checks the name when it registers it; here it only
// has to be a plain file name.
func DefaultTokenFile(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("agent name %q cannot name a token file: give 1-63 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit", name)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for the token file (give one with --token-file): %w", err)
	}
	return filepath.Join(dir, "agent-hub", name+".token"), nil
}

// joinRetryFor bounds how long JoinOnce retries a hub that is down or
// over its join budget.
const joinRetryFor = 30 * time.Second

// JoinOnce returns the token kept in tokenFile (clock times its retries). When the file does not
// exist yet, it registers agent name at the hub at addr with the join code
// and keeps the new token there (mode 0600, its directory created 0700)
// before returning it; joined is then true. So a host may run it at every
// start: it registers once. The file is created before the hub is asked,
// so a token is never issued that cannot be kept. A hub that is down or
// over its join budget is retried for up to 30 seconds; a refused code or
// a taken name is returned at once with the hub's reason.
func JoinOnce(ctx context.Context, clock hub.Clock, addr, code, name, tokenFile string) (token string, joined bool, err error) {
	if b, err := os.ReadFile(tokenFile); err == nil {
		if token = strings.TrimSpace(string(b)); token == "" {
			return "", false, fmt.Errorf("token file %s is empty: delete it to register again with the join code", tokenFile)
		}
		return token, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("read the token file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(tokenFile), 0o700); err != nil {
		return "", false, fmt.Errorf("create the token file's directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(tokenFile), "."+filepath.Base(tokenFile)+".*") // mode 0600
	if err != nil {
		return "", false, fmt.Errorf("create the token file: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	defer tmp.Close()

	conn, err := Dial(addr, strings.TrimSpace(code))
	if err != nil {
		return "", false, err
	}
	defer conn.Close()
	client := hubv1.NewAgentServiceClient(conn)
	deadline := clock.Now().Add(joinRetryFor)
	var r *hubv1.JoinHubResponse
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 4*time.Second) {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r, err = client.JoinHub(cctx, &hubv1.JoinHubRequest{Name: name})
		cancel()
		c := status.Code(err)
		if err == nil || (c != codes.Unavailable && c != codes.ResourceExhausted && c != codes.DeadlineExceeded) || clock.Now().Add(wait).After(deadline) {
			break
		}
		if !sleep(ctx, clock, wait) {
			return "", false, ctx.Err()
		}
	}
	if err != nil {
		return "", false, fmt.Errorf("join the hub at %s as %q: %s", addr, name, status.Convert(err).Message())
	}
	token = r.GetToken()
	if err := keep(tmp, token, tokenFile); err != nil {
		return "", false, fmt.Errorf("keep the token of agent %q, registered now (an admin can issue another with `hubctl agent token rotate %s`): %w", name, name, err)
	}
	return token, true, nil
}

// keep writes token to tmp, flushes it to disk and renames tmp to path.
func keep(tmp *os.File, token, path string) error {
	if _, err := tmp.WriteString(token + "\n"); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
