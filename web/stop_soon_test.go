package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// TestStopSoonNoticeInChinese: ten minutes before a workbench's maximum
// runtime ends, the culler's pass warns its owner. A Chinese reader in
// Shanghai finds the warning in the notifications list in Chinese, the
// stop time in their language with their own time beside UTC, linking to
// the workbench page's deadlines, where "+1 h" is.
func TestStopSoonNoticeInChinese(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	fl.MaxRuntimeS = 3600
	if err := p.srv.Store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	u, err := p.srv.Store.UserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetUserTimeZone(ctx, u.ID, "Asia/Shanghai"); err != nil {
		t.Fatal(err)
	}
	id := cullLaunch(t, p, alice, "alice-train", fl.Name, 4*3600)
	waitState(t, p, alice, id, "running")
	wb, err := p.srv.Store.WorkbenchByID(ctx, id)
	if err != nil || wb.StartedAt == nil {
		t.Fatalf("running workbench %+v: %v", wb, err)
	}
	started := *wb.StartedAt
	p.srv.Manager.SetClock(func() time.Time { return started.Add(50 * time.Minute) })
	p.srv.Manager.Cull(ctx)

	zh := p.client()
	zh.Transport = acceptLanguage{"zh-CN,zh;q=0.9", http.DefaultTransport}
	p.login(zh, "alice", "alice-password")
	_, page := p.get(zh, "/notifications")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	stop := started.Add(time.Hour).UTC().Truncate(time.Minute)
	local := stop.In(time.FixedZone("UTC+8", 8*3600))
	when := stop.Format("2006年1月2日 15:04 UTC") + "（" + local.Format("15:04") + " UTC+8）"
	if local.Day() != stop.Day() {
		when = stop.Format("2006年1月2日 15:04 UTC") + "（" + local.Format("1月2日 15:04") + " UTC+8）"
	}
	want := "工作台 alice-train 将于 " + when + "停止，届时其最长运行时间（1 小时）结束。请保存你的工作，或在它的页面上延长一小时。"
	var found *goquery.Selection
	doc.Find(`[data-testid="notification"]`).Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Text(), "alice-train") {
			found = s
		}
	})
	if found == nil {
		t.Fatalf("no warning in the notifications list: %q", doc.Find(`[data-testid="notifications"]`).Text())
	}
	if text := strings.Join(strings.Fields(found.Text()), " "); !strings.Contains(text, strings.Join(strings.Fields(want), " ")) {
		t.Fatalf("the warning reads %q, want %q", text, want)
	}
	link := found.Find(`[data-testid="notification-link"]`)
	if href, _ := link.Attr("href"); href != "/workbenches/"+id+"#deadlines" || strings.TrimSpace(link.Text()) != "查看工作台" {
		t.Fatalf("the warning links %q (%q), want the workbench page's deadlines", href, link.Text())
	}
	// The link's target: the page's deadlines, with "+1 h".
	_, wbPage := p.get(zh, "/workbenches/"+id)
	wdoc, err := goquery.NewDocumentFromReader(strings.NewReader(wbPage))
	if err != nil {
		t.Fatal(err)
	}
	if wdoc.Find(`#deadlines [data-testid="extend"]`).Length() != 1 {
		t.Fatalf("the workbench page has no #deadlines with +1 h")
	}
}
