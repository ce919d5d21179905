package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, JavaScript on and off: ada's home (1.5 GiB) is over the
// default 1 GiB limit, and the admin sees her marked on the users list and
// the quota console; the admin gives her 2 GiB in her console row and
// clicks Save; the mark is gone from both pages, which read her new limit.
func TestBrowserAdminClearsAStorageOverMark(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			ctx := context.Background()
			s := p.srv.Store
			ada, _, err := s.OIDCSignIn(ctx, models.OIDCIdentity{Issuer: "https://idp.test", Subject: "ada", Username: "ada"})
			if err != nil {
				t.Fatal(err)
			}
			one := int64(1)
			if err := s.SetQuota(ctx, models.ScopeDefault, 0, models.Limits{MaxStorageGiB: &one}, "admin"); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordVolume(ctx, ada.ID, "wb-home-test-ada", 1500, time.Now(), time.Time{}, 97); err != nil {
				t.Fatal(err)
			}
			const user = `[data-testid=user-row][data-username=ada] [data-testid=user-storage]`
			const row = `[data-testid=quota-row][data-scope=user][data-name=ada]`
			const field = row + ` input[name=max_storage_gib]`

			btNavigate(t, b, p.ts.URL+"/admin/users")
			btDo(t, b, "wait for ada's storage", chromedp.WaitVisible(chromedp.CSS(user)))
			if got := strings.Join(strings.Fields(btText(t, b, user)), " "); got != "1.50 GiB of 1 GiB over storage limit" || !btVisible(t, b, user+` [data-testid=user-storage-over]`) {
				t.Errorf("users list, ada: %q", got)
			}
			btScreenshot(t, b, "admin-users-storage-"+jsName(js)+".png")
			btNavigate(t, b, p.ts.URL+"/admin/quotas")
			btDo(t, b, "wait for ada's row", chromedp.WaitVisible(chromedp.CSS(field)))
			if !btVisible(t, b, row+` [data-testid=quota-storage-over]`) {
				t.Error("console: ada is not marked over")
			}
			btScreenshot(t, b, "admin-storage-over-"+jsName(js)+".png")
			btDo(t, b, "type 2 GiB", chromedp.Clear(chromedp.CSS(field)), chromedp.SendKeys(chromedp.CSS(field), "2"))
			resp := btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(row+` [data-testid=quota-save]`)))
			btConfirmSudo(t, b, resp, btAdminPassword)
			if q, _, err := s.Quota(ctx, models.ScopeUser, ada.ID); err != nil || q.MaxStorageGiB == nil || *q.MaxStorageGiB != 2 {
				t.Fatalf("after Save ada's storage limit is %+v (%v), want 2", q.MaxStorageGiB, err)
			}
			btDo(t, b, "wait for the console again", chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=quota-bar-storage]`)))
			if n := len(btTexts(t, b, row+` [data-testid=quota-storage-over]`)); n != 0 {
				t.Errorf("console after Save: ada still marked over (%d)", n)
			}
			if lim, _ := chromedp.Run(b, chromedp.AttributeValue(chromedp.CSS(row+` [data-testid=quota-bar-storage]`), "data-limit")); lim.Value != "2000" {
				t.Errorf("console after Save: ada's storage bar limit %q, want 2000", lim.Value)
			}
			btNavigate(t, b, p.ts.URL+"/admin/users")
			btDo(t, b, "wait for ada's storage", chromedp.WaitVisible(chromedp.CSS(user)))
			if got := strings.Join(strings.Fields(btText(t, b, user)), " "); got != "1.50 GiB of 2 GiB" {
				t.Errorf("users list after Save, ada: %q", got)
			}
		})
	}
}
