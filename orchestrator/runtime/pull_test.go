package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"workbench/internal/testsupport/testimages"
)

// TestEnsureImagePulls pulls a fresh image from an in-process registry and
// checks the progress reports the portal shows during "pulling".
func TestEnsureImagePulls(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	reg, err := testimages.ServeRandomImage(ctx, e.d.cli, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	t.Cleanup(func() {
		_, _ = e.d.cli.ImageRemove(context.Background(), reg.Ref, image.RemoveOptions{Force: true, PruneChildren: true})
	})

	var pcts []int
	var statuses []string
	err = e.d.EnsureImage(ctx, reg.Ref, func(pct int, status string) {
		pcts = append(pcts, pct)
		statuses = append(statuses, status)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("progress: %v", pcts)
	if len(pcts) < 3 || pcts[0] != 0 || pcts[len(pcts)-1] != 100 || !slices.IsSorted(pcts) {
		t.Errorf("progress %v: want 0 first, 100 last, never decreasing, something in between", pcts)
	}
	if !slices.ContainsFunc(statuses, func(s string) bool { return s == "Downloading" || s == "Extracting" }) {
		t.Errorf("statuses %q: no layer progress seen", statuses)
	}
	if _, err := e.d.cli.ImageInspect(ctx, reg.Ref); err != nil {
		t.Errorf("image not there after pull: %v", err)
	}

	// An unknown tag on a registry that answers is a readable error too.
	missing := strings.TrimSuffix(reg.Ref, reg.Ref[strings.LastIndex(reg.Ref, ":"):]) + ":nope"
	err = e.d.EnsureImage(ctx, missing, nil)
	var pe *PullError
	if !errors.As(err, &pe) || !strings.Contains(pe.Details, "manifest unknown") || !strings.Contains(pe.Reason, "does not exist on "+pe.Registry) {
		t.Errorf("EnsureImage(%s) = %v, want PullError about the manifest", missing, err)
	}
	t.Logf("EnsureImage(%s): %v", missing, err)
}
