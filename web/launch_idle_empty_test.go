package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// A user who clears "Stop after idle (minutes)" launches with the default
// idle stop the form showed, as leaving the field alone would; letters are
// still refused beside the field, with the values kept.
func TestLaunchWithTheIdleFieldCleared(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, body := p.get(c, "/workbenches/new")
	shown, _ := mpDoc(t, body).Find(`input[name=idle_minutes]`).Attr("value")
	def, err := strconv.ParseInt(shown, 10, 64)
	if err != nil || def <= 0 {
		t.Fatalf("the form's idle field shows %q", shown)
	}

	res, body := p.postFormBody(c, "/workbenches", url.Values{"image": {"fake"}, "flavor": {"CPU small"}, "name": {"letters"}, "idle_minutes": {"an hour"}})
	doc := mpDoc(t, body)
	if got := strings.TrimSpace(doc.Find(`[data-testid=error-idle_timeout]`).Text()); res.StatusCode != http.StatusBadRequest || got != "must be a whole number of minutes" {
		t.Fatalf("idle \"an hour\": %d %q", res.StatusCode, got)
	}
	if name, _ := doc.Find(`input[name=name]`).Attr("value"); name != "letters" {
		t.Fatalf("the name was not kept: %q", name)
	}

	res = p.postForm(c, "/workbenches", url.Values{"image": {"fake"}, "flavor": {"CPU small"}, "name": {"cleared"}, "idle_minutes": {" "}})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/workbenches/") {
		t.Fatalf("launch with the idle field cleared: %d to %q", res.StatusCode, loc)
	}
	wb, err := p.srv.Store.WorkbenchByID(context.Background(), strings.TrimPrefix(loc, "/workbenches/"))
	if err != nil || wb.IdleTimeoutS != def*60 {
		t.Fatalf("idle stop after %d s (%v), want the form's default %d min", wb.IdleTimeoutS, err, def)
	}
}
