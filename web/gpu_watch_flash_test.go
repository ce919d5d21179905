package web_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"workbench/models"
)

// A flavor watch confirms itself with the flavor's name, as the page lists
// it, also when the form was sent the flavor's id (a script, an old page):
// the message once read "when flavor 2 can start".
func TestFlavorWatchConfirmsByName(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser}); err != nil {
		t.Fatal(err)
	}
	fls, err := p.srv.Store.ListFlavors(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var gpu *models.Flavor
	for i := range fls {
		if fls[i].Enabled && fls[i].GPUCount > 0 {
			gpu = &fls[i]
			break
		}
	}
	if gpu == nil {
		t.Fatal("no GPU flavor seeded")
	}
	c := p.client()
	p.login(c, "lin", "lin-password-1")
	res := p.postForm(c, "/notifications/watches", url.Values{"flavor": {strconv.FormatInt(gpu.ID, 10)}})
	if res.StatusCode != 303 {
		t.Fatalf("watch by id: status %d", res.StatusCode)
	}
	_, body := p.get(c, res.Header.Get("Location"))
	want := "You will be notified here when flavor " + gpu.Name + " can start."
	if got := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=flash]`).Text()); got != want {
		t.Fatalf("flash %q, want %q", got, want)
	}
}
