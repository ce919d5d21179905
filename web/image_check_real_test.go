package web_test

import (
	"testing"
)

// Test image passes a real Jupyter server (Debian's notebook package): its
// checks do not fail images that work.
func TestImageTestPassesRealJupyter(t *testing.T) {
	p, _ := enginePortal(t)
	img := realCatalogImage("jupyter", realJupyterImage(t))
	img.OpenPath = "/tree"
	p.addImage(img)
	chk := runImageTest(t, p, tokenFor(t, p, "admin", "admin"), img.ID)
	if chk["state"] != "passed" {
		t.Fatalf("real Jupyter failed Test image at %v: %v (details %v)", chk["step"], chk["message"], chk["details"])
	}
	t.Logf("%v", chk["message"])
}
