package web_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// phoneWidth is an iPhone 12–15's CSS width.
const phoneWidth, phoneHeight = 390, 844

// On a 390 px wide phone the workbench list keeps the first workbench's
// name, state, cost and Open button inside the viewport (no sideways
// scrolling), and the navigation collapses behind a Menu button that
// opens it without JavaScript tricks (a checkbox and its label); the
// button counts unread notifications, which the open menu links.
func TestBrowserPhoneWorkbenchList(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	id := cullLaunch(t, p, alice, "phone-exp", "CPU small", 3600)
	waitState(t, p, alice, id, "running")

	// One unread notification: a phone shows its count on the Menu
	// button (the account links are folded away with the navigation).
	st := p.srv.Store
	u, _ := st.UserByUsername(context.Background(), "alice")
	w, err := st.CreateGPUWatch(context.Background(), u.ID, "NVIDIA H100 80GB HBM3", []string{"NVIDIA H100 80GB HBM3"})
	if err != nil {
		t.Fatal(err)
	}
	if fired, err := st.FireGPUWatch(context.Background(), w.ID, "A GPU is free now.", "/workbenches/new"); err != nil || !fired {
		t.Fatalf("fire the watch: %v %v", fired, err)
	}

	ctx := btNewBrowser(t)
	btDo(t, ctx, "emulate a phone", chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile))
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("alice login: status %d at %s", resp.Status, resp.URL)
	}
	btDo(t, ctx, "wait for the workbench list", chromedp.WaitVisible(chromedp.CSS(`[data-testid=workbench-row]`)))

	type box struct {
		Found                    bool
		Left, Right, Top, Bottom float64
	}
	type layout struct {
		Width, Height, ScrollWidth float64
		Boxes                      map[string]box
	}
	row := `[data-testid=workbench-row]:first-of-type `
	parts := map[string]string{
		"name":  row + `td:first-child a`,
		"state": row + `[data-testid=wb-state]`,
		"cost":  row + `[data-testid=wb-cost]`,
		"open":  row + `td.row-actions a[href^="/wb/"]`,
	}
	js := `(() => {
	  const parts = ` + jsObject(parts) + `;
	  const out = {Width: window.innerWidth, Height: window.innerHeight, ScrollWidth: document.documentElement.scrollWidth, Boxes: {}};
	  for (const [k, sel] of Object.entries(parts)) {
	    const e = document.querySelector(sel);
	    if (!e) { out.Boxes[k] = {Found: false}; continue; }
	    const r = e.getBoundingClientRect();
	    out.Boxes[k] = {Found: r.width > 0 && r.height > 0, Left: r.left, Right: r.right, Top: r.top, Bottom: r.bottom};
	  }
	  return out; })()`
	l, err := chromedp.Run(ctx, chromedp.Evaluate[layout](js))
	if err != nil {
		t.Fatalf("measure the list: %v", err)
	}
	if l.Width != phoneWidth {
		t.Fatalf("viewport %v px wide, want %d", l.Width, phoneWidth)
	}
	if l.ScrollWidth > l.Width+1 {
		t.Errorf("the page is %v px wide on a %v px screen: it scrolls sideways", l.ScrollWidth, l.Width)
	}
	for _, k := range []string{"name", "state", "cost", "open"} {
		b := l.Boxes[k]
		if !b.Found {
			t.Errorf("the first workbench's %s is not shown (%s)", k, parts[k])
			continue
		}
		if b.Left < 0 || b.Right > l.Width || b.Top < 0 || b.Bottom > l.Height {
			t.Errorf("the first workbench's %s is outside the %vx%v viewport: %+v", k, l.Width, l.Height, b)
		}
	}
	dir := filepath.Join(btArtifactDir(t), "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	btScreenshot(t, ctx, "screenshots/phone-workbenches.png")

	// The navigation is folded away until Menu is pressed.
	if btVisible(t, ctx, `.mainnav`) {
		t.Error("the main navigation is expanded on a phone before Menu is pressed")
	}
	if !btVisible(t, ctx, `[data-testid=nav-toggle-label]`) {
		t.Fatal("no Menu button on a phone")
	}
	if !btVisible(t, ctx, `[data-testid=nav-toggle-unread]`) || btText(t, ctx, `[data-testid=nav-toggle-unread]`) != "1" {
		t.Error("the Menu button does not count the unread notification")
	}
	btDo(t, ctx, "press Menu", chromedp.Click(chromedp.CSS(`[data-testid=nav-toggle-label]`)))
	if !btVisible(t, ctx, `.mainnav a[href="/gpus"]`) {
		t.Error("Menu does not open the navigation")
	}
	if !btVisible(t, ctx, `[data-testid=notifications-link] [data-testid=notifications-unread]`) {
		t.Error("the open menu does not show the notifications link with its count")
	}
	btScreenshot(t, ctx, "screenshots/phone-menu.png")
}

// jsObject writes a map of strings as a JavaScript object literal.
func jsObject(m map[string]string) string {
	s := "{"
	for k, v := range m {
		s += btJsString(k) + ":" + btJsString(v) + ","
	}
	return s + "}"
}

// The pool page with someone in the queue, on a phone: the queue table
// scrolls inside its frame, the page does not scroll sideways (the table
// was 610 px wide on a 390 px screen).
func TestBrowserPhoneQueueFitsTheScreen(t *testing.T) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	drainGPUs(t, p, admin, 0)
	if _, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"a-rather-long-experiment-name","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`); wb["state"] != "queued" {
		t.Fatalf("launch: %v", wb)
	}
	ctx := btNewBrowser(t)
	btDo(t, ctx, "emulate a phone", chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile))
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("alice login: status %d at %s", resp.Status, resp.URL)
	}
	btNavigate(t, ctx, p.ts.URL+"/gpus")
	btDo(t, ctx, "wait for the queue", chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-row]`)))
	// A page wider than the screen makes a phone zoom out (the layout
	// viewport grew to 611 px) or scroll sideways; the queue scrolls
	// inside its own frame instead.
	widths, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[window.innerWidth, document.documentElement.scrollWidth,
		document.querySelector("[data-testid=queue-table]").parentElement.getBoundingClientRect().right]`))
	if err != nil {
		t.Fatal(err)
	}
	if widths[0] != phoneWidth || widths[1] > widths[0]+1 || widths[2] > widths[0]+1 {
		btScreenshot(t, ctx, "screenshots/phone-gpus-queue.png")
		t.Errorf("/gpus with a queue on a %d px phone: viewport %v px, page %v px wide, the queue's frame ends at %v px", phoneWidth, widths[0], widths[1], widths[2])
	}
}

// The quota console and the audit log on a phone, in Chinese: the page
// does not run wider than the screen (the console's row form reached
// 517 px and cut off Save; an audit row's JSON 730 px).
func TestBrowserPhoneAdminPagesFitTheScreen(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	ctx := btNewBrowser(t)
	btDo(t, ctx, "emulate a phone", chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile))
	btLoginAsAdmin(t, ctx, p.ts.URL)
	btSubmit(t, ctx, "click 中文", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
	for _, path := range []string{"/admin/quotas", "/admin/audit"} {
		btNavigate(t, ctx, p.ts.URL+path)
		widths, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[window.innerWidth, document.documentElement.scrollWidth]`))
		if err != nil {
			t.Fatal(err)
		}
		if widths[0] != phoneWidth || widths[1] > widths[0]+1 {
			btScreenshot(t, ctx, "phone"+strings.ReplaceAll(path, "/", "-")+".png")
			t.Errorf("%s on a %d px phone: viewport %v px, page %v px wide", path, phoneWidth, widths[0], widths[1])
		}
	}
	// The statement's total row is a card as wide as the rows above it
	// (its cells stood as narrow blocks beside each other).
	btNavigate(t, ctx, p.ts.URL+"/usage")
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`Array.from(document.querySelectorAll("tr.total-row > *"), c => c.getBoundingClientRect().width)`))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range cells {
		if w < phoneWidth/2 {
			btScreenshot(t, ctx, "phone-usage-total.png")
			t.Errorf("total row cell %d is %v px wide on a %d px phone, want a full-width line of its card", i, w, phoneWidth)
		}
	}
	if len(cells) == 0 {
		t.Error("no total row on /usage")
	}
}
