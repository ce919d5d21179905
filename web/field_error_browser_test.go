package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// In Chromium: a launch form sent back with a bad name marks the name
// field invalid, ties it to its message (aria-describedby) and puts the
// focus on it, so a screen reader says what is wrong where, and a phone
// shows the field instead of the top of a long page.
func TestBrowserFieldErrorFocusesTheField(t *testing.T) {
	p, b := btAdminIn(t, true)
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	btNavigate(t, b, p.ts.URL+"/workbenches/new")
	btDo(t, b, "fill in the launch form with a bad name",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
		chromedp.Click(chromedp.CSS(`input[name=image][value="fake"]`)),
		chromedp.Click(chromedp.CSS(`input[name=flavor][value="CPU small"]`)),
		chromedp.SetValue(chromedp.CSS(`input[name=name]`), "bad name!!"),
	)
	resp := btSubmit(t, b, "click Launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-form] button[type=submit]`)))
	if resp.Status != 400 {
		t.Fatalf("a bad name: status %d", resp.Status)
	}
	got, err := chromedp.Run(b, chromedp.Evaluate[string](`(() => {
		const a = document.activeElement;
		const d = (a.getAttribute("aria-describedby") || "").split(" ").map((id) => document.getElementById(id)).filter(Boolean);
		return [a.name, a.getAttribute("aria-invalid"), d.map((e) => e.textContent).join("|")].join(";");
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(got, ";", 3)
	if len(parts) != 3 || parts[0] != "name" || parts[1] != "true" || parts[2] == "" {
		t.Fatalf("focused field, aria-invalid, described by: %q; want the name field, invalid, described by its message", got)
	}
	if msg := btText(t, b, `[data-testid=error-name]`); parts[2] != msg {
		t.Fatalf("the field is described by %q, its message reads %q", parts[2], msg)
	}
}
