package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// catalogCard returns the catalog card of the image named name.
func catalogCard(t *testing.T, p *testPortal, c *http.Client, name string) *goquery.Selection {
	t.Helper()
	_, page := p.get(c, "/catalog")
	var card *goquery.Selection
	parseHTML(t, page).Find(`[data-testid=image-card]`).Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Find("h3").Text(), name) {
			card = s
		}
	})
	if card == nil {
		t.Fatalf("no catalog card for %s", name)
	}
	return card
}

// The catalog says whether each image is on this server and its size; an
// admin pre-pulls one from the catalog, the pull runs in the background
// with its progress on the card (also after a reload), and ends with the
// image present.
func TestCatalogPresenceAndPrePull(t *testing.T) {
	p, _ := enginePortal(t)
	reg := servePullable(t, p, 2*time.Second)
	ctx := context.Background()
	img, _ := p.srv.Store.ImageByNameOrID(ctx, "pullable")
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)

	fake := catalogCard(t, p, c, "fake")
	if pr, _ := fake.Find(`[data-testid=image-presence]`).Attr("data-presence"); pr != "present" || !strings.HasSuffix(fake.Find(`[data-testid=image-size]`).Text(), "MB") {
		t.Fatalf("fake image: presence %q size %q", pr, fake.Find(`[data-testid=image-size]`).Text())
	}
	card := catalogCard(t, p, c, "pullable")
	if pr, _ := card.Find(`[data-testid=image-presence]`).Attr("data-presence"); pr != "absent" {
		t.Fatalf("pullable image presence %q before the pull", pr)
	}
	action, _ := card.Find(`[data-testid=pre-pull]`).Closest("form").Attr("action")
	if action != "/admin/images/"+itoa(img.ID)+"/pull" {
		t.Fatalf("pre-pull form action %q", action)
	}
	if res := p.postForm(c, action, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pre-pull: %d", res.StatusCode)
	}
	// The registry holds every blob 2 s: the pull is under way on the
	// next page load, and the cards refresh themselves meanwhile.
	_, page := p.get(c, "/catalog")
	doc := parseHTML(t, page)
	if live, _ := doc.Find(`#image-cards`).Attr("data-live"); live != "/catalog" {
		t.Errorf("image cards do not refresh during a pull (data-live %q)", live)
	}
	card = catalogCard(t, p, c, "pullable")
	if run, _ := card.Find(`[data-testid=image-pull]`).Attr("data-running"); run != "true" {
		t.Fatalf("pull not shown as running after a reload: %q", card.Text())
	}
	if card.Find(`[data-testid=pre-pull]`).Length() != 0 {
		t.Error("a second pull can be started while one runs")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		card = catalogCard(t, p, c, "pullable")
		if pr, _ := card.Find(`[data-testid=image-presence]`).Attr("data-presence"); pr == "present" {
			break
		}
		if e := card.Find(`[data-testid=pull-error]`); e.Length() > 0 {
			t.Fatalf("pull failed: %s", e.Text())
		}
		if time.Now().After(deadline) {
			t.Fatalf("pull did not finish: %s", card.Text())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if size := card.Find(`[data-testid=image-size]`).Text(); size != "2 MB" && size != "3 MB" {
		t.Errorf("pulled image size %q, want about 2 MB", size)
	}
	st, ok := p.srv.Manager.PrePullStatus(reg.Ref)
	if !ok || st.Running || st.Percent != 100 || st.TotalBytes < 2<<20 || st.DoneBytes != st.TotalBytes {
		t.Errorf("pull state at the end: %+v", st)
	}
	if entries, _ := p.srv.Store.ListAudit(ctx, 50); !auditHas(entries, "image.pull") {
		t.Error("the pre-pull is not in the audit log")
	}

	// A pull that cannot reach its registry says so on the card, worded
	// for the admin who pulled: what to do, not "ask an admin".
	far := &models.Image{Name: "far-away", Image: "127.0.0.1:1/workbench-test/far:1", StartCommand: img.StartCommand, Enabled: true}
	if err := p.srv.Store.CreateImage(ctx, far); err != nil {
		t.Fatal(err)
	}
	p.postForm(c, "/admin/images/"+itoa(far.ID)+"/pull", nil)
	for deadline = time.Now().Add(time.Minute); ; {
		card = catalogCard(t, p, c, "far-away")
		if e := card.Find(`[data-testid=pull-error]`); e.Length() > 0 {
			want := "This server cannot download from 127.0.0.1:1 — set a mirror for it under Admin → Registries, or load the image from an archive (workbench image load)."
			if strings.TrimSpace(e.Text()) != want || card.Find(`details`).Length() == 0 {
				t.Errorf("pull error on the card: %q", e.Text())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pull error shown: %s", card.Text())
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.srv.Manager.Wait()
}

// auditHas reports whether the audit log holds an entry of action.
func auditHas(entries []models.AuditEntry, action string) bool {
	for _, e := range entries {
		if e.Action == action {
			return true
		}
	}
	return false
}
