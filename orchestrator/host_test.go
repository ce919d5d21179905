package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime/memruntime"
)

// A flavor asking for more CPUs or memory than this server has is refused
// at launch and at start with a sentence naming both figures, not capped
// by the engine while billed for what it asked.
func TestLaunchRefusesFlavorAboveHost(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := openStore(t, log)
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindNone})
	if err != nil {
		t.Fatal(err)
	}
	rt := memruntime.New()
	rt.SetHost(16, 64<<30)
	m := NewManager(store, NewPool(inv, nil, store), rt, "hosttest", Options{}, log)
	t.Cleanup(m.Wait)
	img := &models.Image{Name: "mem", Image: "mem:latest", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser: "1000", HomePath: "/home/jovyan", Enabled: true}
	if err := store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	owner, err := store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	flavor := func(name string, cores int64, memGiB int64) *models.Flavor {
		f := &models.Flavor{Name: name, CPUMilli: models.Millicores(cores * 1000), MemoryMiB: memGiB << 10, ShmMiB: 64, Enabled: true}
		if err := store.CreateFlavor(ctx, f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	wide, big, fits := flavor("wide", 64, 8), flavor("big", 8, 128), flavor("fits", 16, 64)
	for _, tc := range []struct {
		fl   *models.Flavor
		want string
	}{
		{wide, "needs 64 CPUs; this server has 16"},
		{big, "needs 128 GiB of memory; this server has 64 GiB"},
		{fits, ""},
	} {
		if got := m.ExceedsHost(ctx, tc.fl); got != tc.want {
			t.Errorf("%s: ExceedsHost %q, want %q", tc.fl.Name, got, tc.want)
		}
		if tc.want == "" {
			continue
		}
		_, err := m.Launch(ctx, owner, LaunchRequest{Name: "x", Image: img.Name, Flavor: tc.fl.Name})
		var ve *models.ValidationError
		if !errors.As(err, &ve) || ve.Field != "flavor" || !strings.Contains(ve.Message, tc.want) {
			t.Errorf("launch of %s: %v, want a flavor error saying %q", tc.fl.Name, err, tc.want)
		}
		// A stopped workbench of a flavor that no longer fits (the host
		// shrank, or the flavor was seeded on a bigger one) is not started.
		wb := &models.Workbench{Name: "old-" + tc.fl.Name, OwnerID: owner.ID, ImageID: img.ID, FlavorID: tc.fl.ID, Token: "t", IdleTimeoutS: 3600}
		if err := store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
			t.Fatal(err)
		}
		if err := store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", nil); err != nil {
			t.Fatal(err)
		}
		if err := m.Start(ctx, wb.ID, owner); !errors.As(err, &ve) || !strings.Contains(ve.Message, tc.want) {
			t.Errorf("start of %s: %v, want a flavor error saying %q", tc.fl.Name, err, tc.want)
		}
	}
	if got, err := store.ListWorkbenches(ctx, owner.ID, models.ActiveStates...); err != nil || len(got) != 0 {
		t.Errorf("refused launches left %d active workbenches (%v)", len(got), err)
	}
}
