package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"workbench/models"
)

// The text table says whose workbench holds a GPU and how busy it is, as
// --json does: an admin at the server's console read "in_use" with no
// owner and no utilisation (researcher walk-through, session 55).
func TestGPUsTableNamesTheHolderAndTheUtilisation(t *testing.T) {
	dir := portalData(t)
	out, _, err := runCLI(t, "", "gpus", "--json", "--gpus", "mock:dgxh100", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	var inv struct {
		Items []struct {
			UUID  string `json:"uuid"`
			Model string `json:"model"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &inv); err != nil || len(inv.Items) != 8 {
		t.Fatalf("inventory: %v\n%s", err, out)
	}
	ctx := context.Background()
	s, err := models.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(ctx, models.NewUser{Username: "phd", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	imgs, _ := s.ListImages(ctx, false)
	fls, _ := s.ListFlavors(ctx, false)
	wb := &models.Workbench{Name: "train", OwnerID: u.ID, ImageID: imgs[0].ID, FlavorID: fls[0].ID}
	g := inv.Items[3]
	if err := s.CreateWorkbench(ctx, wb, models.GPUNeed{Model: g.Model, Count: 1, Candidates: []string{g.UUID}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	s.Close()

	table, _, err := runCLI(t, "", "gpus", "--gpus", "mock:dgxh100", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "UTIL") || !strings.Contains(table, "HOLDER") {
		t.Fatalf("no UTIL or HOLDER column:\n%s", table)
	}
	var row string
	for _, line := range strings.Split(table, "\n") {
		if strings.Contains(line, g.UUID) {
			row = line
		}
	}
	if !strings.Contains(row, "phd/train ("+wb.ID+")") {
		t.Errorf("GPU 3's row does not name its holder phd/train (%s):\n%s", wb.ID, row)
	}
	if !regexp.MustCompile(`\s(\d+%|—)\s`).MatchString(row) {
		t.Errorf("GPU 3's row has no utilisation:\n%s", row)
	}
}
