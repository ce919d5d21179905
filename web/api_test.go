package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// tokenFor creates a user (admin or not) and an API token for them.
func tokenFor(t *testing.T, p *testPortal, username string, role string) string {
	t.Helper()
	ctx := context.Background()
	u, err := p.srv.Store.UserByUsername(ctx, username)
	if err != nil {
		u, err = p.srv.Store.CreateUser(ctx, models.NewUser{Username: username, Password: username + "-password", Role: role})
		if err != nil {
			t.Fatal(err)
		}
	}
	_, secret, err := p.srv.Store.CreateToken(ctx, u.ID, "test-"+strconv.FormatInt(time.Now().UnixNano(), 36), 0)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

func TestAPIAuthentication(t *testing.T) {
	p := newPortal(t)
	if code, body := p.api("GET", "/api/v1/me", "", ""); code != 401 || errCode(body) != "unauthorized" {
		t.Fatalf("no auth: %d %v", code, body)
	}
	if code, body := p.api("GET", "/api/v1/me", "wbt_notatoken", ""); code != 401 || errCode(body) != "invalid_token" {
		t.Fatalf("bad token: %d %v", code, body)
	}
	tok := tokenFor(t, p, "carol", "user")
	code, me := p.api("GET", "/api/v1/me", tok, "")
	if code != 200 || me["username"] != "carol" || me["role"] != "user" {
		t.Fatalf("me: %d %v", code, me)
	}
	// Revoke through the API, then the token no longer works.
	code, list := p.api("GET", "/api/v1/tokens", tok, "")
	items := list["items"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("tokens: %d %v", code, list)
	}
	id := int64(items[0].(map[string]any)["id"].(float64))
	if code, _ := p.api("DELETE", "/api/v1/tokens/"+itoa(id), tok, ""); code != 204 {
		t.Fatalf("revoke: %d", code)
	}
	if code, _ := p.api("GET", "/api/v1/me", tok, ""); code != 401 {
		t.Fatalf("revoked token still works: %d", code)
	}
}

func TestAPITokenCreateAndExpiry(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "dan", "user")
	code, body := p.api("POST", "/api/v1/tokens", tok, `{"name":"script","expires_days":1}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	secret := body["token"].(string)
	if !strings.HasPrefix(secret, models.TokenPrefix) {
		t.Fatalf("token %q", secret)
	}
	if code, _ := p.api("GET", "/api/v1/me", secret, ""); code != 200 {
		t.Fatalf("new token: %d", code)
	}
	if code, body := p.api("POST", "/api/v1/tokens", tok, `{"name":"script"}`); code != 409 || errCode(body) != "conflict" {
		t.Fatalf("duplicate name: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/tokens", tok, `{"name":`); code != 400 || errCode(body) != "invalid_body" {
		t.Fatalf("broken JSON: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/tokens", tok, `{"name":"x","expires_days":-3}`); code != 400 || errCode(body) != "invalid_expires_days" {
		t.Fatalf("negative expiry: %d %v", code, body)
	}
}

func TestAPIGPUsShape(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "erin", "user")
	code, body := p.api("GET", "/api/v1/gpus", tok, "")
	if code != 200 || body["simulated"] != true {
		t.Fatalf("gpus: %d %v", code, body)
	}
	items := body["items"].([]any)
	if len(items) != 8 {
		t.Fatalf("%d GPUs, want 8", len(items))
	}
	g := items[0].(map[string]any)
	for _, k := range []string{"index", "uuid", "model", "memory_mib", "state", "health", "workbench_id", "simulated"} {
		if _, ok := g[k]; !ok {
			t.Errorf("gpu lacks %q: %v", k, g)
		}
	}
	if !strings.Contains(g["model"].(string), "H100") || g["state"] != "free" {
		t.Errorf("gpu: %v", g)
	}
}

func TestAPIDrainGPU(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	user := tokenFor(t, p, "fay", "user")
	_, body := p.api("GET", "/api/v1/gpus", user, "")
	uuid := body["items"].([]any)[3].(map[string]any)["uuid"].(string)
	if code, _ := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", user, `{"drained":true}`); code != 403 {
		t.Fatalf("user drained a GPU: %d", code)
	}
	if code, body := p.api("PUT", "/api/v1/gpus/GPU-nope/drain", admin, `{"drained":true}`); code != 404 {
		t.Fatalf("unknown GPU: %d %v", code, body)
	}
	if code, _ := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, `{"drained":true}`); code != 200 {
		t.Fatalf("drain: %d", code)
	}
	_, body = p.api("GET", "/api/v1/gpus", user, "")
	drained := 0
	for _, it := range body["items"].([]any) {
		g := it.(map[string]any)
		if g["state"] == "drained" {
			drained++
			if g["uuid"] != uuid {
				t.Errorf("wrong GPU drained: %v", g["uuid"])
			}
		}
	}
	if drained != 1 {
		t.Fatalf("%d drained GPUs, want 1", drained)
	}
	audit, _ := p.srv.Store.ListAudit(context.Background(), 10)
	if len(audit) == 0 || audit[0].Action != "gpu.drain" || audit[0].Target != uuid {
		t.Fatalf("drain not audited: %+v", audit)
	}
}

func TestAPIImagesAndFlavors(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	user := tokenFor(t, p, "gus", "user")
	good := `{"name":"My PyTorch","image":"registry.example.org/ml/pytorch:2.5-cuda12","start_command":"jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}"}`
	if code, _ := p.api("POST", "/api/v1/images", user, good); code != 403 {
		t.Fatalf("user created an image: %d", code)
	}
	code, img := p.api("POST", "/api/v1/images", admin, good)
	if code != 201 || img["name"] != "My PyTorch" || img["enabled"] != true || img["run_as_user"] != "1000" {
		t.Fatalf("create image: %d %v", code, img)
	}
	for _, k := range []string{"id", "name", "image", "start_command", "run_as_user", "home_path", "description", "enabled"} {
		if _, ok := img[k]; !ok {
			t.Errorf("image lacks %q", k)
		}
	}
	bad := strings.Replace(good, "registry.example.org/ml/pytorch:2.5-cuda12", "Not A Ref", 1)
	bad = strings.Replace(bad, "My PyTorch", "Other", 1)
	if code, body := p.api("POST", "/api/v1/images", admin, bad); code != 400 || errCode(body) != "invalid_image" {
		t.Fatalf("bad ref: %d %v", code, body)
	}
	noToken := strings.Replace(strings.Replace(good, " --IdentityProvider.token={token}", "", 1), "My PyTorch", "Third", 1)
	if code, body := p.api("POST", "/api/v1/images", admin, noToken); code != 400 || errCode(body) != "invalid_start_command" {
		t.Fatalf("template without token: %d %v", code, body)
	}
	_, list := p.api("GET", "/api/v1/images", user, "")
	names := ""
	for _, it := range list["items"].([]any) {
		names += it.(map[string]any)["name"].(string) + ";"
	}
	if !strings.Contains(names, "My PyTorch") || strings.Contains(names, "Other") || strings.Contains(names, "Third") {
		t.Fatalf("image list: %s", names)
	}

	code, fl := p.api("POST", "/api/v1/flavors", admin, `{"name":"2x big","gpu_model":"NVIDIA H100 80GB HBM3","gpu_count":2,"cpu_cores":1,"memory_gib":128}`)
	if code != 201 || fl["gpu_count"] != float64(2) {
		t.Fatalf("create flavor: %d %v", code, fl)
	}
	if code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"nomodel","gpu_count":1,"cpu_cores":4,"memory_gib":8}`); code != 400 || errCode(body) != "invalid_gpu_model" {
		t.Fatalf("flavor without model: %d %v", code, body)
	}
	_, list = p.api("GET", "/api/v1/flavors", user, "")
	if n := len(list["items"].([]any)); n != 6 { // CPU small + 4 seeded H100 + the new one
		t.Fatalf("%d flavors, want 6", n)
	}
}

func TestUnknownRoutes(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "hal", "user")
	if code, body := p.api("GET", "/api/v1/nothing-here", tok, ""); code != 404 || errCode(body) != "not_found" {
		t.Fatalf("unknown API route: %d %v", code, body)
	}
}

func TestAPIFlavorMaxRuntime(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	code, fl := p.api("POST", "/api/v1/flavors", admin, `{"name":"short","cpu_cores":1,"memory_gib":2,"max_runtime_seconds":7200}`)
	if code != 201 || fl["max_runtime_seconds"] != float64(7200) {
		t.Fatalf("create: %d %v", code, fl)
	}
	if code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"neg","cpu_cores":1,"memory_gib":2,"max_runtime_seconds":-1}`); code != 400 || errCode(body) != "invalid_max_runtime_seconds" {
		t.Fatalf("negative max runtime: %d %v", code, body)
	}
}
