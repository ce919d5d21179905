package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// A user books GPUs with the pool page's form (a window whose end comes
// before its start first: told why, the values kept), sees the booking on
// the timeline, launches with it chosen in the launch form (a booking not
// yet open: the workbench waits for its window), and cancels it with the
// list's button — with JavaScript on and off.
func TestBrowserReservationBookLaunchCancel(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserReservation(t, js) })
	}
}

func testBrowserReservation(t *testing.T, js bool) {
	p := newPortal(t)
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1")) // the launch waits in the queue: never pulled
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "alice", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	ctx := btNewBrowser(t)
	var asked func() []string
	if js {
		asked = btAcceptDialogs(t, ctx)
	} else {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/gpus")
	start := time.Now().UTC().Add(3 * time.Hour).Truncate(time.Hour)
	const layout = "2006-01-02T15:04"
	form := `[data-testid=booking-form] `
	btDo(t, ctx, "fill the booking form (the end before the start)",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=booking-form]`)),
		chromedp.SetValue(chromedp.CSS(form+`select[name=pool]`), resvH100),
		chromedp.SetValue(chromedp.CSS(form+`input[name=units]`), "2"),
		chromedp.SetValue(chromedp.CSS(form+`input[name=starts_at]`), start.Format(layout)),
		chromedp.SetValue(chromedp.CSS(form+`input[name=ends_at]`), start.Add(-time.Hour).Format(layout)),
		chromedp.SendKeys(chromedp.CSS(form+`input[name=note]`), "thesis"),
	)
	if resp := btSubmit(t, ctx, "book", chromedp.Click(chromedp.CSS(`[data-testid=booking-submit]`))); resp.Status != http.StatusBadRequest {
		t.Fatalf("end before start: status %d", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=error-ends_at]`); !strings.Contains(msg, "after the start") {
		t.Fatalf("end error %q", msg)
	}
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("[data-testid=booking-form] input:not([type=hidden]), [data-testid=booking-form] select")].map(e => e.name + "=" + e.value).join(" ")`))
	if want := "pool=" + resvH100 + " units=2 starts_at=" + start.Format(layout) + " ends_at=" + start.Add(-time.Hour).Format(layout) + " note=thesis"; err != nil || kept != want {
		t.Fatalf("values after the refusal: %q (%v), want %q", kept, err, want)
	}
	btDo(t, ctx, "correct the end", chromedp.SetValue(chromedp.CSS(form+`input[name=ends_at]`), start.Add(2*time.Hour).Format(layout)))
	if resp := btSubmit(t, ctx, "book", chromedp.Click(chromedp.CSS(`[data-testid=booking-submit]`))); resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/gpus" {
		t.Fatalf("book: status %d at %s", resp.Status, btLocation(t, ctx))
	}
	if f := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(f, "Booked #") {
		t.Fatalf("flash %q", f)
	}
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("[data-testid=reservation-row]").dataset.id`))
	if err != nil || id == "" {
		t.Fatalf("no booking listed (%v)", err)
	}
	if what := btText(t, ctx, `[data-testid=reservation-what]`); what != "2 × H100 80GB HBM3" {
		t.Errorf("listed as %q", what)
	}
	// On the timeline: a bar of 2 h on the 7-day scale, after the now-marker.
	geo, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const r = document.querySelector('[data-testid=timeline-row][data-id="`+id+`"]');
		const b = r.querySelector('[data-testid=timeline-bar]'), n = r.querySelector('[data-testid=timeline-now]');
		const bb = b.getBoundingClientRect(), nb = n.getBoundingClientRect();
		return [b.getAttribute("width"), bb.width > 0 && bb.left > nb.left].join(" "); })()`))
	if err != nil || geo != "11.9 true" {
		t.Fatalf("timeline bar (width, drawn after now): %q (%v)", geo, err)
	}
	btScreenshot(t, ctx, "reservations-"+jsName(js)+".png")

	// Launch with the booking chosen.
	btNavigate(t, ctx, p.ts.URL+"/workbenches/new")
	btDo(t, ctx, "fill the launch form",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=image-choice] input[name=image][value="fake"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="CPU small"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "thesis-run"),
	)
	if js {
		// The script offers only the bookings that fit the chosen flavor.
		off, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('select[name=reservation] option[value="`+id+`"]').disabled`))
		if err != nil || !off {
			t.Errorf("the booking is offered for a CPU flavor (%v)", err)
		}
	}
	btDo(t, ctx, "choose the H100 flavor and the booking",
		chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="1x H100 80GB HBM3"]`)),
		chromedp.SetValue(chromedp.CSS(`[data-testid=launch-reservation]`), id),
	)
	if resp := btSubmit(t, ctx, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("launch: %d at %s", resp.Status, resp.URL)
	}
	if state, seen := btWaitWorkbenchState(t, ctx, "queued", 30*time.Second); state != "queued" {
		t.Fatalf("page shows %q (seen %v), want queued", state, seen)
	}
	btDo(t, ctx, "wait for the queue notice", chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-reason]`)))
	if why := btText(t, ctx, `[data-testid=queue-reason]`); !strings.Contains(why, "reservation #"+id) {
		t.Errorf("queued workbench's reason %q does not name the booking", why)
	}

	// Cancel the booking from the pool page.
	btNavigate(t, ctx, p.ts.URL+"/gpus")
	if resp := btSubmit(t, ctx, "cancel", chromedp.Click(chromedp.CSS(`[data-testid=reservation-row][data-id="`+id+`"] [data-testid=reservation-cancel]`))); resp.Status != http.StatusOK {
		t.Fatalf("cancel: %d", resp.Status)
	}
	if !js {
		// No confirm() ran: the portal asks on a page of its own.
		if q := btText(t, ctx, `[data-testid=confirm-question]`); !strings.Contains(q, "Cancel booking #"+id) {
			t.Fatalf("the question reads %q", q)
		}
		if resp := btSubmit(t, ctx, "answer yes", chromedp.Click(chromedp.CSS(`[data-testid=confirm-yes]`))); resp.Status != http.StatusOK {
			t.Fatalf("cancel, answered: %d", resp.Status)
		}
	}
	if f := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(f, "cancelled") {
		t.Errorf("flash %q", f)
	}
	if rows := btTexts(t, ctx, `[data-testid=reservation-row]`); len(rows) != 0 {
		t.Fatalf("rows after the cancel: %v", rows)
	}
	if js {
		if q := asked(); len(q) != 1 || !strings.Contains(q[0], "Cancel booking #"+id) {
			t.Errorf("confirm asked %v", q)
		}
	}
}
