package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
)

// With a notebook domain, an extra port opens on the workbench's own
// origin: the portal's /wb/{id}/port/6006/ link goes through the one-time
// code to {id}.<domain>/wb/{id}/port/6006/, where the app answers without
// the notebook host's cookie.
func TestExtraPortOnNotebookDomain(t *testing.T) {
	np := newNBPortal(t)
	ctx := context.Background()
	fake, err := np.srv.Store.ImageByNameOrID(ctx, "fake")
	if err != nil {
		t.Fatal(err)
	}
	img := &models.Image{Name: "fake-ports", Image: fake.Image, StartCommand: testimages.FakeJupyterStartCommand + " --extra-port=6006",
		RunAsUser: "1000", HomePath: testimages.FakeJupyterHome, Enabled: true, ExtraPorts: []int{6006}}
	if err := np.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, np.testPortal, "alice", "user")
	code, wb := np.api("POST", "/api/v1/workbenches", alice, `{"name":"tb","image":"fake-ports","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, np.testPortal, alice, id, "running")

	c := np.client()
	np.login(c, "alice", "alice-password")
	link := np.openLinkFrom(c, id, np.portal+"/wb/"+id+"/port/6006/scalars")
	res := np.exchange(c, link)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/wb/"+id+"/port/6006/scalars" {
		t.Fatalf("exchange: %d → %q", res.StatusCode, loc)
	}
	res, body := np.do(c, "GET", np.nbOrigin(id)+"/wb/"+id+"/port/6006/scalars", nil)
	var got map[string]any
	if res.StatusCode != 200 || json.Unmarshal([]byte(body), &got) != nil || got["path"] != "/scalars" {
		t.Fatalf("app on the notebook host: %d %s", res.StatusCode, body)
	}
	if ck, _ := got["cookie"].(string); ck != "" {
		t.Fatalf("a cookie reached the app: %q", ck)
	}
	// Another user's cookie-less client gets nothing.
	if res, body := np.do(np.client(), "GET", np.nbOrigin(id)+"/wb/"+id+"/port/6006/", nil); res.StatusCode == 200 || strings.Contains(body, "extra-port") {
		t.Fatalf("no cookie: %d %s", res.StatusCode, body)
	}
}
