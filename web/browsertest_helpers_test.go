package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The admin password every browser test server starts with.
const btAdminPassword = adminPassword

// btTimeout bounds one browser test from start to end: a hang, not a
// pace (a loaded machine runs Chromium slowly).
const btTimeout = 3 * time.Minute

// btStartPortal starts a portal with simulated DGX H100 GPUs, its own data
// directory and a known admin password, served by httptest (newPortal's
// portal, for tests that only need its address).
func btStartPortal(t *testing.T) *httptest.Server {
	t.Helper()
	return newPortal(t).ts
}

// btChromiumPath finds Debian's chromium. Without it the test fails under CI
// (CI is set) and is skipped elsewhere, with the same instruction.
func btChromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: skipped under -short (make test runs it)")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	const msg = "browser tests need Chromium: install Debian's package with `apt-get install -y chromium` (looked for chromium on PATH and /usr/bin/chromium)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// btNewBrowser starts a headless Chromium for one test and returns its tab's
// context, bounded by btTimeout. Everything stops when the test ends.
func btNewBrowser(t *testing.T) context.Context {
	t.Helper()
	return btNewBrowserWithin(t, btTimeout)
}

// btNewBrowserWithin is btNewBrowser for a test that needs longer than
// btTimeout (several launches and stops on the real engine).
func btNewBrowserWithin(t *testing.T, limit time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	exe := btChromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root in containers
		chromedp.DisableGPU,
		chromedp.WindowSize(1366, 900),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
	)
	opts = append(opts, extra...)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil { // start the browser now: clearer failures
		t.Fatalf("start chromium (%s): %v", exe, err)
	}
	return bctx
}

// btDo runs browser actions and fails the test with what it was doing.
func btDo(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// btNavigate loads url (following redirects) and returns the final response.
func btNavigate(t *testing.T, ctx context.Context, u string) *network.Response {
	t.Helper()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	// Chromium drops a load in flight when an interface comes or goes
	// (net::ERR_NETWORK_CHANGED): on a machine whose Docker engine creates
	// bridges, as launches do, that happens at any moment. A live page
	// that reloads itself as its workbench changes state (the workbench
	// page once it runs) aborts a load started at the same moment
	// (net::ERR_ABORTED). A GET is safe to load again; a few tries, then
	// the error stands.
	for try := 0; try < 3 && err != nil && (strings.Contains(err.Error(), "ERR_NETWORK_CHANGED") || strings.Contains(err.Error(), "ERR_ABORTED")); try++ {
		t.Logf("navigate to %s: %v; loading it again", u, err)
		resp, err = chromedp.Run(ctx, chromedp.NavigateResponse(u))
	}
	if err != nil {
		t.Fatalf("navigate to %s: %v", u, err)
	}
	return resp
}

// btSubmit runs steps that submit a form (a click) and waits for the page it
// leads to; it returns that page's HTTP response.
func btSubmit(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) *network.Response {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, steps...)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return resp
}

// btLocation returns the tab's current URL.
func btLocation(t *testing.T, ctx context.Context) *url.URL {
	t.Helper()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	// A page that reloads itself (the workbench page follows its state)
	// can navigate while the location is read: read it again.
	for try := 0; try < 20 && err != nil && ctx.Err() == nil && strings.Contains(err.Error(), "navigated or closed"); try++ {
		time.Sleep(50 * time.Millisecond) // poll: the new document's context is not there yet
		loc, err = chromedp.Run(ctx, chromedp.Location())
	}
	if err != nil {
		t.Fatalf("location: %v", err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatalf("parse location %q: %v", loc, err)
	}
	return u
}

// btText returns the visible text of the first element matching css.
func btText(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	// A live region (the workbench pages refresh theirs in place) can
	// replace the element between finding it and reading it: look again,
	// a new node is there.
	for try := 0; try < 20 && err != nil && ctx.Err() == nil && strings.Contains(err.Error(), "No node with given id"); try++ {
		s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	}
	if err != nil {
		t.Fatalf("text of %s: %v", css, err)
	}
	return strings.TrimSpace(s)
}

// btTexts returns the trimmed text of every element matching css (none is fine).
func btTexts(t *testing.T, ctx context.Context, css string) []string {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll(`+btJsString(css)+`), e => e.innerText.trim())`))
	if err != nil {
		t.Fatalf("texts of %s: %v", css, err)
	}
	return out
}

// btVisible reports whether the element matching css is rendered with a box.
func btVisible(t *testing.T, ctx context.Context, css string) bool {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`(() => { const e = document.querySelector(`+btJsString(css)+`);
		  if (!e) return false;
		  const s = getComputedStyle(e), r = e.getBoundingClientRect();
		  return s.visibility !== "hidden" && s.display !== "none" && r.width > 0 && r.height > 0; })()`))
	if err != nil {
		t.Fatalf("visibility of %s: %v", css, err)
	}
	return ok
}

func btJsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// btLogin fills the login form the tab shows and submits it; it returns the
// response of the page the form leads to.
func btLogin(t *testing.T, ctx context.Context, username, password string) *network.Response {
	t.Helper()
	btDo(t, ctx, "fill the login form",
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.Clear(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), username),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password),
	)
	return btSubmit(t, ctx, "submit the login form", chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)))
}

// btLoginAsAdmin opens the portal, is sent to the login page and logs in as admin.
func btLoginAsAdmin(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	btNavigate(t, ctx, base+"/login")
	if resp := btLogin(t, ctx, "admin", btAdminPassword); resp.Status != http.StatusOK {
		t.Fatalf("admin login: status %d at %s", resp.Status, resp.URL)
	}
	if p := btLocation(t, ctx).Path; p != "/" {
		t.Fatalf("after login the browser is at %s, want /", p)
	}
}

// btAdminIn starts a portal and a browser signed in as its admin, with
// JavaScript on or off (js): the start of the tests that click a form
// both ways.
func btAdminIn(t *testing.T, js bool) (*testPortal, context.Context) {
	t.Helper()
	p := newPortal(t)
	b := btNewBrowser(t)
	if !js {
		btDo(t, b, "disable JavaScript", btScriptsOff())
	}
	btLoginAsAdmin(t, b, p.ts.URL)
	return p, b
}

// btConfirmSudo expects the "Confirm your password" page that an admin
// change without a recent confirmation gets, types the password and
// submits: the page posts the original form again.
func btConfirmSudo(t *testing.T, ctx context.Context, resp *network.Response, password string) *network.Response {
	t.Helper()
	if resp.Status != http.StatusForbidden {
		t.Fatalf("want the password confirmation (403) first, got status %d at %s", resp.Status, resp.URL)
	}
	btDo(t, ctx, "type the password on the confirm page",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=sudo-form] input[name=sudo_password]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=sudo-form] input[name=sudo_password]`), password),
	)
	btScreenshot(t, ctx, "sudo-confirm.png")
	return btSubmit(t, ctx, "confirm the password", chromedp.Click(chromedp.CSS(`[data-testid=sudo-submit]`)))
}

// btArtifactDir is where screenshots go: $WORKBENCH_ARTIFACTS, else
// artifacts/ at the module root. It is created if missing.
func btArtifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("WORKBENCH_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(btModuleRoot(t), "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifact dir: %v", err)
	}
	return dir
}

// btModuleRoot walks up from the package directory to go.mod, else asks go env.
func btModuleRoot(t *testing.T) string {
	t.Helper()
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if gomod := strings.TrimSpace(string(out)); err == nil && gomod != "" && gomod != os.DevNull {
		return filepath.Dir(gomod)
	}
	t.Fatalf("cannot find the module root (go.mod)")
	return ""
}

// btScreenshot saves a full-page PNG of the tab as name in the artifact dir.
func btScreenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(buf) < 8 || string(buf[1:4]) != "PNG" {
		t.Fatalf("screenshot %s is not a PNG", name)
	}
	p := filepath.Join(btArtifactDir(t), name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
	t.Logf("screenshot: %s", p)
	return p
}

// btColorScheme makes the tab report prefers-color-scheme as scheme
// ("light" or "dark"), so screenshots cover both themes.
func btColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}
