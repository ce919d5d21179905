package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// The storage limit goes through the quota console's form and the API:
// saved, shown back, refused when negative; the user sees it on /usage
// ("storage used X of Y GiB"), in /me, and, once over, in the banner where
// they work.
func TestStorageQuotaConsoleAPIAndUsage(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin, adminTok := mpAdmin(t, p)
	adaTok := tokenFor(t, p, "ada", "user")
	ada, err := p.srv.Store.UserByUsername(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}

	form := mpQuotaForm("", "")
	form.Set("max_storage_gib", "-3")
	if code, _, body := mpPost(t, p, admin, "/admin/quotas/users/ada", form); code != http.StatusBadRequest ||
		mpDoc(t, body).Find(`[data-testid=quota-row][data-name=ada] [data-testid=error-max_storage_gib]`).Length() != 1 {
		t.Fatalf("a storage limit of -3 through the form: %d, want 400 with the field's error", code)
	}
	form.Set("max_storage_gib", "20")
	if code, loc, _ := mpPost(t, p, admin, "/admin/quotas/users/ada", form); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/quotas") {
		t.Fatalf("save: %d → %q", code, loc)
	}
	if own, _, err := p.srv.Store.Quota(ctx, models.ScopeUser, ada.ID); err != nil || own.MaxStorageGiB == nil || *own.MaxStorageGiB != 20 {
		t.Fatalf("stored after the form: %+v (%v), want max_storage_gib 20", own, err)
	}
	_, body := p.get(admin, "/admin/quotas?q=ada")
	if v := mpDoc(t, body).Find(`[data-testid=quota-row][data-name=ada] input[name=max_storage_gib]`).AttrOr("value", ""); v != "20" {
		t.Errorf("the console shows ada's storage limit as %q, want 20", v)
	}

	// The API: a group's value, read back, and the user's effective one.
	if code, out := p.api("POST", "/api/v1/admin/groups", adminTok, `{"name":"vision"}`); code != http.StatusCreated {
		t.Fatalf("create group: %d %v", code, out)
	}
	if g, err := p.srv.Store.GroupByName(ctx, "vision"); err != nil {
		t.Fatal(err)
	} else if err := p.srv.Store.AddGroupMember(ctx, g.ID, ada.ID); err != nil {
		t.Fatal(err)
	}
	if code, out := p.api("PUT", "/api/v1/admin/quotas/groups/vision", adminTok, `{"max_storage_gib":-1}`); code != http.StatusBadRequest || errCode(out) != "invalid_max_storage_gib" {
		t.Fatalf("PUT -1: %d %v, want 400 invalid_max_storage_gib", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/quotas/groups/vision", adminTok, `{"max_storage_gib":500}`); code != http.StatusOK || mpNum(t, out, "max_storage_gib") != float64(500) {
		t.Fatalf("PUT 500: %d %v", code, out)
	}
	if code, out := p.api("GET", "/api/v1/admin/quotas/groups/vision", adminTok, ""); code != http.StatusOK || mpNum(t, out, "max_storage_gib") != float64(500) {
		t.Fatalf("GET the group: %d %v, want max_storage_gib 500", code, out)
	}
	_, out := p.api("GET", "/api/v1/admin/quotas/users/ada", adminTok, "")
	if eff, _ := out["effective"].(map[string]any); eff["max_storage_gib"] != float64(20) {
		t.Fatalf("ada's effective quota %v: her own 20 GiB should win over the group's 500", out["effective"])
	}

	// 25 GiB measured of her 20: /usage, /me and the banner say so.
	if err := p.srv.Store.RecordVolume(ctx, ada.ID, "wb-home-x-ada", 25_000, time.Now(), time.Time{}, 97); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "ada", "ada-password")
	_, page := p.get(c, "/usage")
	bar := mpDoc(t, page).Find(`[data-testid=quota-bar-storage]`)
	if bar.AttrOr("data-used", "") != "25000" || bar.AttrOr("data-limit", "") != "20000" ||
		!strings.Contains(bar.Find(`[data-testid=quota-figures]`).Text(), "25.00 / 20.00") || bar.Find(`[data-testid=quota-note]`).Length() != 1 {
		t.Errorf("the storage bar on /usage: used %q limit %q figures %q", bar.AttrOr("data-used", ""), bar.AttrOr("data-limit", ""), bar.Find(`[data-testid=quota-figures]`).Text())
	}
	_, me := p.api("GET", "/api/v1/me", adaTok, "")
	usage, _ := me["usage"].(map[string]any)
	if usage["storage_used_milli_gib"] != float64(25_000) || usage["storage_over"] != true || mpNum(t, me, "max_storage_gib") != float64(20) {
		t.Errorf("/me: quota %v usage %v", me["quota"], usage)
	}
	_, page = p.get(c, "/")
	if banner := mpDoc(t, page).Find(`[data-testid=budget-banner]`).Text(); !strings.Contains(banner, "holds 25.00 GiB, more than your quota of 20 GiB") {
		t.Errorf("the banner where ada works: %q", banner)
	}
}

// Over the storage quota, the API refuses a launch with 422
// quota_exceeded, as every quota refusal.
func TestStorageQuotaRefusesAPILaunch(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	adminTok := tokenFor(t, p, "admin", "admin")
	bobTok := tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/bob", adminTok, `{"max_storage_gib":1}`); code != http.StatusOK {
		t.Fatalf("PUT: %d %v", code, out)
	}
	if err := p.srv.Store.RecordVolume(ctx, bob.ID, "wb-home-x-bob", 1_500, time.Now(), time.Time{}, 97); err != nil {
		t.Fatal(err)
	}
	code, out := p.api("POST", "/api/v1/workbenches", bobTok, `{"name":"big","image":"fake","flavor":"CPU small"}`)
	if code != http.StatusUnprocessableEntity || errCode(out) != "quota_exceeded" {
		t.Fatalf("a launch over the storage quota: %d %v, want 422 quota_exceeded", code, out)
	}
	p.srv.Manager.Wait()
}
