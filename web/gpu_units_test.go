package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/web"
)

// TestSharedGPUSlicesEndToEnd: an admin shares a GPU in 2 slices (form:
// sudo first; API), makes a slice flavor; the launch form, the catalog, the
// workbench page, the list and the API all say "shared — no memory
// isolation"; the pool page and API list the slices and their holders; a
// GPU with a slice held cannot be unshared; the 3rd launch is refused
// without queue and waits with it.
func TestSharedGPUSlicesEndToEnd(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "root", "admin")
	userToken := tokenFor(t, p, "alice", "user")
	code, body := p.api("GET", "/api/v1/gpus", admin, "")
	items, _ := body["items"].([]any)
	if code != 200 || len(items) != 8 {
		t.Fatalf("gpus: %d %v", code, body)
	}
	g3, _ := items[3].(map[string]any)
	uuid, _ := g3["uuid"].(string)
	model, _ := g3["model"].(string)

	// The form needs sudo: without it the share is refused, nothing changes.
	ac := p.client()
	p.login(ac, "root", "root-password")
	if res := p.postForm(ac, "/admin/gpus/"+uuid+"/share", url.Values{"slices": {"2"}}); res.StatusCode == http.StatusSeeOther && res.Header.Get("Location") == "/gpus" {
		t.Fatal("share without sudo went through")
	}
	if states, _ := p.srv.Store.GPUStates(ctx); states[uuid].SharedSlices != 0 {
		t.Fatalf("GPU shared without sudo: %+v", states[uuid])
	}
	p.sudo(ac, "root-password")
	if res, page := p.postFormBody(ac, "/admin/gpus/"+uuid+"/share", url.Values{"slices": {"two"}}); res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "whole number") {
		t.Fatalf("bad slices: %d", res.StatusCode)
	}
	if res := p.postForm(ac, "/admin/gpus/"+uuid+"/share", url.Values{"slices": {"2"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("share form: %d", res.StatusCode)
	}
	// The API: users may not; admins may (here: the same setting plus an MPS cap).
	if code, _ := p.api("PUT", "/api/v1/gpus/"+uuid+"/shared", userToken, `{"slices": 2}`); code != http.StatusForbidden {
		t.Fatalf("a user shared a GPU: %d", code)
	}
	if code, body := p.api("PUT", "/api/v1/gpus/"+uuid+"/shared", admin, `{"slices": 2, "mps_memory_mib": 40960}`); code != 200 {
		t.Fatalf("API share: %d %v", code, body)
	}
	if code, body := p.api("PUT", "/api/v1/gpus/"+uuid+"/shared", admin, `{"slices": -1}`); code != 400 || errCode(body) != "invalid_slices" {
		t.Fatalf("negative slices: %d %v", code, body)
	}
	audit, err := p.srv.Store.ListAudit(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	shares := 0
	for _, a := range audit {
		if a.Action == "gpu.share" && a.Target == uuid {
			shares++
		}
	}
	if shares != 2 {
		t.Fatalf("%d gpu.share audit entries, want 2", shares)
	}
	code, body = p.api("POST", "/api/v1/flavors", admin, fmt.Sprintf(`{"name": "h100-slice", "gpu_model": %q, "gpu_count": 1, "unit_kind": "slice", "cpu_cores": 1, "memory_gib": 1}`, model))
	if code != 201 || body["shared"] != true || body["unit_kind"] != "slice" {
		t.Fatalf("slice flavor: %d %v", code, body)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "h100-slice")
	if err != nil {
		t.Fatal(err)
	}

	// The launch form labels the flavor shared.
	uc := p.client()
	p.login(uc, "alice", "alice-password")
	_, page := p.get(uc, "/workbenches/new")
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	choice := doc.Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return s.Find(`input[value="h100-slice"]`).Length() == 1
	})
	if badge := choice.Find(`[data-testid=shared-badge]`).Text(); badge != "shared — no memory isolation" {
		t.Logf("DEBUG page: %s", page)
		t.Fatalf("launch form's slice flavor badge %q", badge)
	}
	if free := choice.Find(`[data-testid=free-gpus]`).Text(); free != "2 free" {
		t.Fatalf("free slices on the form %q", free)
	}

	// Two workbenches hold the two slices (bound as a launch binds them).
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	imgs, _ := p.srv.Store.ListImages(ctx, true)
	var ids []string
	for i := 0; i < 2; i++ {
		wb := &models.Workbench{Name: fmt.Sprintf("s%d", i), OwnerID: alice.ID, ImageID: imgs[0].ID, FlavorID: fl.ID, Token: "t"}
		need := models.GPUNeed{Kind: models.UnitSlice, Model: model, Count: 1, Candidates: []string{uuid}}
		if err := p.srv.Store.CreateWorkbench(ctx, wb, need, nil); err != nil {
			t.Fatalf("slice %d: %v", i, err)
		}
		ids = append(ids, wb.ID)
	}
	code, body = p.api("GET", "/api/v1/workbenches/"+ids[1], userToken, "")
	units, _ := body["units"].([]any)
	u0, _ := units[0].(map[string]any)
	if code != 200 || body["shared"] != true || body["shared_note"] != "shared — no memory isolation" || len(units) != 1 ||
		u0["kind"] != "slice" || u0["uuid"] != uuid || u0["slice"] != float64(1) {
		t.Fatalf("workbench API: %d %v", code, body)
	}
	// SPEC fixes a unit's fields as {kind, uuid, profile}: profile is
	// there, empty, for a unit that is no MIG instance.
	if profile, ok := u0["profile"]; !ok || profile != "" {
		t.Errorf("a slice unit's profile: %v (present %v), want \"\"", profile, ok)
	}
	if gpus, _ := body["gpus"].([]any); len(gpus) != 1 || gpus[0] != uuid {
		t.Fatalf("gpus of a slice workbench %v, want the shared GPU", body["gpus"])
	}
	_, page = p.get(uc, "/workbenches/"+ids[0])
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(page))
	if doc.Find(`[data-testid=wb-status] [data-testid=shared-badge]`).Text() != "shared — no memory isolation" ||
		doc.Find(`[data-testid=wb-unit][data-kind=slice]`).Length() != 1 {
		t.Fatalf("workbench page lacks the shared label or its slice")
	}
	_, page = p.get(uc, "/")
	if !strings.Contains(page, "shared — no memory isolation") {
		t.Fatal("workbench list lacks the shared label")
	}

	// The pool shows both slices held, by whom.
	_, page = p.get(ac, "/gpus")
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(page))
	row := doc.Find(`[data-testid=gpu-row][data-uuid="` + uuid + `"]`)
	if st, _ := row.Find(`[data-testid=gpu-state]`).Attr("data-state"); st != "shared" {
		t.Fatalf("shared GPU state %q", st)
	}
	holders := row.Find(`[data-testid=gpu-unit][data-kind=slice] [data-testid=gpu-unit-holder]`)
	if holders.Length() != 2 || !strings.Contains(holders.Eq(0).Text(), "s0 · alice") {
		t.Fatalf("slice holders %d %q", holders.Length(), holders.Text())
	}
	code, body = p.api("GET", "/api/v1/gpus", userToken, "")
	items, _ = body["items"].([]any)
	g3, _ = items[3].(map[string]any)
	if pu, _ := g3["units"].([]any); code != 200 || g3["state"] != "shared" || g3["shared_slices"] != float64(2) || len(pu) != 2 ||
		g3["mps_memory_mib"] != float64(40960) {
		t.Fatalf("pool API of the shared GPU: %v", g3)
	}
	// Alice, the holder, sees her workbenches on the slices; another user
	// sees them held, by nobody named (it listed everyone's workbench ids).
	holderIDs := func(token string) []string {
		_, body := p.api("GET", "/api/v1/gpus", token, "")
		g, _ := body["items"].([]any)[3].(map[string]any)
		var ids []string
		for _, u := range g["units"].([]any) {
			ids = append(ids, u.(map[string]any)["workbench_id"].(string))
		}
		return ids
	}
	if got := holderIDs(userToken); len(got) != 2 || got[0] != ids[0] || got[1] != ids[1] {
		t.Errorf("alice's slices as she reads them: %v, want %v", got, ids)
	}
	if got := holderIDs(tokenFor(t, p, "bob", "user")); len(got) != 2 || got[0] != "" || got[1] != "" {
		t.Errorf("alice's slices as bob reads them: %v, want both held by nobody named", got)
	}
	if got := holderIDs(admin); len(got) != 2 || got[0] != ids[0] {
		t.Errorf("alice's slices as the admin reads them: %v, want %v", got, ids)
	}

	// Held slices cannot vanish under their workbenches.
	if code, body := p.api("PUT", "/api/v1/gpus/"+uuid+"/shared", admin, `{"slices": 0}`); code != http.StatusConflict || !strings.Contains(fmt.Sprint(body), "held by workbench") {
		t.Fatalf("unshare with slices held: %d %v", code, body)
	}
	// The 3rd launch finds no slice: refused without queue; with queue it
	// waits for a slice, with its position and why.
	code, body = p.api("POST", "/api/v1/workbenches", userToken, `{"name": "s2", "image": "`+imgs[0].Name+`", "flavor": "h100-slice"}`)
	switch {
	case code == http.StatusServiceUnavailable:
		t.Log("no Docker engine: the 3rd slice is covered by TestSharedSliceLaunches and TestSliceQueueWaitsThenStarts in orchestrator")
		return
	case code != http.StatusConflict || errCode(body) != "no_capacity":
		t.Fatalf("3rd slice launch: %d %v", code, body)
	}
	code, body = p.api("POST", "/api/v1/workbenches", userToken, `{"name": "s2", "image": "`+imgs[0].Name+`", "flavor": "h100-slice", "queue": true}`)
	if code != http.StatusAccepted || body["state"] != "queued" || body["queue_position"] != 1.0 || len(body["gpus"].([]any)) != 0 {
		t.Fatalf("3rd slice launch with queue: %d %v", code, body)
	}
	if r, _ := body["queue_reason"].(string); !strings.HasPrefix(r, "1 × slice of a shared H100 80GB HBM3 needed; 0 free") {
		t.Fatalf("queue_reason %q", r)
	}
}

// TestMockMIGDemo: with WORKBENCH_MOCK_MIG the simulated GPU 7 comes up as
// MIG instances, listed in the pool API with their UUIDs and profile, each
// discovered profile gets a default rate and a one-instance flavor, and the
// launch form offers it with the instances free.
func TestMockMIGDemo(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MockMIG = "7:1g.10gb*2" })
	ctx := context.Background()
	user := tokenFor(t, p, "alice", "user")
	code, body := p.api("GET", "/api/v1/gpus", user, "")
	items, _ := body["items"].([]any)
	if code != 200 || len(items) != 8 {
		t.Fatalf("gpus: %d %v", code, body)
	}
	g7, _ := items[7].(map[string]any)
	units, _ := g7["units"].([]any)
	if g7["state"] != "mig" || g7["mig_enabled"] != true || len(units) != 2 {
		t.Fatalf("GPU 7: %v", g7)
	}
	u0, _ := units[0].(map[string]any)
	if u0["kind"] != "mig" || u0["profile"] != "1g.10gb" || !strings.HasPrefix(fmt.Sprint(u0["uuid"]), "MIG-") || u0["workbench_id"] != "" {
		t.Fatalf("GPU 7 unit %v", u0)
	}
	const name = "1x MIG 1g.10gb (H100 80GB HBM3)"
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, name)
	if err != nil || fl.UnitKind != models.UnitMIG || fl.MIGProfile != "1g.10gb" {
		t.Fatalf("seeded MIG flavor %+v (%v)", fl, err)
	}
	cur, _ := p.srv.Store.CurrentPrices(ctx, time.Now())
	if r := cur[models.PriceKey(models.UnitMIG, "1g.10gb")]; r.Micros != 3_000_000/7 || !r.IsDefault {
		t.Fatalf("seeded MIG rate %+v", r)
	}
	// An 8-GPU flavor made before GPU 7 was split (none is seeded now).
	if err := p.srv.Store.CreateFlavor(ctx, &models.Flavor{Name: "8x H100 80GB HBM3", GPUModel: "NVIDIA H100 80GB HBM3",
		GPUCount: 8, CPUMilli: 1000, MemoryMiB: 8192, ShmMiB: 64, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	uc := p.client()
	p.login(uc, "alice", "alice-password")
	_, page := p.get(uc, "/workbenches/new")
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	choice := doc.Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return s.Find(`input[value="`+name+`"]`).Length() == 1
	})
	if free := choice.Find(`[data-testid=free-gpus]`).Text(); free != "2 free" || !strings.Contains(choice.Text(), "1 × MIG 1g.10gb") {
		t.Fatalf("launch form's MIG flavor: free %q, text %q", free, choice.Text())
	}
	// Whole-GPU flavors see 7 GPUs: the MIG GPU is not one of them, and
	// the reason says so rather than that the server has 7.
	if !strings.Contains(page, "needs 8 GPUs; 7 of this server&#39;s 8 can be handed out whole (the rest are split into MIG instances)") {
		t.Fatal("the 8-GPU flavor should be unavailable with 7 whole GPUs in the pool")
	}

	// MIG flavors are measured in instances, not whole GPUs: three
	// instances of a GPU split into two can never start (it used to
	// "wait in the queue" because the pool has 7 whole GPUs), two can
	// wait while one of them is held.
	for _, f := range []string{`{"name": "3x MIG", "gpu_model": "NVIDIA H100 80GB HBM3", "gpu_count": 3, "unit_kind": "mig", "mig_profile": "1g.10gb", "cpu_cores": 1, "memory_gib": 1}`,
		`{"name": "2x MIG", "gpu_model": "NVIDIA H100 80GB HBM3", "gpu_count": 2, "unit_kind": "mig", "mig_profile": "1g.10gb", "cpu_cores": 1, "memory_gib": 1}`} {
		if code, body := p.api("POST", "/api/v1/flavors", tokenFor(t, p, "admin", "admin"), f); code != 201 {
			t.Fatalf("flavor %s: %d %v", f, code, body)
		}
	}
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	imgs, _ := p.srv.Store.ListImages(ctx, true)
	held := &models.Workbench{Name: "held", OwnerID: alice.ID, ImageID: imgs[0].ID, FlavorID: fl.ID, Token: "t"}
	mig0 := fmt.Sprint(u0["uuid"])
	need := models.GPUNeed{Kind: models.UnitMIG, Model: fl.GPUModel, Profile: "1g.10gb", Count: 1,
		Candidates: []string{mig0}, Parents: map[string]string{mig0: fmt.Sprint(g7["uuid"])}}
	if err := p.srv.Store.CreateWorkbench(ctx, held, need, nil); err != nil {
		t.Fatalf("hold one instance: %v", err)
	}
	_, page = p.get(uc, "/workbenches/new")
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(page))
	pick := func(name string) *goquery.Selection {
		return doc.Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.Find(`input[value="`+name+`"]`).Length() == 1
		})
	}
	three, two := pick("3x MIG"), pick("2x MIG")
	if _, dis := three.Find(`input`).Attr("disabled"); !dis || strings.TrimSpace(three.Find(`[data-testid=flavor-unavailable]`).Text()) != "needs 3 MIG instances; this server has 2" {
		t.Errorf("3x MIG on a pool of 2 instances: disabled=%v, reason %q", dis, three.Find(`[data-testid=flavor-unavailable]`).Text())
	}
	if _, dis := two.Find(`input`).Attr("disabled"); dis || !strings.Contains(two.Text(), "needs 2 MIG instances, 1 free: it waits in the queue") {
		t.Errorf("2x MIG with 1 of 2 instances free: disabled=%v, text %q", dis, strings.Join(strings.Fields(two.Text()), " "))
	}
}

// TestDrainedMIGGPUSaysSo: with the split GPU drained, the GPU page reads
// "Drained (not offered)" for it (it read "MIG: 2 of 2 instances free"),
// and the launch form's MIG flavor says its instances are on a drained GPU
// (it read "needs 1 MIG instance; this server has 0").
func TestDrainedMIGGPUSaysSo(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MockMIG = "7:1g.10gb*2" })
	admin := tokenFor(t, p, "admin", "admin")
	_, body := p.api("GET", "/api/v1/gpus", admin, "")
	g7, _ := body["items"].([]any)[7].(map[string]any)
	if code, out := p.api("PUT", "/api/v1/gpus/"+fmt.Sprint(g7["uuid"])+"/drain", admin, `{"drained": true}`); code != 200 {
		t.Fatalf("drain GPU 7: %d %v", code, out)
	}
	uc := p.client()
	tokenFor(t, p, "alice", "user")
	p.login(uc, "alice", "alice-password")
	_, page := p.get(uc, "/gpus")
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	label := ""
	doc.Find(`[data-testid=gpu-row]`).Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Text(), "GPU 7") {
			label = strings.TrimSpace(s.Find(`[data-testid=gpu-state]`).Text())
		}
	})
	if label != "Drained (not offered)" {
		t.Errorf("the drained MIG GPU's state reads %q, want \"Drained (not offered)\"", label)
	}
	_, page = p.get(uc, "/workbenches/new")
	if want := "needs 1 MIG instance; only 0 are in service now, the others on a drained GPU or one out of order: it waits in the queue until they are back in service"; !strings.Contains(page, want) {
		t.Errorf("the launch form does not say why the MIG flavor cannot start (want %q)", want)
	}
}

// TestQueuedLaunchThatCouldNeverStartIsRefused: with one of eight GPUs
// split into MIG instances, an eight-GPU launch with "queue" is refused
// (409 no_capacity, saying it could never start), by the API and by the
// form, as the launch form's disabled card says; it used to queue and hold
// back every queued GPU launch behind it.
func TestQueuedLaunchThatCouldNeverStartIsRefused(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MockMIG = "7:1g.10gb*2" })
	// Made before GPU 7 was split: neither seeding nor the flavor form
	// makes one now.
	if err := p.srv.Store.CreateFlavor(context.Background(), &models.Flavor{Name: "8x H100 80GB HBM3", GPUModel: "NVIDIA H100 80GB HBM3",
		GPUCount: 8, CPUMilli: 1000, MemoryMiB: 8192, ShmMiB: 64, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	code, out := p.api("POST", "/api/v1/workbenches", alice, `{"name":"big","image":"PyTorch (CUDA 12)","flavor":"8x H100 80GB HBM3","queue":true}`)
	if code != http.StatusConflict || errCode(out) != "no_capacity" || !strings.Contains(fmt.Sprint(out), "could never start") {
		t.Errorf("API: %d %v, want 409 no_capacity saying it could never start", code, out)
	}
	// The count it gives is of whole GPUs, a shared one included (it can be
	// lent whole): it said shared GPUs did not count while counting them.
	if !strings.Contains(fmt.Sprint(out), "this server has 7 (GPUs split into MIG instances do not count as whole ones; shared ones do)") {
		t.Errorf("API refusal %v: the count and its words disagree", out)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	res, body := p.postFormBody(c, "/workbenches", url.Values{"name": {"big"}, "image": {"PyTorch (CUDA 12)"}, "flavor": {"8x H100 80GB HBM3"}, "queue": {"on"}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "could never start") {
		t.Errorf("form: %d, want 409 saying it could never start", res.StatusCode)
	}
	if wbs, _ := p.srv.Store.ListWorkbenches(context.Background(), 0); len(wbs) != 0 {
		t.Errorf("workbenches after the refusals: %d, want none", len(wbs))
	}
}
