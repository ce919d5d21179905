package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"

	"workbench/models"
)

// axNamed are the roles a screen reader announces by their name: controls
// a person operates (a progress bar, a table and its header cells too, and
// images), which must not be announced as just "button" or "checkbox".
var axNamed = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "spinbutton": true, "slider": true, "switch": true, "tab": true,
	"menuitem": true, "progressbar": true, "meter": true, "DisclosureTriangle": true,
	"columnheader": true, "rowheader": true, "image": true, "radiogroup": true, "table": true,
}

// axText is an accessibility value as text ("" for none).
func axText(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s any
	if err := json.Unmarshal(v.Value, &s); err != nil {
		return ""
	}
	return fmt.Sprint(s)
}

// axPage is what Chromium's accessibility tree says of the tab's page:
// the nodes that a screen reader can reach, the headings in document
// order and the root's language.
type axPage struct {
	nodes    []*accessibility.Node
	headings []string // "h1 Workbenches"
	lang     string
}

func btAXPage(t *testing.T, ctx context.Context) axPage {
	t.Helper()
	res, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		t.Fatalf("accessibility tree: %v", err)
	}
	var p axPage
	for _, n := range res.Nodes {
		if !n.Ignored {
			p.nodes = append(p.nodes, n)
		}
	}
	p.headings = btTexts(t, ctx, "h1, h2, h3, h4, h5, h6")
	tags, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("h1, h2, h3, h4, h5, h6"), (h) => h.tagName.toLowerCase())`))
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.headings {
		p.headings[i] = tags[i] + " " + p.headings[i]
	}
	if p.lang, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`)); err != nil {
		t.Fatal(err)
	}
	return p
}

// axCheck fails for every reachable control without a name, a heading
// outline that does not start at one h1 or skips a level, and a page whose
// language is not lang.
func axCheck(t *testing.T, ctx context.Context, page, lang string) {
	t.Helper()
	p := btAXPage(t, ctx)
	if p.lang != lang {
		t.Errorf("%s: <html lang=%q>, want %q", page, p.lang, lang)
	}
	for _, n := range p.nodes {
		role := axText(n.Role)
		if axNamed[role] && strings.TrimSpace(axText(n.Name)) == "" {
			html, _ := chromedp.Call(ctx, dom.GetOuterHTML, dom.GetOuterHTMLParams{BackendNodeID: n.BackendDOMNodeID})
			t.Errorf("%s: a %s without a name: %.300s", page, role, html.OuterHTML)
		}
	}
	h1 := 0
	last := 0
	for i, h := range p.headings {
		level := int(h[1] - '0')
		if level == 1 {
			h1++
		}
		if i == 0 && level != 1 {
			t.Errorf("%s: the first heading is %q, want an h1", page, h)
		}
		if last > 0 && level > last+1 {
			t.Errorf("%s: heading %q comes after an h%d (skips a level)", page, h, last)
		}
		last = level
	}
	if h1 != 1 {
		t.Errorf("%s: %d h1 headings (%v), want one", page, h1, p.headings)
	}
	skip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const a = document.querySelector("a.skip-link");
		return a && document.querySelector(a.getAttribute("href")) ? a.getAttribute("href") : "";
	})()`))
	if err != nil || skip != "#main" {
		t.Errorf("%s: skip link to the main content: %q %v", page, skip, err)
	}
}

// a11yRig is a data scientist's portal: alice's workbenches in the states
// her pages show (running, stopped, pulling at 40 %, queued, failed).
type a11yRig struct {
	p                                 *testPortal
	running, stopped, pull, queued, f *models.Workbench
}

func newA11yRig(t *testing.T) a11yRig {
	t.Helper()
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	r := a11yRig{p: p}
	r.running = p.runningRecord(alice, "running-one", models.GPUNeed{})
	set := func(name, state string, progress int, reason string) *models.Workbench {
		wb := p.runningRecord(alice, name, models.GPUNeed{})
		if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, state, progress, reason, nil); err != nil {
			t.Fatal(err)
		}
		return wb
	}
	r.stopped = set("stopped-one", models.StateStopped, 0, "")
	r.pull = set("pulling-one", "pulling", 40, "")
	r.queued = set("queued-one", "queued", 0, "")
	r.f = set("failed-one", "failed", 0, "image pull failed")
	return r
}

// A blind data scientist's pages, in English and in Chinese, through
// Chromium's accessibility tree (what a screen reader is given): every
// control, progress bar and table header has a name, the headings form an
// outline from one h1, the page's language is the one chosen, and the
// skip link leads to the main content. Before: the phone menu's checkbox
// was a nameless tab stop on every page of a wide screen, the workbench
// list's last column header and the launch progress bar had no name.
func TestBrowserScreenReaderNamesEveryControl(t *testing.T) {
	r := newA11yRig(t)
	b := btNewBrowser(t)
	btNavigate(t, b, r.p.ts.URL+"/login")
	axCheck(t, b, "login", "en")
	btLogin(t, b, "alice", "wrong-password")
	axCheck(t, b, "login refused", "en")
	btLogin(t, b, "alice", "alice-password")
	pages := []string{"/", "/workbenches/new", "/workbenches/" + r.running.ID, "/workbenches/" + r.stopped.ID,
		"/workbenches/" + r.pull.ID, "/workbenches/" + r.queued.ID, "/workbenches/" + r.f.ID, "/usage", "/gpus"}
	for _, lang := range []string{"en", "zh-CN"} {
		if lang == "zh-CN" {
			btSubmit(t, b, "choose Chinese", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
		}
		for _, path := range pages {
			btNavigate(t, b, r.p.ts.URL+path)
			axCheck(t, b, lang+" "+path, lang)
		}
	}
	// The launch form sent back with errors.
	btNavigate(t, b, r.p.ts.URL+"/workbenches/new")
	btDo(t, b, "type a bad name", chromedp.SetValue(chromedp.CSS(`input[name=name]`), "bad name!!"))
	btSubmit(t, b, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
	axCheck(t, b, "launch refused", "zh-CN")
}

// The buttons repeated in the workbench list are named with their
// workbench: each running one's Open ("Open JupyterLab running-one") and
// "+1 h" near a maximum runtime ("+1 h short-one"). A screen reader's list
// of links and buttons read "Open JupyterLab" and "+1 h" once per
// workbench, with nothing to tell them apart.
func TestBrowserListButtonsNameTheirWorkbench(t *testing.T) {
	r := newA11yRig(t)
	p := r.p
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	_, fl := p.api("POST", "/api/v1/flavors", admin, `{"name":"short","cpu_cores":1,"memory_gib":2,"max_runtime_seconds":7200}`)
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := &models.Workbench{Name: "short-one", OwnerID: alice.ID, ImageID: 1, FlavorID: int64(fl["id"].(float64)), Token: "t"}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	// Started 115 minutes ago, of 120: its stop is near, "+1 h" is offered.
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", map[string]any{"started_at": time.Now().UTC().Add(-115 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	b := btNewBrowser(t)
	btNavigate(t, b, p.ts.URL+"/login")
	btLogin(t, b, "alice", "alice-password")
	var names []string
	for _, n := range btAXPage(t, b).nodes {
		name, role := axText(n.Name), axText(n.Role)
		if (role == "link" && strings.HasPrefix(name, "Open JupyterLab")) || (role == "button" && strings.HasPrefix(name, "+1 h")) {
			names = append(names, name)
		}
	}
	got := strings.Join(names, "|")
	for _, want := range []string{"Open JupyterLab short-one", "Open JupyterLab running-one", "+1 h short-one"} {
		if !strings.Contains("|"+got+"|", "|"+want+"|") {
			t.Errorf("the list's repeated controls are named %q, want %q among them", names, want)
		}
	}
	if len(names) != 3 {
		t.Errorf("the list's repeated controls are named %q, want three", names)
	}
}

// The launch form's radios are named by the image's or flavor's name
// alone and described by the rest of their card: the name read every
// fact, tag, price and the "cost over time" link before the next choice.
func TestBrowserLaunchChoicesAreNamedByTheirName(t *testing.T) {
	r := newA11yRig(t)
	b := btNewBrowser(t)
	btNavigate(t, b, r.p.ts.URL+"/login")
	btLogin(t, b, "alice", "alice-password")
	btNavigate(t, b, r.p.ts.URL+"/workbenches/new")
	values, err := chromedp.Run(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("input[type=radio][name=image], input[type=radio][name=flavor]"), (r) => r.value)`))
	if err != nil {
		t.Fatal(err)
	}
	var radios []string
	for _, n := range btAXPage(t, b).nodes {
		if axText(n.Role) != "radio" {
			continue
		}
		radios = append(radios, axText(n.Name))
		if axText(n.Description) == "" {
			t.Errorf("radio %q has no description (its card's facts)", axText(n.Name))
		}
	}
	if strings.Join(radios, "|") != strings.Join(values, "|") || len(values) < 4 {
		t.Errorf("the launch form's radios are named\n%q\nwant their values\n%q", radios, values)
	}
	var cpu string
	for _, n := range btAXPage(t, b).nodes {
		if axText(n.Role) == "radio" && axText(n.Name) == "CPU small" {
			cpu = axText(n.Description)
		}
	}
	if !strings.Contains(cpu, "2 CPU cores") || !strings.Contains(cpu, "USD/h") || strings.Contains(cpu, "cost over time") {
		t.Errorf("CPU small is described %q, want its cores and price, not the link", cpu)
	}
}

// The home list, which refreshes itself, says a workbench's new state in
// the layout's live region ("queued-one: running") when its row changes
// state, and nothing while no state changes (its costs tick every look).
// Before, a queued launch that started read nothing to a screen reader.
func TestBrowserHomeListAnnouncesANewState(t *testing.T) {
	r := newA11yRig(t)
	b := btNewBrowser(t)
	btNavigate(t, b, r.p.ts.URL+"/login")
	btLogin(t, b, "alice", "alice-password")
	if got := btAnnounced(t, b, 0); got != "" {
		t.Fatalf("the list says %q on load", got)
	}
	// Two looks of the list with nothing changed: silence.
	waitTicks := func(n int) {
		t.Helper()
		_, err := chromedp.Run(b, chromedp.Evaluate[bool](fmt.Sprintf(`new Promise((res) => {
			const el = document.getElementById("workbench-list");
			const tick = () => parseInt(el.getAttribute("data-live-ticks") || "0", 10);
			const start = tick();
			const look = () => tick() >= start + %d ? res(true) : setTimeout(look, 100);
			look();
		})`, n), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
	}
	waitTicks(2)
	if got := btText(t, b, `#announcer`); got != "" {
		t.Fatalf("the list says %q with no state changed", got)
	}
	if err := r.p.srv.Store.SetWorkbenchState(context.Background(), r.queued.ID, models.StateRunning, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	if got := btAnnounced(t, b, 30*time.Second); got != "queued-one: running" {
		t.Fatalf("after the queued workbench started the list says %q, want %q", got, "queued-one: running")
	}
}

// Without JavaScript, a refused sign-in ties its message to both fields,
// marks the password invalid and puts the focus there (the username is
// kept), and a launch form sent back marks each wrong control invalid and
// describes it by its message: the name, the idle timeout (its control is
// named idle_minutes, which the script's matching by name missed) and the
// image and hardware choices.
func TestFieldErrorsAreTiedToTheirFieldsWithoutJavaScript(t *testing.T) {
	r := newA11yRig(t)
	p := r.p
	c := p.client()
	_, body := p.postFormBody(c, "/login", url.Values{"username": {"alice"}, "password": {"wrong"}})
	doc := mustDoc(t, body)
	if doc.Find(`#login-error`).Length() != 1 {
		t.Fatalf("no #login-error: %s", body)
	}
	pw := doc.Find(`input[name=password]`)
	if v, _ := pw.Attr("aria-describedby"); v != "login-error" || attrOf(pw, "aria-invalid") != "true" || !pw.Is("[autofocus]") {
		t.Errorf("password after a refused sign-in: %s", outer(pw))
	}
	if un := doc.Find(`input[name=username]`); attrOf(un, "aria-describedby") != "login-error" || un.Is("[autofocus]") {
		t.Errorf("username after a refused sign-in: %s", outer(un))
	}

	p.login(c, "alice", "alice-password")
	_, body = p.postFormBody(c, "/workbenches", url.Values{"name": {"bad name!!"}, "image": {"nope"}, "flavor": {"CPU small"}, "idle_minutes": {"60"}})
	doc = mustDoc(t, body)
	checkField := func(sel, field string) {
		t.Helper()
		if doc.Find(`#error-`+field).Length() != 1 {
			t.Errorf("no message #error-%s", field)
			return
		}
		s := doc.Find(sel)
		if attrOf(s, "aria-invalid") != "true" || !strings.Contains(" "+attrOf(s, "aria-describedby")+" ", " error-"+field+" ") {
			t.Errorf("%s with an error on %s: %s", sel, field, outer(s))
		}
	}
	if doc.Find(`.field-error`).Length() == 0 {
		t.Fatalf("the launch form came back without a field error: %s", body)
	}
	doc.Find(`.field-error[data-field]`).Each(func(_ int, m *goquery.Selection) {
		switch f := attrOf(m, "data-field"); f {
		case "name":
			checkField(`input[name=name]`, f)
		case "image":
			checkField(`[role=radiogroup][aria-labelledby=launch-image-heading]`, f)
		case "flavor":
			checkField(`[role=radiogroup][aria-labelledby=launch-flavor-heading]`, f)
		default:
			t.Errorf("unexpected field error %q", f)
		}
	})
	_, body = p.postFormBody(c, "/workbenches", url.Values{"name": {"ok"}, "image": {"nope"}, "flavor": {"CPU small"}, "idle_minutes": {"soon"}})
	doc = mustDoc(t, body)
	checkField(`input[name=idle_minutes]`, "idle_timeout")
}

// The tables of a data scientist's pages and (since session 56) of the
// administrator's say which way each header cell reads (scope), and a
// column of buttons has a header that says so (it was an empty <th>, read
// as a nameless column). Each table has a caption (visually hidden where a
// heading shows what it is), which names it in a screen reader's list of
// tables: they read "table" without one.
func TestTableHeadersHaveScope(t *testing.T) {
	r := newA11yRig(t)
	p := r.p
	c := p.client()
	p.login(c, "alice", "alice-password")
	ac, _ := mpAdmin(t, p)
	check := func(c *http.Client, path string) {
		t.Helper()
		res, body := p.get(c, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		doc := mustDoc(t, body)
		doc.Find(`table`).Each(func(_ int, tb *goquery.Selection) {
			// A screen reader's list of tables reads each by its name.
			if c := tb.ChildrenFiltered(`caption`); c.Length() != 1 || strings.TrimSpace(c.Text()) == "" {
				t.Errorf("%s: table without a caption: %.200s", path, outer(tb))
			}
		})
		n := 0
		doc.Find(`table th`).Each(func(_ int, th *goquery.Selection) {
			n++
			if _, ok := th.Attr("scope"); !ok {
				t.Errorf("%s: header cell without scope: %s", path, outer(th))
			}
			if strings.TrimSpace(th.Text()) == "" && attrOf(th, "aria-label") == "" {
				t.Errorf("%s: empty header cell: %s", path, outer(th))
			}
		})
		if n == 0 {
			t.Errorf("%s: no table headers found", path)
		}
	}
	for _, path := range []string{"/", "/usage", "/gpus", "/workbenches/" + r.running.ID, "/settings/tokens"} {
		check(c, path)
	}
	for _, path := range []string{"/gpus", "/admin/workbenches", "/admin/billing", "/admin/prices", "/admin/quotas",
		"/admin/users", "/admin/audit", "/admin/utilisation", "/admin/queue", "/admin/cloud-prices", "/catalog",
		"/workbenches/" + r.running.ID} {
		check(ac, path)
	}
}

func mustDoc(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func attrOf(s *goquery.Selection, name string) string {
	v, _ := s.Attr(name)
	return v
}

func outer(s *goquery.Selection) string {
	h, _ := goquery.OuterHtml(s)
	return h
}
