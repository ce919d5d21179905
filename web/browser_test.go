package web_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// An admin who opens the portal is sent to the login page, logs in through
// the form and sees the eight simulated H100s of the mock DGX, labelled as
// simulated. Screenshots of the main pages are kept as test artifacts.
func TestBrowserAdminSeesSimulatedGPUs(t *testing.T) {
	ts := btStartPortal(t)
	ctx := btNewBrowser(t)

	resp := btNavigate(t, ctx, ts.URL+"/")
	if resp.Status != http.StatusOK {
		t.Fatalf("GET / ended with status %d at %s", resp.Status, resp.URL)
	}
	if u := btLocation(t, ctx); u.Path != "/login" || u.Query().Get("next") != "/" {
		t.Fatalf("an anonymous visit to / should land on /login?next=/, got %s", u)
	}
	if resp := btLogin(t, ctx, "admin", btAdminPassword); resp.Status != http.StatusOK {
		t.Fatalf("admin login: status %d at %s", resp.Status, resp.URL)
	}
	if u := btLocation(t, ctx); u.Path != "/" {
		t.Fatalf("after login the browser is at %s, want /", u)
	}
	if name := btText(t, ctx, `[data-testid=account-name]`); name == "" {
		t.Error("the top bar shows no account name after login")
	}
	btScreenshot(t, ctx, "home.png")

	if resp := btNavigate(t, ctx, ts.URL+"/gpus"); resp.Status != http.StatusOK {
		t.Fatalf("GET /gpus: status %d", resp.Status)
	}
	btDo(t, ctx, "wait for the GPU table", chromedp.WaitVisible(chromedp.CSS(`[data-testid=gpu-table]`)))
	rows := btTexts(t, ctx, `[data-testid=gpu-row]`)
	if len(rows) != 8 {
		t.Fatalf("GPU rows: got %d, want 8 (mock DGX H100)", len(rows))
	}
	for i, r := range rows {
		if !strings.Contains(r, "H100") {
			t.Errorf("GPU row %d does not name an H100: %q", i, r)
		}
	}
	if !btVisible(t, ctx, `[data-testid=simulated-badge]`) {
		t.Error("the simulated badge is not visible on /gpus")
	}
	if b := btText(t, ctx, `[data-testid=banner]`); !strings.Contains(strings.ToLower(b), "simulated") {
		t.Errorf("banner %q does not say the GPUs are simulated", b)
	}
	if n := len(btTexts(t, ctx, `[data-testid=drain]`)); n != 8 {
		t.Errorf("an admin should see 8 Drain buttons, got %d", n)
	}
	btScreenshot(t, ctx, "gpus.png")
	btDo(t, ctx, "switch to the dark theme", btColorScheme("dark"))
	btScreenshot(t, ctx, "gpus-dark.png")
	btDo(t, ctx, "switch to the light theme", btColorScheme("light"))

	if resp := btNavigate(t, ctx, ts.URL+"/catalog"); resp.Status != http.StatusOK {
		t.Fatalf("GET /catalog: status %d", resp.Status)
	}
	btDo(t, ctx, "wait for the catalog", chromedp.WaitVisible(chromedp.CSS(`[data-testid=image-cards]`)))
	if n := len(btTexts(t, ctx, `[data-testid=image-card]`)); n == 0 {
		t.Error("the seeded catalog shows no image cards")
	}
	btScreenshot(t, ctx, "catalog.png")

	if resp := btNavigate(t, ctx, ts.URL+"/admin/users"); resp.Status != http.StatusOK {
		t.Fatalf("GET /admin/users: status %d", resp.Status)
	}
	btDo(t, ctx, "wait for the user table", chromedp.WaitVisible(chromedp.CSS(`[data-testid=user-table]`)))
	users := btTexts(t, ctx, `[data-testid=user-row] td:first-child`)
	if !slices.Contains(users, "admin") {
		t.Errorf("the users table does not list admin: %q", users)
	}
	btScreenshot(t, ctx, "admin-users.png")
}

// A wrong password shows the generic error and stays on the login page; the
// right one logs in; "Log out" ends the session so /gpus asks to log in again.
func TestBrowserLoginErrorAndLogout(t *testing.T) {
	ts := btStartPortal(t)
	ctx := btNewBrowser(t)

	btNavigate(t, ctx, ts.URL+"/login")
	resp := btLogin(t, ctx, "admin", "not-the-password")
	if resp.Status != http.StatusUnauthorized {
		t.Errorf("wrong password: status %d, want 401", resp.Status)
	}
	btDo(t, ctx, "wait for the login error", chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-error]`)))
	if msg := btText(t, ctx, `[data-testid=login-error]`); msg != "Invalid username or password." {
		t.Errorf("login error %q, want the generic %q", msg, "Invalid username or password.")
	}
	if p := btLocation(t, ctx).Path; p != "/login" {
		t.Errorf("after a failed login the browser is at %s, want /login", p)
	}
	btScreenshot(t, ctx, "login-error.png")
	if v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`input[name=password]`))); err != nil || v != "" {
		t.Errorf("the password field should come back empty, got %q (%v)", v, err)
	}

	if resp := btLogin(t, ctx, "admin", btAdminPassword); resp.Status != http.StatusOK {
		t.Fatalf("admin login: status %d at %s", resp.Status, resp.URL)
	}
	if p := btLocation(t, ctx).Path; p != "/" {
		t.Fatalf("after login the browser is at %s, want /", p)
	}
	if n := len(btTexts(t, ctx, `[data-testid=login-error]`)); n != 0 {
		t.Error("the login error is still shown after a good login")
	}

	btSubmit(t, ctx, "click Log out", chromedp.Click(chromedp.CSS(`.account form[action="/logout"] button`)))
	if p := btLocation(t, ctx).Path; p != "/login" {
		t.Errorf("after logout the browser is at %s, want /login", p)
	}
	btNavigate(t, ctx, ts.URL+"/gpus")
	if u := btLocation(t, ctx); u.Path != "/login" || u.Query().Get("next") != "/gpus" {
		t.Errorf("after logout /gpus should redirect to /login?next=/gpus, got %s", u)
	}
	if n := len(btTexts(t, ctx, `[data-testid=gpu-row]`)); n != 0 {
		t.Errorf("a logged-out browser sees %d GPU rows", n)
	}
}

// An admin who types a bad image reference gets the message beside the field
// with what they typed kept; after fixing it the image joins the catalog.
func TestBrowserAdminCreatesImageWithBadReference(t *testing.T) {
	ts := btStartPortal(t)
	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, ts.URL)

	const name = "Team PyTorch 2.5"
	btNavigate(t, ctx, ts.URL+"/admin/images/new")
	btDo(t, ctx, "fill the image form with a bad reference",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=image-form]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), name),
		chromedp.SendKeys(chromedp.CSS(`input[name=image]`), "Bad Ref!!"),
		chromedp.SendKeys(chromedp.CSS(`textarea[name=description]`), "PyTorch for the vision team"),
		chromedp.SendKeys(chromedp.CSS(`input[name=tags]`), "CUDA 12.4, PyTorch 2.5"),
		chromedp.SendKeys(chromedp.CSS(`input[name=start_command]`),
			"start-notebook.py --ServerApp.port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}"),
	)
	resp := btSubmit(t, ctx, "submit the bad image", chromedp.Click(chromedp.CSS(`[data-testid=image-form] button[type=submit]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword) // the form is posted again, unchanged
	if resp.Status != http.StatusBadRequest {
		t.Errorf("bad reference: status %d, want 400", resp.Status)
	}
	btDo(t, ctx, "wait for the field error", chromedp.WaitVisible(chromedp.CSS(`[data-testid=error-image]`)))
	if msg := btText(t, ctx, `[data-testid=error-image]`); !strings.Contains(msg, "image reference") {
		t.Errorf("image field error %q does not explain the reference", msg)
	}
	// The message sits right after the image field's label.
	adjacent, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`document.querySelector("[data-testid=error-image]").previousElementSibling.contains(document.querySelector("input[name=image]"))`))
	if err != nil || !adjacent {
		t.Errorf("the image error is not next to the image field (%v)", err)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`input[name=name]`))); got != name {
		t.Errorf("name field after the error: %q, want the typed %q", got, name)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`input[name=image]`))); got != "Bad Ref!!" {
		t.Errorf("image field after the error: %q, want the typed value", got)
	}
	if cards := btTexts(t, ctx, `[data-testid=image-card]`); len(cards) != 0 {
		t.Errorf("the form page shows catalog cards: %q", cards)
	}
	btScreenshot(t, ctx, "image-form-error.png")

	btDo(t, ctx, "fix the reference",
		chromedp.Clear(chromedp.CSS(`input[name=image]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=image]`), "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11"),
	)
	resp = btSubmit(t, ctx, "submit the fixed image", chromedp.Click(chromedp.CSS(`[data-testid=image-form] button[type=submit]`)))
	if resp.Status != http.StatusOK {
		t.Fatalf("fixed image: status %d at %s", resp.Status, resp.URL)
	}
	if p := btLocation(t, ctx).Path; p != "/catalog" {
		t.Fatalf("after saving the browser is at %s, want /catalog", p)
	}
	if flash := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(flash, name) {
		t.Errorf("flash %q does not name the saved image", flash)
	}
	found := false
	for _, c := range btTexts(t, ctx, `[data-testid=image-card]`) {
		if strings.Contains(c, name) {
			found = true
			if !strings.Contains(c, "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11") || !strings.Contains(c, "PyTorch 2.5") {
				t.Errorf("the new card lacks its reference or tags: %q", c)
			}
		}
	}
	if !found {
		t.Errorf("no image card named %q on /catalog", name)
	}
}
