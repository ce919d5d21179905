package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// A Test image run the portal was killed in is closed by the next process,
// and what it left on the engine goes: its container, and its throwaway
// volume, which nothing else would ever remove.
func TestMemInterruptedImageTestLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	img := r.wb.ImageID
	// The run began a minute ago, under the previous process.
	r.store.SetClock(func() time.Time { return time.Now().Add(-time.Minute) })
	check, err := r.store.CreateImageCheck(ctx, img, "admin")
	r.store.SetClock(time.Now)
	if err != nil {
		t.Fatal(err)
	}
	// What the run had made when the process died.
	vol := "wb-imagetest-memtest-" + strconv.FormatInt(check.ID, 10)
	if _, err := r.rt.EnsureVolume(ctx, vol, nil); err != nil {
		t.Fatal(err)
	}
	r.rt.AddContainer(runtime.ContainerInfo{ID: "c-test", Name: "/wb-memtest-imagetest-" + strconv.FormatInt(check.ID, 10), State: "running", Running: true,
		Labels: map[string]string{runtime.LabelKind: kindImageTest}})

	// The next process.
	next := NewManager(r.store, r.m.pool, r.rt, "memtest", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(next.Wait)
	next.failInterruptedImageChecks(ctx)

	got, err := r.store.ImageCheckByID(ctx, img, check.ID)
	if err != nil || got.State != models.CheckFailed || !strings.Contains(got.Message, "restarted") {
		t.Fatalf("the interrupted run: %+v (%v)", got, err)
	}
	if _, ok := r.rt.Container("c-test"); ok {
		t.Error("its container is still there")
	}
	if r.rt.HasVolume(vol) {
		t.Error("its volume is still there")
	}
}
