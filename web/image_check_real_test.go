package web_test

import (
	"context"
	"testing"
	"time"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
)

// Test image passes a real Jupyter server (Debian's notebook package): its
// checks do not fail images that work.
func TestImageTestPassesRealJupyter(t *testing.T) {
	p, cli := enginePortal(t)
	budget := 25 * time.Minute
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - 30*time.Second; left < budget {
			budget = left
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), budget)
	defer cancel()
	ref, err := testimages.RealJupyter(ctx, cli)
	if err != nil {
		t.Fatalf("build real Jupyter image: %v", err)
	}
	img := &models.Image{Name: "jupyter", Image: ref, StartCommand: testimages.RealJupyterStartCommand,
		RunAsUser: testimages.RealJupyterUser, HomePath: testimages.RealJupyterHome, OpenPath: "/tree", Enabled: true}
	if err := p.srv.Store.CreateImage(context.Background(), img); err != nil {
		t.Fatal(err)
	}
	chk := runImageTest(t, p, tokenFor(t, p, "admin", "admin"), img.ID)
	if chk["state"] != "passed" {
		t.Fatalf("real Jupyter failed Test image at %v: %v (details %v)", chk["step"], chk["message"], chk["details"])
	}
	t.Logf("%v", chk["message"])
}
