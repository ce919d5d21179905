package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"workbench/models"
)

// `workbench queue move ID POSITION` reorders a data directory's queue
// (audited as cli); the portal's next drain applies the order.
func TestQueueMoveCLI(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := models.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	img := &models.Image{Name: "img", Image: "img:1", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser: "1000", HomePath: "/home/jovyan", Enabled: true}
	fl := &models.Flavor{Name: "one", GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
	u, err := s.CreateUser(ctx, models.NewUser{Username: "ada", Password: "ada-password-1", Role: "user"})
	if err != nil || s.CreateImage(ctx, img) != nil || s.CreateFlavor(ctx, fl) != nil {
		t.Fatalf("seed: %v", err)
	}
	var ids []string
	for i, name := range []string{"a", "b", "c"} {
		wb := &models.Workbench{Name: name, OwnerID: u.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t", Priority: "interactive", PriorityRank: 100}
		if err := s.EnqueueWorkbench(ctx, wb, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, wb.ID)
		// The positions a drain explained.
		if err := s.DrainQueue(ctx, func(q *models.QueueTx) error { return q.Explain(wb.ID, i+1, i, "waiting", nil, "") }); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	out, _, err := runCLI(t, "", "queue", "move", ids[2], "1", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "to position 1") {
		t.Fatalf("move: %q %v", out, err)
	}
	if _, _, err := runCLI(t, "", "queue", "move", ids[0], "first", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Fatalf("bad position: %v", err)
	}
	if _, _, err := runCLI(t, "", "queue", "list", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "usage: workbench queue move") {
		t.Fatalf("unknown subcommand: %v", err)
	}
	s, err = models.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var orders map[string]int
	if err := s.DrainQueue(ctx, func(q *models.QueueTx) error {
		var err error
		orders, err = q.QueueOrders()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if orders[ids[2]] != 1 || orders[ids[0]] != 2 || orders[ids[1]] != 3 {
		t.Fatalf("orders %v", orders)
	}
	audit, _ := s.ListAudit(ctx, 10)
	if len(audit) == 0 || audit[0].Action != "queue.move" || audit[0].Actor != "cli" {
		t.Fatalf("audit %+v", audit)
	}
}
