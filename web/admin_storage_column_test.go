package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// An administrator sees each user's home storage against their limit on
// the users list and the quota console, and who is over it, marked: ada
// holds 1.5 GiB over a 1 GiB default, bob 0.5 GiB under it, a user with
// no home reads "—"; bob's own 5 GiB limit (the console's) is the one
// shown for him. Within the pages' search, in the admin API and in
// Chinese too.
func TestAdminSeesHomeStorageAndWhoIsOver(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	s := p.srv.Store
	ids := map[string]int64{}
	for _, name := range []string{"ada", "bob", "cyd"} {
		u, _, err := s.OIDCSignIn(ctx, models.OIDCIdentity{Issuer: "https://idp.test", Subject: name, Username: name})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = u.ID
	}
	one, five := int64(1), int64(5)
	if err := s.SetQuota(ctx, models.ScopeDefault, 0, models.Limits{MaxStorageGiB: &one}, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetQuota(ctx, models.ScopeUser, ids["bob"], models.Limits{MaxStorageGiB: &five}, "admin"); err != nil {
		t.Fatal(err)
	}
	// As the metering pass records the home volumes it measures.
	now := time.Now()
	for name, milli := range map[string]int64{"ada": 1500, "bob": 500} {
		if err := s.RecordVolume(ctx, ids[name], "wb-home-test-"+name, milli, now, time.Time{}, 97); err != nil {
			t.Fatal(err)
		}
	}
	c, admin := mpAdmin(t, p)
	text := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

	users := func(path string) *goquery.Document {
		t.Helper()
		_, body := p.get(c, path)
		return mpDoc(t, body)
	}
	doc := users("/admin/users")
	for name, want := range map[string]string{"ada": "1.50 GiB of 1 GiB over storage limit", "bob": "0.50 GiB of 5 GiB", "cyd": "—"} {
		cell := doc.Find(`[data-testid=user-row][data-username=` + name + `] [data-testid=user-storage]`)
		if got := text(cell); got != want {
			t.Errorf("users list, %s's storage: %q, want %q", name, got, want)
		}
		if over := cell.Find(`[data-testid=user-storage-over]`).Length() == 1; over != (name == "ada") {
			t.Errorf("users list, %s marked over: %v", name, over)
		}
	}
	if got := text(users("/admin/users?q=ad").Find(`[data-testid=user-row][data-username=ada] [data-testid=user-storage]`)); got != "1.50 GiB of 1 GiB over storage limit" {
		t.Errorf("users list searched for ada: %q", got)
	}

	doc = users("/admin/quotas")
	for name, want := range map[string][2]string{"ada": {"1500", "1000"}, "cyd": {"0", "1000"}} {
		row := doc.Find(`[data-testid=quota-row][data-scope=user][data-name=` + name + `]`)
		bar := row.Find(`[data-testid=quota-bar-storage]`)
		if bar.AttrOr("data-used", "") != want[0] || bar.AttrOr("data-limit", "") != want[1] {
			t.Errorf("console, %s's storage bar: used %q limit %q, want %q of %q", name, bar.AttrOr("data-used", ""), bar.AttrOr("data-limit", ""), want[0], want[1])
		}
		if over := row.Find(`[data-testid=quota-storage-over]`).Length() == 1; over != (name == "ada") {
			t.Errorf("console, %s marked over: %v", name, over)
		}
	}
	if got := text(doc.Find(`[data-testid=quota-row][data-name=ada] [data-testid=quota-bar-storage] [data-testid=quota-figures]`)); got != "1.50 / 1.00" {
		t.Errorf("console, ada's storage figures %q", got)
	}
	doc = users("/admin/quotas?q=bob")
	if bar := doc.Find(`[data-testid=quota-row][data-name=bob] [data-testid=quota-bar-storage]`); bar.AttrOr("data-used", "") != "500" || bar.AttrOr("data-limit", "") != "5000" ||
		doc.Find(`[data-testid=quota-storage-over]`).Length() != 0 {
		t.Errorf("console, bob: used %q limit %q, over marks %d", bar.AttrOr("data-used", ""), bar.AttrOr("data-limit", ""), doc.Find(`[data-testid=quota-storage-over]`).Length())
	}

	// The admin API's users carry the same, a page at a time.
	_, list := p.api("GET", "/api/v1/admin/users?limit=100", admin, "")
	got := map[string]string{}
	for _, it := range list["items"].([]any) {
		u := it.(map[string]any)
		st, _ := u["storage"].(map[string]any)
		got[u["username"].(string)] = fmt.Sprint(st["used_milli_gib"], " ", st["max_storage_gib"], " ", st["over"])
	}
	for name, want := range map[string]string{"ada": "1500 1 true", "bob": "500 5 false", "cyd": "0 1 false"} {
		if got[name] != want {
			t.Errorf("API, %s's storage: %q, want %q", name, got[name], want)
		}
	}
	if code, one := p.api("PUT", "/api/v1/admin/users/"+fmt.Sprint(ids["ada"])+"/disabled", admin, `{"disabled":false}`); code != 200 ||
		fmt.Sprint(one["storage"]) != "map[max_storage_gib:1 over:true used_milli_gib:1500]" {
		t.Errorf("API answer of ada: %d %v", code, one["storage"])
	}

	p.postForm(c, "/language", url.Values{"lang": {"zh-CN"}, "back": {"/"}})
	if got := text(users("/admin/users").Find(`[data-testid=user-row][data-username=ada] [data-testid=user-storage]`)); got != "1.50 GiB / 1 GiB 超出存储上限" {
		t.Errorf("users list in Chinese, ada: %q", got)
	}
	if got := text(users("/admin/quotas?q=ada").Find(`[data-testid=quota-storage-over]`)); got != "超出存储上限" {
		t.Errorf("console in Chinese, ada's mark: %q", got)
	}
}
