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

// In Chromium, JavaScript on and off: alice's workbench is stopped while
// the database's disk is full (read-only here, as TestStopNotRecordedIsShownStopped
// makes it), so the stop is carried out but not recorded yet. Her list and
// the workbench's page show it stopped, "not recorded yet", with the note
// that an administrator has to free the disk, and no Start, Stop, Delete or
// Open that would fail; without JavaScript the page says it reloads itself.
// Its "reset home volume…" link leads to a page that says the reset waits
// for the stop's record, and offers no reset meanwhile.
// Once the disk is writable and reconciliation records the stop, the open
// page follows by itself (server-sent events with JavaScript, the meta
// refresh without): the note is gone and Start and Delete are back.
func TestBrowserStopNotRecordedIsShownStopped(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t)
			ctx := context.Background()
			token := tokenFor(t, p, "alice", "user")
			alice, err := p.srv.Store.UserByUsername(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			wb := p.runningRecord(alice, "nb", models.GPUNeed{})

			b := btSignedIn(t, js, p.ts.URL, "alice", "alice-password")

			// The disk fills; her stop is carried out but cannot be recorded.
			if err := p.srv.Store.QueryOnly(ctx, true); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.srv.Store.QueryOnly(context.Background(), false) })
			if status, body := p.api(http.MethodPost, "/api/v1/workbenches/"+wb.ID+"/stop", token, ""); status != http.StatusServiceUnavailable || errCode(body) != "stop_not_recorded" {
				t.Fatalf("stop with the database unwritable: %d %v, want 503 stop_not_recorded", status, body)
			}

			// Her list: stopped, not recorded yet.
			if resp := btNavigate(t, b, p.ts.URL+"/"); resp.Status != http.StatusOK {
				t.Fatalf("the list with the database unwritable: %d", resp.Status)
			}
			if state := btText(t, b, `[data-testid=wb-state]`); state != "stopped" {
				t.Errorf("the list shows it %q, want stopped", state)
			}
			if badge := btText(t, b, `[data-testid=wb-stop-not-recorded]`); badge != "not recorded yet" {
				t.Errorf("the list's badge reads %q, want \"not recorded yet\"", badge)
			}

			// Its page.
			if resp := btNavigate(t, b, p.ts.URL+"/workbenches/"+wb.ID); resp.Status != http.StatusOK {
				t.Fatalf("its page with the database unwritable: %d", resp.Status)
			}
			if state := btText(t, b, `[data-testid=wb-status] [data-testid=wb-state]`); state != "stopped" {
				t.Errorf("its page shows it %q, want stopped", state)
			}
			if badge := btText(t, b, `[data-testid=wb-status] [data-testid=wb-stop-not-recorded]`); badge != "not recorded yet" {
				t.Errorf("its page's badge reads %q", badge)
			}
			note := btText(t, b, `[data-testid=wb-stop-not-recorded-notice]`)
			if !strings.HasPrefix(note, "Stopped at ") || !strings.Contains(note, ", not recorded yet.") ||
				!strings.Contains(note, "the disk of its database is full or read-only, and an administrator has to free or fix it") ||
				!strings.Contains(note, "It is charged only up to the stop") {
				t.Errorf("the note reads %q, want when it stopped, that it is not recorded yet and why", note)
			}
			if !btVisible(t, b, `[data-testid=wb-stop-not-recorded-notice]`) {
				t.Errorf("the note is not visible")
			}
			for _, button := range []string{"start", "start-cpu", "stop", "delete", "open-jupyter", "restart-gpus", "extend"} {
				if n := len(btTexts(t, b, `[data-testid=`+button+`]`)); n != 0 {
					t.Errorf("its page offers %s while the stop is not recorded", button)
				}
			}
			// Without JavaScript the page says it follows by itself; with
			// it, the live updates do and nothing is said.
			if reload := btVisible(t, b, `[data-testid=no-js-reload]`); reload != !js {
				t.Errorf("the reload notice shown: %v, want %v", reload, !js)
			} else if !js {
				if txt := btText(t, b, `[data-testid=no-js-reload]`); !strings.Contains(txt, "reloads itself every 10 seconds") {
					t.Errorf("the reload notice reads %q", txt)
				}
			}
			btScreenshot(t, b, "stop-not-recorded-"+jsName(js)+".png")

			// Its "reset home volume…" leads to a page that says the reset
			// waits for the stop's record (not "Stop nb first" of a
			// workbench shown stopped), with no reset form meanwhile.
			href, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector("[data-testid=home-settings]").getAttribute("href")`))
			if err != nil || href != "/settings/home" {
				t.Fatalf("its page's home settings link: %q %v", href, err)
			}
			if resp := btNavigate(t, b, p.ts.URL+href); resp.Status != http.StatusOK {
				t.Fatalf("the home reset page with the stop not recorded: %d", resp.Status)
			}
			if note := btText(t, b, `[data-testid=home-reset-not-recorded]`); !strings.HasPrefix(note, "nb is stopped, but its stop is not recorded yet") ||
				!strings.Contains(note, "The home volume can be reset once the stop is recorded, which happens by itself") {
				t.Errorf("the home reset page's note reads %q", note)
			} else if !btVisible(t, b, `[data-testid=home-reset-not-recorded]`) {
				t.Errorf("the home reset page's note is not visible")
			}
			for _, gone := range []string{"home-reset-busy", "home-reset-submit", "home-reset-confirm"} {
				if n := len(btTexts(t, b, `[data-testid=`+gone+`]`)); n != 0 {
					t.Errorf("the home reset page shows %s while the stop is not recorded", gone)
				}
			}
			btScreenshot(t, b, "stop-not-recorded-home-reset-"+jsName(js)+".png")
			if resp := btNavigate(t, b, p.ts.URL+"/workbenches/"+wb.ID); resp.Status != http.StatusOK {
				t.Fatalf("its page again: %d", resp.Status)
			}

			// The disk is freed; reconciliation records the stop, and the
			// page, left open, shows it without being asked.
			if err := p.srv.Store.QueryOnly(ctx, false); err != nil {
				t.Fatal(err)
			}
			if err := p.srv.Manager.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if !btWaitRecordedStop(t, b, 2*time.Minute) {
				t.Fatalf("the open page still shows the stop unrecorded (or no Start) 2 min after it was recorded")
			}
			if state := btText(t, b, `[data-testid=wb-status] [data-testid=wb-state]`); state != "stopped" {
				t.Errorf("once recorded its page shows it %q, want stopped", state)
			}
			for _, gone := range []string{"wb-stop-not-recorded", "wb-stop-not-recorded-notice", "wb-reason"} {
				if n := len(btTexts(t, b, `[data-testid=`+gone+`]`)); n != 0 {
					t.Errorf("once recorded its page still shows %s: %v", gone, btTexts(t, b, `[data-testid=`+gone+`]`))
				}
			}
			for _, button := range []string{"start", "delete"} {
				if !btVisible(t, b, `[data-testid=`+button+`]`) {
					t.Errorf("once recorded its page offers no %s", button)
				}
			}
			if btVisible(t, b, `[data-testid=no-js-reload]`) {
				t.Errorf("once recorded the page still says it reloads itself")
			}
			btScreenshot(t, b, "stop-recorded-"+jsName(js)+".png")
		})
	}
}

// btWaitRecordedStop waits for the open workbench page to have reloaded
// itself into a recorded stop: rendered stopped, with Start, without the
// "not recorded yet" note.
func btWaitRecordedStop(t *testing.T, ctx context.Context, limit time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		// A short bound per read: one issued mid-reload may otherwise
		// wait for a document being torn down.
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ok, err := chromedp.Run(rctx, chromedp.Evaluate[bool](
			`(() => { const st = document.querySelector("[data-testid=wb-status]");
			          return document.readyState === "complete" && !!st && st.getAttribute("data-state") === "stopped" &&
			            st.getAttribute("data-stop-not-recorded") === "false" &&
			            !!document.querySelector("[data-testid=start]"); })()`))
		cancel()
		if err == nil && ok {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}
