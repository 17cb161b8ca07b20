package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A text the hub posts wrapped in a message of its own — a cron job's
// message, a pulse's instructions — has one cap, the message limit less the
// room for the wrapping, checked when it is set: a job accepted is never a
// job that fails every run for its length.
func TestWrappedTextsHaveOneCapCheckedWhenSet(t *testing.T) {
	t.Parallel()
	const maxBody = 16 << 10
	h := newTestHub(t, func(c *hub.Config) { c.MaxBodyBytes = maxBody })
	ctx := context.Background()
	h.agent(t, "claude")
	job := func(name string, n int) hub.CronJob {
		return hub.CronJob{Name: name, Kind: hub.CronEvery, EverySeconds: 3600, Anchor: coreT0.Add(time.Hour), Target: "claude", Message: strings.Repeat("x", n), Enabled: true}
	}
	_, _, err := h.CreateCronJob(ctx, job("long", 20<<10))
	wantCode(t, "a cron message over the message limit", err, hub.EINVALID)
	if err != nil && !strings.Contains(err.Error(), "--max-body 16384") {
		t.Errorf("refusal = %q, want it to name the message limit", err)
	}
	_, _, err = h.CreateCronJob(ctx, job("edge", maxBody-1023))
	wantCode(t, "a cron message 1 byte over", err, hub.EINVALID)
	if _, _, err := h.CreateCronJob(ctx, job("fits", maxBody-1024)); err != nil {
		t.Fatalf("a cron message at the cap: %v", err)
	}
	run, err := h.RunCronJob(ctx, "fits")
	if err != nil || run.Status != hub.CronRunOK {
		t.Fatalf("run of the job at the cap = %+v, %v, want ok", run, err)
	}

	cfg := hub.PulseConfig{Enabled: true, Interval: time.Hour, Instructions: strings.Repeat("y", maxBody-1023)}
	_, err = h.SetPulseConfig(ctx, "claude", cfg)
	wantCode(t, "pulse instructions 1 byte over", err, hub.EINVALID)
	cfg.Instructions = cfg.Instructions[1:]
	if _, err := h.SetPulseConfig(ctx, "claude", cfg); err != nil {
		t.Fatalf("pulse instructions at the cap: %v", err)
	}
	if _, _, err := h.TriggerPulse(ctx, "claude"); err != nil {
		t.Fatalf("pulse with instructions at the cap: %v", err)
	}
}

// The busy window's default is one constant, the one the settings use.
func TestPulseBusyWindowDefault(t *testing.T) {
	t.Parallel()
	if got := hub.DefaultScheduleSettings().PulseBusyWindow; got != hub.DefaultPulseBusyWindow {
		t.Errorf("the settings' busy window is %s, DefaultPulseBusyWindow %s: want one value", got, hub.DefaultPulseBusyWindow)
	}
}
