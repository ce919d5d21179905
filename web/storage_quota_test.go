package web_test

import (
	"context"
	"net/http"
	"net/url"
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

// Over the storage quota, the API refuses a launch with GPUs with 422
// quota_exceeded, as every quota refusal, naming the limit and the way
// out (a flavor without GPU to launch); that launch goes.
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
	code, out := p.api("POST", "/api/v1/workbenches", bobTok, `{"name":"big","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	e, _ := out["error"].(map[string]any)
	if code != http.StatusUnprocessableEntity || errCode(out) != "quota_exceeded" || e["limit"] != "max_storage_gib" ||
		e["way_out"] != "launch_without_gpu" || e["cpu_flavor"] != "CPU small" {
		t.Fatalf("a launch with GPUs over the storage quota: %d %v, want 422 quota_exceeded, limit max_storage_gib, way out launch_without_gpu CPU small", code, out)
	}
	if code, out := p.api("POST", "/api/v1/workbenches", bobTok, `{"name":"cleanup","image":"fake","flavor":"CPU small"}`); code != http.StatusAccepted {
		t.Fatalf("a launch without GPU over the storage quota: %d %v, want 202", code, out)
	}
	p.srv.Manager.Wait()
}

// Over the storage quota, bob's stopped GPU workbench (its flavor has a
// CPU-only twin) cannot start with GPUs: the API's 422 names the way out
// (way_out start_without_gpu, cpu_flavor), the page's flash and notice say
// "start without GPU"; started without GPU it runs, and its page notes
// the home over its limit, usage against limit, once (not in the banner
// too).
func TestStorageOverStartWithoutGPUPageAndAPI(t *testing.T) {
	p, id, bobTok := storageOverStoppedGPUWorkbench(t)

	code, out := p.api("POST", "/api/v1/workbenches/"+id+"/start", bobTok, "")
	e, _ := out["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if code != http.StatusUnprocessableEntity || errCode(out) != "quota_exceeded" || e["limit"] != "max_storage_gib" ||
		e["way_out"] != "start_without_gpu" || e["cpu_flavor"] != "CPU small" ||
		!strings.Contains(msg, "1.50 GiB, 0.50 GiB over your limit of 1 GiB") || !strings.Contains(msg, "mode=cpu") {
		t.Fatalf("a start with GPUs over the storage quota: %d %v, want 422 quota_exceeded naming start_without_gpu", code, out)
	}

	c := p.client()
	p.login(c, "bob", "bob-password")
	if res := p.postForm(c, "/workbenches/"+id+"/start", url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the page's Start: %d, want 303 back to the page", res.StatusCode)
	}
	_, page := p.get(c, "/workbenches/"+id)
	doc := mpDoc(t, page)
	if flash := doc.Find(`[data-testid=flash][data-kind=error]`).Text(); !strings.Contains(flash, "Could not start") ||
		!strings.Contains(flash, "0.50 GiB over your limit of 1 GiB") || !strings.Contains(flash, "start this one without GPU") {
		t.Errorf("the flash after Start reads %q, want the storage reason and the way out", flash)
	}
	if note := doc.Find(`[data-testid=storage-over]`).Text(); !strings.Contains(note, "1.50 GiB of your 1 GiB (0.50 GiB over)") || !strings.Contains(note, "Start without GPU") {
		t.Errorf("the stopped workbench's storage notice reads %q", note)
	}

	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/start?mode=cpu", bobTok, ""); code != http.StatusOK {
		t.Fatalf("a start without GPU over the storage quota: %d %v, want 200", code, out)
	}
	if got := waitState(t, p, bobTok, id, "running"); got["cpu_only"] != true {
		t.Fatalf("started without GPU: %v", got)
	}
	_, page = p.get(c, "/workbenches/"+id)
	doc = mpDoc(t, page)
	note := doc.Find(`[data-testid=storage-over]`)
	if note.AttrOr("data-used", "") != "1500" || note.AttrOr("data-limit", "") != "1000" ||
		!strings.Contains(note.Text(), "1.50 GiB of your 1 GiB (0.50 GiB over)") || !strings.Contains(note.Text(), "Delete files here") {
		t.Errorf("the running CPU-only workbench's storage notice: used %q limit %q text %q", note.AttrOr("data-used", ""), note.AttrOr("data-limit", ""), note.Text())
	}
	if banner := doc.Find(`[data-testid=budget-banner]`).Text(); strings.Contains(banner, "home storage") {
		t.Errorf("the banner repeats the storage notice: %q", banner)
	}
	// Elsewhere the banner says it, and the way out.
	_, page = p.get(c, "/")
	if banner := mpDoc(t, page).Find(`[data-testid=budget-banner]`).Text(); !strings.Contains(banner, "Start a workbench without GPU to delete files") {
		t.Errorf("the banner on the list reads %q", banner)
	}
	if code, _ := p.api("POST", "/api/v1/workbenches/"+id+"/stop", bobTok, ""); code != http.StatusOK {
		t.Fatalf("stop: %d", code)
	}
	waitState(t, p, bobTok, id, "stopped")
}

// storageOverStoppedGPUWorkbench is bob's stopped "data" workbench on the
// real engine, of a GPU flavor whose CPU-only twin is "CPU small", with his
// home storage 1.5 GiB against a limit of 1 GiB: the portal, the
// workbench's id and bob's token.
func storageOverStoppedGPUWorkbench(t *testing.T) (*testPortal, string, string) {
	t.Helper()
	p, _ := enginePortal(t)
	ctx := context.Background()
	adminTok := tokenFor(t, p, "admin", "admin")
	bobTok := tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	twin, err := p.srv.Store.FlavorByNameOrID(ctx, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	fl.CPUTwinID = twin.ID
	if err := p.srv.Store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	code, wb := p.api("POST", "/api/v1/workbenches", bobTok, `{"name":"data","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, bobTok, id, "running")
	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/stop", bobTok, ""); code != http.StatusOK {
		t.Fatalf("stop: %d %v", code, out)
	}
	waitState(t, p, bobTok, id, "stopped")
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/bob", adminTok, `{"max_storage_gib":1}`); code != http.StatusOK {
		t.Fatalf("PUT quota: %d %v", code, out)
	}
	if err := p.srv.Store.RecordVolume(ctx, bob.ID, "wb-home-x-bob", 1_500, time.Now(), time.Time{}, 97); err != nil {
		t.Fatal(err)
	}
	return p, id, bobTok
}
