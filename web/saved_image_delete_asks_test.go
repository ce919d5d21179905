package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Deleting a saved image cannot be undone: a form post that no script
// marked answered (JavaScript off) gets the question the page's confirm()
// asks, and the image stays; answered, it goes. Another user's post is
// 404 before any question.
func TestSavedImageDeleteAsksWithoutJavaScript(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	ctx := context.Background()
	alice, err := p.srv.Store.UserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	img := fakeCatalogImage("my-env v1 (alice)", "workbench-saved/never-pulled:v1")
	img.OwnerID, img.SavedFrom = alice.ID, "env"
	p.addImage(img)
	path := fmt.Sprintf("/images/%d/delete", img.ID)
	stays := func() bool {
		_, err := p.srv.Store.ImageByID(ctx, img.ID)
		return err == nil
	}

	bc := p.client()
	p.login(bc, "bob", "bob-password")
	if res, body := p.postFormBody(bc, path, nil); res.StatusCode != http.StatusNotFound || strings.Contains(body, `data-testid="confirm"`) {
		t.Fatalf("bob deletes alice's image: %d, want 404 and no question", res.StatusCode)
	}

	ac := p.client()
	p.login(ac, "alice", "alice-password")
	res, body := p.postFormBody(ac, path, nil)
	q := mpDoc(t, body).Find(`[data-testid=confirm-question]`).Text()
	if res.StatusCode != http.StatusOK || !strings.Contains(q, "Delete image my-env v1 (alice)?") || !stays() {
		t.Fatalf("alice deletes, unanswered: %d %q, image kept %v; want the question and the image kept", res.StatusCode, q, stays())
	}
	if action, _ := mpDoc(t, body).Find(`[data-testid=confirm] form`).Attr("action"); action != path {
		t.Fatalf("the question posts to %q, want %s", action, path)
	}
	if res := p.postForm(ac, path, url.Values{"confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther || stays() {
		t.Fatalf("alice deletes, answered: %d, image kept %v", res.StatusCode, stays())
	}
}
