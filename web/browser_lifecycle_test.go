package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
	"workbench/orchestrator/runtime"
	"workbench/web"
)

// The browser tests of every lifecycle action (issue 8 §2): a person clicks
// Launch, Open, Stop, Start and Delete in Chromium, with JavaScript on and
// off, and each action is checked where its truth lives: the engine (the
// container), the GPU API and the usage record, not only the page.

// lcGPUFlavor is a one-GPU flavor of the simulated DGX H100.
const lcGPUFlavor = "1x H100 80GB HBM3"

// lcSlowImage is the fake Jupyter taking 2 s to shut down, as a real
// JupyterLab does while it stops its kernels: the Stop request is still in
// flight when the page's live updates see "stopping" (the original bug) and
// while a test reloads the page or closes the tab.
const lcSlowImage = "fake-slow"

// lcSlowerImage takes 6 s to shut down: the tests that cut the Stop request
// must act while it is still in flight, even on a loaded machine.
const lcSlowerImage = "fake-slower"

// lcGatedImage stops slowly too, and does not start listening until the
// test lets it (openLaunchGate): on a quiet machine the fake is ready before
// the browser has loaded the workbench page, and the launch progress the
// person is meant to watch would never be on screen.
const lcGatedImage = "fake-slow-gated"

// lcRig is a portal on the real engine with alice, her API token and the
// slow-stopping fake image.
type lcRig struct {
	p         *testPortal
	cli       *client.Client
	installID string
	token     string
}

func newLCRig(t *testing.T, mutate ...func(*web.Config)) *lcRig {
	t.Helper()
	p, cli := enginePortal(t, mutate...)
	ctx := context.Background()
	installID, err := p.srv.Store.InstallID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := p.srv.Store.ImageByNameOrID(ctx, "fake")
	if err != nil {
		t.Fatal(err)
	}
	// The gate file lives in alice's home volume, so it is there for every
	// later start; named per portal, in case a volume outlives its test.
	for name, flags := range map[string]string{lcSlowImage: "--shutdown-delay=2s", lcSlowerImage: "--shutdown-delay=6s",
		lcGatedImage: "--shutdown-delay=2s --ready-file=" + testimages.FakeJupyterHome + "/" + lcGateFile(installID)} {
		if err := p.srv.Store.CreateImage(ctx, &models.Image{Name: name, Image: img.Image,
			StartCommand: testimages.FakeJupyterStartCommand + " " + flags,
			RunAsUser:    "1000", HomePath: testimages.FakeJupyterHome, Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	return &lcRig{p: p, cli: cli, installID: installID, token: tokenFor(t, p, "alice", "user")}
}

func lcGateFile(installID string) string { return ".launch-gate-" + installID }

// openLaunchGate lets workbench id's fake Jupyter (lcGatedImage) start
// listening: it writes the gate file into the container's home the way the
// portal writes its own files there (a copy into the container, nothing run
// inside it).
func (r *lcRig) openLaunchGate(t *testing.T, id string) {
	t.Helper()
	engine, err := runtime.NewDocker()
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	if err := engine.WriteHomeFile(context.Background(), "wb-"+r.installID+"-"+id, testimages.FakeJupyterHome, "1000:100", lcGateFile(r.installID), nil); err != nil {
		t.Fatalf("open the launch gate: %v", err)
	}
}

// browser starts Chromium (JavaScript on or off) and logs alice in.
// Screenshots go to artifacts/screenshots/.
func (r *lcRig) browser(t *testing.T, js bool) context.Context {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(btArtifactDir(t), "screenshots"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := btNewBrowserWithin(t, 6*time.Minute)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, ctx, r.p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("alice login: status %d at %s", resp.Status, resp.URL)
	}
	return ctx
}

// btScriptsOff turns page scripts off in the tab, as a user with JavaScript
// disabled has it (DevTools evaluation still works for the test's reads).
func btScriptsOff() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})
}

// btAcceptDialogs accepts every confirm() the tab shows (as a person clicking
// OK) and returns the questions asked so far.
func btAcceptDialogs(t *testing.T, ctx context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	err := chromedp.Listen(ctx, func(ev any) {
		d, ok := ev.(*page.EventJavascriptDialogOpening)
		if !ok {
			return
		}
		mu.Lock()
		asked = append(asked, d.Message)
		mu.Unlock()
		// Commands cannot run inside the listener.
		go chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			return err
		}))
	})
	if err != nil {
		t.Fatalf("listen for dialogs: %v", err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// lcEventually polls cond (generously: the engine may be busy) until it
// holds; it fails the test with cond's last explanation.
func lcEventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after 90 s: %s", what, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// assertStopped checks a finished stop against the engine, the GPU API and
// the usage record.
func (r *lcRig) assertStopped(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	lcEventually(t, "the container is gone or exited", func() (bool, string) {
		info, err := r.cli.ContainerInspect(ctx, "wb-"+r.installID+"-"+id)
		if client.IsErrNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return !info.State.Running, "container " + info.State.Status
	})
	lcEventually(t, "its GPUs are free in /api/v1/gpus", func() (bool, string) {
		code, body := r.p.api("GET", "/api/v1/gpus", r.token, "")
		if code != http.StatusOK {
			return false, "GET /api/v1/gpus: " + http.StatusText(code)
		}
		items, _ := body["items"].([]any)
		for _, it := range items {
			g, _ := it.(map[string]any)
			if g["workbench_id"] == id {
				return false, "GPU " + g["uuid"].(string) + " still held"
			}
		}
		return len(items) > 0, "no GPUs listed"
	})
	lcEventually(t, "its usage interval is closed", func() (bool, string) {
		_, err := r.p.srv.Store.OpenIntervalOf(ctx, id)
		if errors.Is(err, models.ErrNotFound) {
			return true, ""
		}
		return false, "open interval remains"
	})
	lcEventually(t, "the record says stopped", func() (bool, string) {
		wb, err := r.p.srv.Store.WorkbenchByID(ctx, id)
		if err != nil {
			return false, err.Error()
		}
		return wb.State == models.StateStopped, "state " + wb.State + " " + wb.StopError
	})
}

// assertRunning checks that the engine runs the container, a GPU is held and
// metering is open: so the stop checks that follow can fail.
func (r *lcRig) assertRunning(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	info, err := r.cli.ContainerInspect(ctx, "wb-"+r.installID+"-"+id)
	if err != nil || !info.State.Running {
		t.Fatalf("running workbench: container not running (%v)", err)
	}
	if _, err := r.p.srv.Store.OpenIntervalOf(ctx, id); err != nil {
		t.Fatalf("running workbench: no open usage interval (%v)", err)
	}
	held := false
	for _, holder := range r.gpuHolders(t) {
		held = held || holder == id
	}
	if !held {
		t.Fatal("running workbench holds no GPU in /api/v1/gpus")
	}
}

func (r *lcRig) gpuHolders(t *testing.T) []string {
	t.Helper()
	code, body := r.p.api("GET", "/api/v1/gpus", r.token, "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/v1/gpus: %d", code)
	}
	var out []string
	items, _ := body["items"].([]any)
	for _, it := range items {
		g, _ := it.(map[string]any)
		if h, _ := g["workbench_id"].(string); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// launchAPI launches a workbench of a slow-stopping image through the API
// and waits until it runs (for the tests whose subject is not the launch
// form).
func (r *lcRig) launchAPI(t *testing.T, name, image string) string {
	t.Helper()
	code, wb := r.p.api("POST", "/api/v1/workbenches", r.token, `{"name":"`+name+`","image":"`+image+`","flavor":"`+lcGPUFlavor+`"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch %s: %d %v", name, code, wb)
	}
	id := wb["id"].(string)
	waitState(t, r.p, r.token, id, "running")
	return id
}

func (r *lcRig) volumeExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := r.cli.VolumeInspect(context.Background(), name)
	if client.IsErrNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("inspect volume %s: %v", name, err)
	}
	return true
}

// lcWaitPageState waits until the workbench page shows want: the page follows
// by itself (server-sent events with JavaScript, a meta refresh without).
func lcWaitPageState(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	state, seen := btWaitWorkbenchState(t, ctx, want, 90*time.Second)
	if state != want {
		t.Fatalf("the workbench page shows %q after 90 s (states seen: %v), want %s", state, seen, want)
	}
}

// lcWaitNotebook waits until the tab, on a notebook's address, shows the
// notebook: the not-running page reloads itself while the workbench starts
// (a meta refresh, JavaScript or not) and gives way once it runs.
func lcWaitNotebook(t *testing.T, ctx context.Context) {
	t.Helper()
	limit := time.Now().Add(90 * time.Second)
	for {
		gone, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
			`document.readyState === "complete" && !document.querySelector("[data-testid=not-running]")`))
		if err == nil && gone {
			return
		}
		if time.Now().After(limit) {
			t.Fatalf("the notebook tab still shows the not-running page after 90 s (%v)", err)
		}
		time.Sleep(200 * time.Millisecond) // poll: the page reloads itself every 3 s
	}
}

// assertNotRunningPage opens a stopped workbench's notebook URL and checks
// the portal's page: 503, why it stopped, a Start button and a way back.
func (r *lcRig) assertNotRunningPage(t *testing.T, ctx context.Context, notebook, why string) {
	t.Helper()
	resp := btNavigate(t, ctx, notebook)
	if resp.Status != http.StatusServiceUnavailable {
		t.Fatalf("notebook URL of a stopped workbench: status %d, want 503", resp.Status)
	}
	btDo(t, ctx, "wait for the not-running page", chromedp.WaitVisible(chromedp.CSS(`[data-testid=not-running]`)))
	if got := btText(t, ctx, `[data-testid=not-running-why]`); !strings.Contains(got, why) {
		t.Errorf("the notebook tab says %q, want it to say %q", got, why)
	}
	for _, css := range []string{`[data-testid=not-running-start]`, `[data-testid=not-running-back]`, `link[rel=stylesheet][href="/static/css/app.css"]`} {
		if n := len(btTexts(t, ctx, css)); n != 1 {
			t.Errorf("the not-running page has %d %s, want 1", n, css)
		}
	}
}

func jsName(js bool) string {
	if js {
		return "js-on"
	}
	return "js-off"
}

// Launch from the form, watch the progress, open the notebook through the
// portal, click Stop, Start, Stop, Delete; then a second workbench deleted
// with its data. With JavaScript on, the page's live updates see "stopping"
// while the Stop POST is still in flight: the old script reloaded then,
// which aborted the POST and left the workbench stopping with its container
// up and its GPUs bound.
func TestBrowserEveryAction(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserEveryAction(t, js) })
	}
}

func testBrowserEveryAction(t *testing.T, js bool) {
	r := newLCRig(t)
	ctx := r.browser(t, js)
	asked := btAcceptDialogs(t, ctx)
	shot := func(name string) { btScreenshot(t, ctx, "screenshots/lifecycle-"+jsName(js)+"-"+name+".png") }

	// Launch from the form.
	if resp := btSubmit(t, ctx, `click "New workbench"`, chromedp.Click(chromedp.CSS(`[data-testid=new-workbench]`))); resp.Status != http.StatusOK {
		t.Fatalf("launch page: status %d", resp.Status)
	}
	btDo(t, ctx, "fill the launch form",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
		chromedp.Click(chromedp.CSS(`input[name=image][value="`+lcGatedImage+`"]`)),
		chromedp.Click(chromedp.CSS(`input[name=flavor][value="`+lcGPUFlavor+`"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "every-action"),
	)
	if resp := btSubmit(t, ctx, "submit the launch form", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("launch: status %d at %s", resp.Status, resp.URL)
	}
	wbPath := btLocation(t, ctx).Path
	id := strings.TrimPrefix(wbPath, "/workbenches/")
	if id == wbPath || id == "new" || id == "" {
		t.Fatalf("after launching the browser is at %s, want the workbench page", wbPath)
	}
	// The person watches the launch progress: the redirect lands on the
	// page while the launch is still being driven, and the page follows it
	// by itself. The fake Jupyter is held back until the page has shown
	// "starting" (its container is up, the portal waits for it to answer).
	state, seen := btWaitWorkbenchState(t, ctx, models.StateStarting, 90*time.Second)
	if state != models.StateStarting {
		t.Fatalf("the page shows %q after 90 s (states seen %v), want starting", state, seen)
	}
	r.openLaunchGate(t, id)
	state, more := btWaitWorkbenchState(t, ctx, "running", 90*time.Second)
	if state != "running" {
		t.Fatalf("the page shows %q after 90 s (states seen %v, then %v), want running", state, seen, more)
	}
	t.Logf("states the page showed while launching: %v, then %v", seen, more)
	btDo(t, ctx, "wait for Open JupyterLab", chromedp.WaitVisible(chromedp.CSS(`[data-testid=open-jupyter]`)))
	shot("1-running")
	r.assertRunning(t, id)

	// Open the notebook through the portal (the link's href, in this tab).
	href, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`[data-testid=open-jupyter]`), "href"))
	if err != nil || !href.Exists {
		t.Fatalf("Open JupyterLab has no href (%v)", err)
	}
	base, _ := url.Parse(r.p.ts.URL)
	ref, _ := url.Parse(href.Value)
	if resp := btNavigate(t, ctx, base.ResolveReference(ref).String()); resp.Status != http.StatusOK {
		t.Fatalf("notebook through the proxy: status %d", resp.Status)
	}
	if h := btText(t, ctx, `h1`); h != "Fake JupyterLab" {
		t.Fatalf("the notebook tab shows %q, want Fake JupyterLab", h)
	}
	shot("2-notebook")
	btNavigate(t, ctx, r.p.ts.URL+wbPath)
	// The launch form queues by default; on a free pool the launch started
	// at once, and its history says so: no "queued" line it never waited in.
	states := btTexts(t, ctx, `[data-testid=wb-history] .state`)
	if len(states) == 0 || states[0] != "requested" || slices.Contains(states, "queued") ||
		slices.Contains(btTexts(t, ctx, `[data-testid=history-message]`), "placed from the queue") {
		t.Fatalf("history of a launch that started at once: %v", states)
	}

	// Click Stop: the answer is the page of the stopped workbench.
	btDo(t, ctx, "wait for Stop", chromedp.WaitVisible(chromedp.CSS(`[data-testid=stop]`)))
	resp := btSubmit(t, ctx, "click Stop", chromedp.Click(chromedp.CSS(`[data-testid=stop]`)))
	if resp.Status != http.StatusOK {
		t.Fatalf("Stop: status %d at %s", resp.Status, resp.URL)
	}
	r.assertStopped(t, id)
	lcWaitPageState(t, ctx, "stopped")
	if progress := btTexts(t, ctx, `[data-testid=wb-progress]`); len(progress) != 0 {
		t.Errorf("a stopped workbench shows progress %v", progress)
	}
	shot("3-stopped")

	// The notebook tab of a stopped workbench: the portal's page says why
	// and links back.
	notebook := base.ResolveReference(ref).String()
	r.assertNotRunningPage(t, ctx, notebook, "It was stopped by you")
	shot("3b-notebook-tab-stopped")
	if resp := btSubmit(t, ctx, "click Back to the workbench page", chromedp.Click(chromedp.CSS(`[data-testid=not-running-back]`))); resp.Status != http.StatusOK || btLocation(t, ctx).Path != wbPath {
		t.Fatalf("Back link: status %d at %s, want %s", resp.Status, btLocation(t, ctx).Path, wbPath)
	}

	// Start again from the workbench page.
	if resp := btSubmit(t, ctx, "click Start", chromedp.Click(chromedp.CSS(`[data-testid=start]`))); resp.Status != http.StatusOK {
		t.Fatalf("Start: status %d", resp.Status)
	}
	lcWaitPageState(t, ctx, "running")
	r.assertRunning(t, id)
	shot("4-started")

	// Stop, then Start from the notebook tab's page.
	btDo(t, ctx, "wait for Stop", chromedp.WaitVisible(chromedp.CSS(`[data-testid=stop]`)))
	btSubmit(t, ctx, "click Stop again", chromedp.Click(chromedp.CSS(`[data-testid=stop]`)))
	r.assertStopped(t, id)
	r.assertNotRunningPage(t, ctx, notebook, "It was stopped by you")
	// The tab stays at the notebook's address: the page follows the start
	// and gives way to the notebook once it runs.
	btSubmit(t, ctx, "click Start in the notebook tab", chromedp.Click(chromedp.CSS(`[data-testid=not-running-start]`)))
	if got, want := btLocation(t, ctx), base.ResolveReference(ref); got.Path != want.Path {
		t.Fatalf("Start from the notebook tab went to %s, want the notebook's %s", got.Path, want.Path)
	}
	lcWaitNotebook(t, ctx)
	r.assertRunning(t, id)
	btNavigate(t, ctx, r.p.ts.URL+wbPath)
	lcWaitPageState(t, ctx, "running")

	// Stop, then Delete keeping the data.
	btDo(t, ctx, "wait for Stop", chromedp.WaitVisible(chromedp.CSS(`[data-testid=stop]`)))
	btSubmit(t, ctx, "click Stop a third time", chromedp.Click(chromedp.CSS(`[data-testid=stop]`)))
	r.assertStopped(t, id)
	lcWaitPageState(t, ctx, "stopped")
	home := "wb-home-" + r.installID + "-alice"
	if resp := btSubmit(t, ctx, "click Delete", chromedp.Click(chromedp.CSS(`[data-testid=delete]`))); resp.Status != http.StatusOK {
		t.Fatalf("Delete: status %d", resp.Status)
	}
	if !js {
		// No confirm() ran: the portal asks on a page of its own, and
		// nothing is deleted until it is answered.
		if code, _ := r.p.api("GET", "/api/v1/workbenches/"+id, r.token, ""); code != http.StatusOK {
			t.Fatalf("Delete with no JavaScript deleted before asking: %d", code)
		}
		if resp := btSubmit(t, ctx, "answer the question", chromedp.Click(chromedp.CSS(`[data-testid=confirm-yes]`))); resp.Status != http.StatusOK {
			t.Fatalf("Delete, answered: status %d", resp.Status)
		}
	}
	if p := btLocation(t, ctx).Path; p != "/" {
		t.Errorf("after Delete the browser is at %s, want /", p)
	}
	if code, _ := r.p.api("GET", "/api/v1/workbenches/"+id, r.token, ""); code != http.StatusNotFound {
		t.Fatalf("deleted workbench still readable: %d", code)
	}
	if !r.volumeExists(t, home) {
		t.Fatal("Delete without \"delete my data\" removed the home volume")
	}
	shot("5-deleted")

	// A second workbench, deleted with its data.
	id2 := r.launchAPI(t, "with-data", lcSlowImage)
	btNavigate(t, ctx, r.p.ts.URL+"/workbenches/"+id2)
	btDo(t, ctx, "wait for Stop", chromedp.WaitVisible(chromedp.CSS(`[data-testid=stop]`)))
	btSubmit(t, ctx, "click Stop", chromedp.Click(chromedp.CSS(`[data-testid=stop]`)))
	r.assertStopped(t, id2)
	lcWaitPageState(t, ctx, "stopped")
	btDo(t, ctx, `tick "also delete my data"`, chromedp.Click(chromedp.CSS(`[data-testid=delete-data]`)))
	if resp := btSubmit(t, ctx, "click Delete with data", chromedp.Click(chromedp.CSS(`[data-testid=delete]`))); resp.Status != http.StatusOK {
		t.Fatalf("Delete with data: status %d", resp.Status)
	}
	if !js {
		// No confirm() ran: the portal asks on a page of its own before
		// the home volume goes, and nothing is deleted until it is answered.
		if code, _ := r.p.api("GET", "/api/v1/workbenches/"+id2, r.token, ""); code != http.StatusOK || !r.volumeExists(t, home) {
			t.Fatalf("Delete with data and no JavaScript deleted before asking: workbench %d, volume kept %v", code, r.volumeExists(t, home))
		}
		if resp := btSubmit(t, ctx, "confirm deleting the data", chromedp.Click(chromedp.CSS(`[data-testid=delete-data-confirmed]`))); resp.Status != http.StatusOK {
			t.Fatalf("confirm Delete with data: status %d", resp.Status)
		}
	}
	if code, _ := r.p.api("GET", "/api/v1/workbenches/"+id2, r.token, ""); code != http.StatusNotFound {
		t.Fatalf("deleted workbench still readable: %d", code)
	}
	if r.volumeExists(t, home) {
		t.Fatal("Delete with \"delete my data\" kept the home volume")
	}
	shot("6-deleted-with-data")

	q := asked()
	if js {
		if len(q) != 2 || !strings.Contains(q[0], "home volume is kept") || !strings.Contains(q[1], "AND your home volume") {
			t.Errorf("confirmations asked %q, want the keep-data then the delete-data question", q)
		}
	} else if len(q) != 0 {
		t.Errorf("dialogs shown with JavaScript off: %q", q)
	}
}

// A person reloads the page while the stop is under way, and another closes
// the tab right after clicking Stop: both cut the Stop request, and both
// stops complete.
func TestBrowserStopSurvivesReloadAndClosedTab(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testStopSurvives(t, js) })
	}
}

func testStopSurvives(t *testing.T, js bool) {
	r := newLCRig(t)
	ctx := r.browser(t, js)
	reloadID := r.launchAPI(t, "reloaded", lcSlowerImage)
	closedID := r.launchAPI(t, "closed-tab", lcSlowerImage)
	r.assertRunning(t, reloadID)
	r.assertRunning(t, closedID)
	waitStopping := func(id string) {
		lcEventually(t, "the stop began", func() (bool, string) {
			wb, err := r.p.srv.Store.WorkbenchByID(context.Background(), id)
			if err != nil {
				return false, err.Error()
			}
			return wb.State == models.StateStopping, "state " + wb.State
		})
	}

	// Reload during the stop. The POST's fate is watched, so the test knows
	// it really cut the request.
	var mu sync.Mutex
	stopReq, cut := network.RequestID(""), false
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if e.Request.Method == http.MethodPost && strings.HasSuffix(e.Request.URL, "/stop") {
				stopReq = e.RequestID
			}
		case *network.EventLoadingFailed:
			if e.RequestID == stopReq {
				cut = true
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	btNavigate(t, ctx, r.p.ts.URL+"/workbenches/"+reloadID)
	btDo(t, ctx, "click Stop", chromedp.WaitVisible(chromedp.CSS(`[data-testid=stop]`)), chromedp.Click(chromedp.CSS(`[data-testid=stop]`)))
	waitStopping(reloadID)
	btDo(t, ctx, "reload the page", chromedp.Reload())
	mu.Lock()
	wasCut := cut
	mu.Unlock()
	if !wasCut {
		t.Error("the reload did not cut the Stop request (it finished first): the test proved nothing")
	}
	btScreenshot(t, ctx, "screenshots/lifecycle-"+jsName(js)+"-reload-during-stop.png")
	r.assertStopped(t, reloadID)
	lcWaitPageState(t, ctx, "stopped")

	// Close the tab right after clicking Stop.
	tab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	if !js {
		btDo(t, tab, "disable JavaScript in the new tab", btScriptsOff())
	}
	btNavigate(t, tab, r.p.ts.URL+"/workbenches/"+closedID)
	btDo(t, tab, "click Stop", chromedp.WaitVisible(chromedp.CSS(`[data-testid=stop]`)), chromedp.Click(chromedp.CSS(`[data-testid=stop]`)))
	waitStopping(closedID)
	if err := chromedp.Cancel(tab); err != nil {
		t.Fatalf("close the tab: %v", err)
	}
	r.assertStopped(t, closedID)
}

// A stop that failed (the engine timed out) is shown as such: the reason,
// "Retry stop" and "Force stop", no progress bar. The failure is recorded in
// the store as the manager records it (the shared test engine cannot be
// made to fail); periodic reconciliation is pushed out of the way so the
// person's clicks are what finishes each stop.
func TestBrowserFailedStopOffersRetryAndForce(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			r := newLCRig(t, func(c *web.Config) { c.Workbenches.ReconcileEvery = time.Hour })
			ctx := r.browser(t, js)
			btAcceptDialogs(t, ctx)
			for _, tc := range []struct {
				name, button string
				wantExit     int
			}{{"retried", "retry-stop", 0}, {"forced", "force-stop-own", 137}} {
				id := r.launchAPI(t, tc.name, lcSlowImage)
				if err := r.p.srv.Store.SetWorkbenchState(context.Background(), id, models.StateStopping, 0, "",
					map[string]any{"stop_error": "could not stop the container: engine timed out"}); err != nil {
					t.Fatal(err)
				}
				btNavigate(t, ctx, r.p.ts.URL+"/workbenches/"+id)
				btDo(t, ctx, "wait for the stop failure", chromedp.WaitVisible(chromedp.CSS(`[data-testid=stop-error]`)))
				if got := btText(t, ctx, `[data-testid=stop-error]`); !strings.Contains(got, "engine timed out") {
					t.Errorf("stop failure says %q", got)
				}
				if n := len(btTexts(t, ctx, `[data-testid=wb-progress]`)); n != 0 {
					t.Errorf("a failed stop shows %d progress bars", n)
				}
				btScreenshot(t, ctx, "screenshots/lifecycle-"+jsName(js)+"-stop-failed-"+tc.name+".png")
				if resp := btSubmit(t, ctx, "click "+tc.button, chromedp.Click(chromedp.CSS(`[data-testid=`+tc.button+`]`))); resp.Status != http.StatusOK {
					t.Fatalf("%s: status %d", tc.button, resp.Status)
				}
				if tc.button == "force-stop-own" && !js {
					// No confirm() ran: the portal asks on a page of its
					// own (unsaved work in memory is lost), and kills
					// nothing until it is answered.
					if got := btText(t, ctx, `[data-testid=confirm-question]`); !strings.Contains(got, "Kill the container now?") {
						t.Fatalf("Force stop with no JavaScript asked %q", got)
					}
					if resp := btSubmit(t, ctx, "answer the question", chromedp.Click(chromedp.CSS(`[data-testid=confirm-yes]`))); resp.Status != http.StatusOK {
						t.Fatalf("Force stop, answered: status %d", resp.Status)
					}
				}
				r.assertStopped(t, id)
				lcWaitPageState(t, ctx, "stopped")
				info, err := r.cli.ContainerInspect(context.Background(), "wb-"+r.installID+"-"+id)
				if err != nil {
					t.Fatal(err)
				}
				if info.State.ExitCode != tc.wantExit {
					t.Errorf("%s: container exit code %d, want %d", tc.button, info.State.ExitCode, tc.wantExit)
				}
			}
		})
	}
}
