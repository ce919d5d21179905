package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
)

// TestLaunchDefaultIdleWithinQuota: a launch that names no idle timeout
// gets the portal's default brought within the user's quota bounds (as the
// launch form offers it), not the default refused by the quota.
func TestLaunchDefaultIdleWithinQuota(t *testing.T) {
	t.Parallel()
	r := newUnitRig(t)
	ctx := context.Background()
	lo, hi := int64(15), int64(20)
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.owner.ID, models.Limits{MinIdleMinutes: &lo, MaxIdleMinutes: &hi}, "admin"); err != nil {
		t.Fatal(err)
	}
	if r.m.opt.DefaultIdle <= 20*time.Minute {
		t.Fatalf("the portal's default idle timeout %s is already within the quota: the test shows nothing", r.m.opt.DefaultIdle)
	}
	wb := r.launchRunning(t, "quiet", "whole")
	if wb.IdleTimeoutS != 20*60 {
		t.Fatalf("idle timeout %d s, want the quota's most, 1200 s", wb.IdleTimeoutS)
	}
	// One the user names outside the bounds is still refused.
	_, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "long", Image: "mem", Flavor: "slice", IdleTimeout: time.Hour})
	if refusedCode(err) != "quota_exceeded" {
		t.Fatalf("an hour asked with a quota of at most 20 min: %v", err)
	}
}
