package runtime

import (
	"context"
	"testing"
	"time"
)

// On the real engine: a `docker stop` leaves a kill and a stop in the
// engine's history within the run it ended (whatever the exit code: the
// fake Jupyter exits on SIGTERM), and none within the next run, which the
// portal would take for an exit on its own.
func TestStopAskedFindsADockerStop(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	net := e.network(t, ctx, "dave")
	c, _ := e.start(t, ctx, e.spec("stopped", net, ""))
	if err := e.d.Stop(ctx, c.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	ran, err := e.d.Inspect(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ran.Running || ran.FinishedAt.IsZero() {
		t.Fatalf("after the stop: %+v", ran)
	}
	asked, err := e.d.StopAsked(ctx, e.install, "stopped", ran.StartedAt, ran.FinishedAt)
	if err != nil || !asked {
		t.Errorf("StopAsked over the stopped run = %v, %v; want true (exit code %d)", asked, err, ran.ExitCode)
	}
	if asked, err := e.d.StopAsked(ctx, e.install+"-other", "stopped", ran.StartedAt, ran.FinishedAt); err != nil || asked {
		t.Errorf("StopAsked for another install = %v, %v; want false", asked, err)
	}
	// Started again: the stop belongs to the run before.
	if err := e.d.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	again, err := e.d.Inspect(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if asked, err := e.d.StopAsked(ctx, e.install, "stopped", again.StartedAt, time.Now()); err != nil || asked {
		t.Errorf("StopAsked over the next run = %v, %v; want false", asked, err)
	}
}
