package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// fuzzEndpoints is every API endpoint that decodes a JSON body, each with a
// seed body it accepts. TestRouteListsAreComplete (route_lists_test.go)
// fails when a JSON route of the route table is missing here.
//
// Paths and seeds may name fixtures in braces, filled in by
// newFuzzFixture: {wb} (the admin's workbench), {queued} (a queued
// workbench), {img} (the admin's saved image), {gpu} (a drained GPU),
// {group_id} (a group of the admin's), {line} (a ledger line), {user}
// (another user), {from} and {to} (a future reservation window).
var fuzzEndpoints = []struct {
	method, path string
	seed         string // a body it accepts
}{
	// A user's endpoints.
	{"POST", "/api/v1/workbenches", `{"name":"fz","image":"PyTorch (CUDA 12)","flavor":"CPU small","idle_timeout_seconds":3600}`},
	{"POST", "/api/v1/sudo", `{"password":"anything: tokens need no confirmation, so none is checked"}`},
	{"POST", "/api/v1/reservations", `{"gpu_model":"NVIDIA H100 80GB HBM3","units":1,"starts_at":"{from}","ends_at":"{to}","note":"fz"}`},
	{"PUT", "/api/v1/workbenches/{wb}/ports", `{"ports":[6006,8050]}`},
	{"POST", "/api/v1/workbenches/{wb}/tokens", `{"name":"fz","expires_days":7}`},
	{"POST", "/api/v1/workbenches/{wb}/save-image", `{"name":"fz-env","running_ok":true}`},
	{"PUT", "/api/v1/images/{img}/shares", `{"groups":["fuzzers"]}`},
	{"POST", "/api/v1/tokens", `{"name":"fz","expires_days":30}`},
	{"PATCH", "/api/v1/me", `{"email_workbench_notices":false}`},
	// The admin's own password, changed to itself (adminPassword): the
	// fixture's token keeps working either way.
	{"PUT", "/api/v1/me/password", `{"current_password":"admin-password-1","new_password":"admin-password-1"}`},
	{"POST", "/api/v1/ssh-keys", `{"name":"fz","public_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJDwmmrccY+gbQ6OX+6JC/QB7/J79rHn7z1bEiTiFK7p fuzz"}`},
	{"POST", "/api/v1/gpu-watches", `{"gpu_model":"NVIDIA H100 80GB HBM3"}`},
	{"POST", "/api/v1/calculator/estimate", `{"flavor":"CPU small","duration":"total","total_hours":10}`},
	{"POST", "/api/v1/calculator/tco", `{"gpu_model":"NVIDIA H100 80GB HBM3","gpus_per_server":8}`},

	// Admin endpoints.
	{"POST", "/api/v1/images", `{"name":"Fuzz","image":"registry.example.org/a/b:1","start_command":"j --port={port} --b={base_url} --t={token}","home_path":"/home/jovyan"}`},
	{"PUT", "/api/v1/images/1", `{"name":"PyTorch (CUDA 12)","image":"registry.example.org/a/b:1","start_command":"j --port={port} --b={base_url} --t={token}","enabled":true}`},
	{"POST", "/api/v1/flavors", `{"name":"Fuzz flavor","cpu_cores":1,"memory_gib":2}`},
	{"PUT", "/api/v1/flavors/1", `{"name":"CPU small","cpu_cores":2,"memory_gib":8,"enabled":true}`},
	{"PATCH", "/api/v1/images/1", `{"enabled":false}`},
	{"PATCH", "/api/v1/flavors/1", `{"enabled":false,"max_runtime_seconds":3600}`},
	{"PUT", "/api/v1/gpus/{gpu}/drain", `{"drained":true}`},
	{"PUT", "/api/v1/gpus/{gpu}/shared", `{"slices":2,"mps_memory_mib":40960}`},
	{"POST", "/api/v1/admin/queue/{queued}/move", `{"position":1}`},
	{"PUT", "/api/v1/admin/priority-classes/urgent", `{"rank":500,"description":"deadlines"}`},
	{"PUT", "/api/v1/admin/priority-defaults/group/{group_id}", `{"class":"batch"}`},
	{"PUT", "/api/v1/admin/reservation-settings", `{"bill_unused":true}`},
	{"PUT", "/api/v1/admin/reservation-caps/user/admin", `{"unit_hours_per_week":100}`},
	{"POST", "/api/v1/admin/price-tiers", `{"tier":"preemptible","discount_percent":60}`},
	{"PUT", "/api/v1/admin/quotas/default", `{"max_gpus":8,"allowed_images":["PyTorch (CUDA 12)"]}`},
	{"PUT", "/api/v1/admin/quotas/users/admin", `{"max_workbenches":3,"max_idle_minutes":60}`},
	{"PUT", "/api/v1/admin/prices", `{"rates":[{"resource":"cpu","rate_micros":20000}]}`},
	{"POST", "/api/v1/admin/ledger/credits", `{"user":"admin","amount_micros":1000000,"reason":"fz"}`},
	{"POST", "/api/v1/admin/ledger/reversals", `{"ids":[{line}],"reason":"fz"}`},
	{"POST", "/api/v1/admin/users", `{"username":"fuzzer","role":"user","password":"a-long-password"}`},
	{"PUT", "/api/v1/admin/users/{user}/role", `{"role":"admin"}`},
	{"PUT", "/api/v1/admin/users/{user}/disabled", `{"disabled":false}`},
	{"PUT", "/api/v1/admin/users/{user}/username", `{"username":"fz-user-renamed"}`},
	{"POST", "/api/v1/admin/groups", `{"name":"fz-group","description":"d"}`},
	{"PUT", "/api/v1/admin/groups/{group_id}", `{"name":"fz-renamed"}`},
	{"PUT", "/api/v1/admin/egress", `{"mode":"internet","allow":["10.20.0.0/16"]}`},
	{"PUT", "/api/v1/admin/electricity-price", `{"price_per_kwh_micros":155000}`},
	{"PUT", "/api/v1/admin/registry-mirrors", `{"mirrors":{"quay.io":"quay.example.cn"}}`},
	{"POST", "/api/v1/admin/calculator/apply-rate", `{"gpu_model":"NVIDIA H100 80GB HBM3"}`},
	{"PUT", "/api/v1/admin/calculator/settings", `{"discounts_bps":{"spot":3000}}`},
	{"POST", "/api/v1/admin/cloud-prices", `{"provider":"F","offer":"o","gpu_model":"H100","tier":"spot","currency":"USD","price_per_gpu_hour":"1.5","source":"s"}`},
	{"PUT", "/api/v1/admin/cloud-prices/1", `{"provider":"F","offer":"o2","gpu_model":"H100","gpus_in_offer":8,"tier":"spot","currency":"USD","price_per_gpu_hour_micros":1500000,"source":"s"}`},
}

// fuzzFixture is a portal with what the endpoints' paths and seeds name:
// an admin with an API token, a workbench and a saved image of theirs, a
// queued workbench, a ledger line. The Docker engine is pointed at
// nothing, so a launch the fuzzer gets right creates no container (it is
// refused or fails in the background).
type fuzzFixture struct {
	url, token string
	fill       *strings.Replacer
}

func newFuzzFixture(tb testing.TB) *fuzzFixture {
	tb.Helper()
	ctx := context.Background()
	srv, ts := servePortal(tb)
	st := srv.Store
	admin, err := st.UserByUsername(ctx, "admin")
	if err != nil {
		tb.Fatal(err)
	}
	_, token, err := st.CreateToken(ctx, admin.ID, "fuzz", 0)
	if err != nil {
		tb.Fatal(err)
	}
	fx := &fuzzFixture{url: ts.URL, token: token}
	call := func(method, path, body string) map[string]any {
		tb.Helper()
		res := fx.do(tb, method, path, []byte(body))
		defer res.Body.Close()
		var out map[string]any
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 || json.Unmarshal(raw, &out) != nil {
			tb.Fatalf("fixture %s %s: %d %s", method, path, res.StatusCode, raw)
		}
		return out
	}

	// The admin's own workbench, stopped, its container gone (a row:
	// nothing runs).
	imgs, err := st.ListImages(ctx, true)
	if err != nil || len(imgs) == 0 {
		tb.Fatalf("images: %v", err)
	}
	wb := &models.Workbench{Name: "fz-own", OwnerID: admin.ID, ImageID: imgs[0].ID, FlavorID: 1}
	if err := st.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		tb.Fatal(err)
	}
	if err := st.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, "", map[string]any{"container_id": "fz-no-such-container"}); err != nil {
		tb.Fatal(err)
	}
	// A saved image of the admin's, and a group of theirs to share it with.
	saved := imgs[0]
	saved.ID, saved.Name, saved.OwnerID, saved.SavedFrom = 0, "fz-saved v1 (admin)", admin.ID, wb.ID
	if err := st.CreateImage(ctx, &saved); err != nil {
		tb.Fatal(err)
	}
	g, err := st.CreateGroup(ctx, "fuzzers", "")
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.AddGroupMember(ctx, g.ID, admin.ID); err != nil {
		tb.Fatal(err)
	}
	// A ledger line to reverse.
	line, err := st.Credit(ctx, admin.ID, 1_000_000, "", "fuzz fixture", "admin")
	if err != nil {
		tb.Fatal(err)
	}
	// A queued workbench that cannot be placed: it asks for two GPUs and
	// all but one are drained (the one left is for the reservation seed).
	gpus := call("GET", "/api/v1/gpus", "")["items"].([]any)
	first := gpus[0].(map[string]any)["uuid"].(string)
	for _, it := range gpus[:len(gpus)-1] {
		call("PUT", "/api/v1/gpus/"+it.(map[string]any)["uuid"].(string)+"/drain", `{"drained":true}`)
	}
	fls, err := st.ListFlavors(ctx, false)
	if err != nil {
		tb.Fatal(err)
	}
	queued := &models.Workbench{Name: "fz-queued", OwnerID: admin.ID, ImageID: imgs[0].ID}
	for _, f := range fls {
		if f.GPUCount >= 2 && (f.UnitKind == "" || f.UnitKind == "gpu") {
			queued.FlavorID = f.ID
		}
	}
	if queued.FlavorID == 0 {
		tb.Fatal("no flavor of two or more GPUs")
	}
	if err := st.EnqueueWorkbench(ctx, queued, nil); err != nil {
		tb.Fatal(err)
	}
	// Another user, whose role and account switch the fuzzer turns.
	other, err := st.CreateUser(ctx, models.NewUser{Username: "fz-user", Password: "fz-user-password"})
	if err != nil {
		tb.Fatal(err)
	}
	from := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Hour)
	fx.fill = strings.NewReplacer("{user}", strconv.FormatInt(other.ID, 10),
		"{wb}", wb.ID, "{queued}", queued.ID, "{img}", strconv.FormatInt(saved.ID, 10), "{gpu}", first,
		"{group_id}", strconv.FormatInt(g.ID, 10), "{line}", strconv.FormatInt(line.ID, 10),
		"{from}", from.Format(time.RFC3339), "{to}", from.Add(2*time.Hour).Format(time.RFC3339))
	return fx
}

// do sends body to the endpoint as the admin's API token.
func (fx *fuzzFixture) do(tb testing.TB, method, path string, body []byte) *http.Response {
	tb.Helper()
	req, _ := http.NewRequest(method, fx.url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+fx.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := fuzzClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s with %q: %v", method, path, body, err)
	}
	return res
}

// FuzzAPIJSONBodies sends any bytes as the body of any JSON endpoint, as an
// admin. Whatever comes in, the portal answers: never a 500 (a panic or an
// unhandled decode error), and every refusal is the JSON error shape.
func FuzzAPIJSONBodies(f *testing.F) {
	f.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	fx := newFuzzFixture(f)
	for i, e := range fuzzEndpoints {
		for _, body := range []string{fx.fill.Replace(e.seed), ``, `null`, `[]`, `"x"`, `{"name":`, `{"name":1e999}`, `{"rates":[null]}`,
			`{"max_gpus":-1}`, `{"a":[}`, "\x00\xff", `{"name":"` + string(bytes.Repeat([]byte("é"), 300)) + `"}`} {
			f.Add(uint8(i), []byte(body))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		e := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		path := fx.fill.Replace(e.path)
		res := fx.do(t, e.method, path, body)
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %s with %q: %d %s", e.method, path, body, res.StatusCode, raw)
		}
		if res.StatusCode >= 400 {
			var out map[string]any
			if err := json.Unmarshal(raw, &out); err != nil || errCode(out) == "" {
				t.Fatalf("%s %s with %q: %d without the JSON error shape: %s", e.method, path, body, res.StatusCode, raw)
			}
		}
	})
}

// fuzzSeedRefusals are the seeds that cannot succeed on a portal without
// a Docker engine, with the refusal they get instead: they still pass the
// decoding and validation the fuzzer is after.
var fuzzSeedRefusals = map[string]int{
	"POST /api/v1/workbenches":                 http.StatusServiceUnavailable, // validated, then the engine is asked
	"POST /api/v1/workbenches/{wb}/save-image": http.StatusServiceUnavailable, // validated, then the engine commits
	"POST /api/v1/sudo":                        http.StatusBadRequest,         // decoded, then a token is told it needs no sudo
}

// Every seed is a body its endpoint accepts, so the fuzzer starts from
// inputs that reach past decoding into validation and the store (a seed
// with a wrong field name, like expires_in_days for expires_days, is
// refused or ignored and explores nothing).
func TestFuzzAPISeedsAreAccepted(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	fx := newFuzzFixture(t)
	for _, e := range fuzzEndpoints {
		path := fx.fill.Replace(e.path)
		res := fx.do(t, e.method, path, []byte(fx.fill.Replace(e.seed)))
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		want, refused := fuzzSeedRefusals[e.method+" "+e.path]
		switch {
		case refused && res.StatusCode != want:
			t.Errorf("%s %s seed: %d %s, want %d", e.method, path, res.StatusCode, raw, want)
		case !refused && res.StatusCode >= 300:
			t.Errorf("%s %s seed refused: %d %s", e.method, path, res.StatusCode, raw)
		}
	}
}

// fuzzClient gives up on a request that hangs, so a hang is a failure
// naming its input rather than a stalled fuzzer.
var fuzzClient = &http.Client{Timeout: 20 * time.Second}
