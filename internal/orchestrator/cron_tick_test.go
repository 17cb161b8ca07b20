package orchestrator_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A cron period shorter than the tick is accepted with a notice saying the
// job fires once per tick (the published tick, not the default).
func TestCronPeriodShorterThanTheTickIsSaid(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(s *hub.ScheduleSettings) { s.TickInterval = 10 * time.Second })
	r.agent("claude")
	for _, tt := range []struct {
		every int64
		want  string
	}{
		{1, "shorter than the orchestrator tick (10s): the job fires once per tick, every 10s"},
		{10, ""},
		{60, ""},
	} {
		_, notice, err := r.svc.Schedule.CreateCronJob(r.ctx, hub.CronJob{
			Name: "every-" + time.Duration(tt.every*int64(time.Second)).String(), Kind: hub.CronEvery,
			EverySeconds: tt.every, Target: "claude", Message: "m", Enabled: true,
		})
		if err != nil {
			t.Fatalf("every %ds: %v", tt.every, err)
		}
		if (tt.want == "") != (notice == "") || !contains(notice, tt.want) {
			t.Errorf("every %ds: notice %q, want %q", tt.every, notice, tt.want)
		}
	}
}
