package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// acceptLanguage sends every request with an Accept-Language header, as a
// browser set to that language does.
type acceptLanguage struct {
	lang string
	base http.RoundTripper
}

func (a acceptLanguage) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept-Language", a.lang)
	return a.base.RoundTrip(r)
}

// readersSignedIn signs username in twice: a reader of Chinese and one of
// English (each client sends its Accept-Language).
func (p *testPortal) readersSignedIn(username, password string) (zh, en *http.Client) {
	p.t.Helper()
	zh, en = p.client(), p.client()
	zh.Transport = acceptLanguage{"zh-CN,zh;q=0.9", http.DefaultTransport}
	en.Transport = acceptLanguage{"en-US,en;q=0.9", http.DefaultTransport}
	p.login(zh, username, password)
	p.login(en, username, password)
	return zh, en
}

// A Chinese reader gets the refusals and reasons the orchestrator and the
// models word in English (a flavor too big for the server, a quota
// refusal, a queued workbench's reason) in Chinese on the pages, and an
// English reader gets them as before; the JSON API keeps the English
// message and its code.
func TestRefusalsAndQueueReasonInChinese(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("lin", "lin-password-1")
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	doc := func(body string) *goquery.Document {
		t.Helper()
		d, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	text := func(d *goquery.Document, sel string) string {
		return strings.TrimSpace(d.Find(sel).First().Text())
	}

	// A flavor larger than the server (the simulated DGX has 224 CPU
	// threads): disabled in the form with the reason, refused at launch.
	wide := &models.Flavor{Name: "wide", CPUMilli: 500 * 1000, MemoryMiB: 8 << 10, ShmMiB: 64, Enabled: true}
	if err := p.srv.Store.CreateFlavor(ctx, wide); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client          *http.Client
		disabled, error string
	}{
		{zh, "需要 500 个 CPU；本服务器只有 224 个", "规格 wide 需要 500 个 CPU；本服务器只有 224 个：请选择更小的规格，或联系管理员调整其大小"},
		{en, "needs 500 CPUs; this server has 224", "flavor wide needs 500 CPUs; this server has 224: choose a smaller flavor, or ask an admin to resize it"},
	} {
		_, body := p.get(c.client, "/workbenches/new")
		d := doc(body)
		card := d.Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.Find(`input[name=flavor]`).AttrOr("value", "") == "wide"
		})
		if got := strings.TrimSpace(card.Find(`[data-testid=flavor-unavailable]`).Text()); got != c.disabled {
			t.Errorf("too-big flavor in the form: %q, want %q", got, c.disabled)
		}
		res, body := p.postFormBody(c.client, "/workbenches", url.Values{"image": {"fake"}, "flavor": {"wide"}, "name": {"big"}, "idle_minutes": {"60"}})
		if got := text(doc(body), `[data-testid=error-flavor]`); res.StatusCode != http.StatusBadRequest || got != c.error {
			t.Errorf("too-big flavor launched: %d %q, want 400 %q", res.StatusCode, got, c.error)
		}
	}

	// A quota of one workbench, with one already there: a launch is
	// refused for the quota.
	lim := int64(1)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, lin.ID, models.Limits{MaxWorkbenches: &lim}, "admin"); err != nil {
		t.Fatal(err)
	}
	img, _ := p.srv.Store.ImageByNameOrID(ctx, "fake")
	cpu, err := p.srv.Store.FlavorByNameOrID(ctx, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.CreateWorkbench(ctx, &models.Workbench{Name: "first", OwnerID: lin.ID, ImageID: img.ID, FlavorID: cpu.ID}, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	launch := url.Values{"image": {"fake"}, "flavor": {"CPU small"}, "name": {"second"}, "idle_minutes": {"60"}}
	for _, c := range []struct {
		client *http.Client
		want   string
	}{
		// One sentence after the form's words, the refusal a clause.
		{zh, "无法创建工作台：超出配额——最多 1 个运行中的工作台（你已有 1 个）。"},
		{en, "Could not launch: quota exceeded — at most 1 running workbench (you have 1)."},
	} {
		res, body := p.postFormBody(c.client, "/workbenches", launch)
		if got := text(doc(body), `[data-testid=launch-error]`); res.StatusCode != http.StatusUnprocessableEntity || got != c.want {
			t.Errorf("quota refusal: %d %q, want 422 %q", res.StatusCode, got, c.want)
		}
	}
	// The API keeps its code and the English message.
	tok := tokenFor(t, p, "lin", models.RoleUser)
	code, out := p.api("POST", "/api/v1/workbenches", tok, `{"name":"third","image":"fake","flavor":"CPU small"}`)
	apiErr, _ := out["error"].(map[string]any)
	if code != http.StatusUnprocessableEntity || apiErr["code"] != "quota_exceeded" || apiErr["message"] != "quota exceeded: at most 1 running workbench (you have 1)" {
		t.Errorf("API refusal: %d %v", code, out)
	}

	// Launched with queue, it waits for the first one to stop; its page
	// says why in the reader's language.
	launch.Set("queue", "on")
	res, _ := p.postFormBody(zh, "/workbenches", launch)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("queued launch: %d", res.StatusCode)
	}
	page := res.Header.Get("Location")
	id := strings.TrimPrefix(page, "/workbenches/")
	// The launch kicked a drain; one more, run here, has explained the
	// wait when it returns (drains run one at a time).
	if err := p.srv.Manager.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	wb, err := p.srv.Store.WorkbenchByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != models.StateQueued {
		t.Fatalf("state %s, want queued", wb.State)
	}
	const english = "waiting for your other workbenches to stop: quota exceeded: at most 1 running workbench (you have 1); you are next"
	if wb.QueueReason != english {
		t.Fatalf("stored queue reason %q, want %q", wb.QueueReason, english)
	}
	for _, c := range []struct {
		client *http.Client
		want   string
		order  string // how the queue is ordered: positions move
	}{
		// The refusal inside reads as a clause: one colon to a sentence.
		{zh, "正在等待你的其他工作台停止：超出配额——最多 1 个运行中的工作台（你已有 1 个）；下一个就轮到你", "后来的启动请求可能排到你前面"},
		{en, "waiting for your other workbenches to stop: quota exceeded — at most 1 running workbench (you have 1); you are next", "a later launch can go ahead of yours"},
	} {
		_, body := p.get(c.client, page)
		if got := text(doc(body), `[data-testid=queue-reason]`); got != c.want {
			t.Errorf("queue reason on the page: %q, want %q", got, c.want)
		}
		if got := text(doc(body), `[data-testid=queue-order]`); !strings.Contains(got, c.order) {
			t.Errorf("the queue's order on the page: %q, want it to say %q", got, c.order)
		}
	}
	// Another user reads the queue without lin's limits and holdings, and
	// without "your" (it showed lin's quota, addressed to the reader).
	other := tokenFor(t, p, "ora", models.RoleUser)
	code, q := p.api("GET", "/api/v1/queue", other, "")
	items, _ := q["items"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("the queue as another user: %d %v", code, q)
	}
	if got := items[0].(map[string]any)["queue_reason"]; got != "waiting for its owner's other workbenches to stop (a quota limit)" {
		t.Errorf("another user reads lin's queue reason as %q", got)
	}
}
