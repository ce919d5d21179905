package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// fuzzEndpoints is every API endpoint that decodes a JSON body.
var fuzzEndpoints = []struct {
	method, path string
	seed         string // a body it accepts
}{
	{"POST", "/api/v1/workbenches", `{"name":"fz","image":"PyTorch (CUDA 12)","flavor":"CPU small","idle_timeout_seconds":3600}`},
	{"POST", "/api/v1/images", `{"name":"Fuzz","image":"registry.example.org/a/b:1","start_command":"j --port={port} --b={base_url} --t={token}","home_path":"/home/jovyan"}`},
	{"PUT", "/api/v1/images/1", `{"name":"PyTorch (CUDA 12)","image":"registry.example.org/a/b:1","start_command":"j --port={port} --b={base_url} --t={token}"}`},
	{"POST", "/api/v1/flavors", `{"name":"Fuzz flavor","cpu_cores":1,"memory_gib":2}`},
	{"PUT", "/api/v1/flavors/1", `{"name":"CPU small","cpu_cores":2,"memory_gib":8}`},
	{"PUT", "/api/v1/gpus/GPU-fuzz/drain", `{"drained":true}`},
	{"PUT", "/api/v1/admin/quotas/default", `{"max_gpus":8,"allowed_images":["PyTorch (CUDA 12)"]}`},
	{"PUT", "/api/v1/admin/quotas/users/admin", `{"max_workbenches":3,"max_idle_minutes":60}`},
	{"PUT", "/api/v1/admin/prices", `{"rates":[{"resource":"cpu","rate_micros":20000}]}`},
	{"POST", "/api/v1/admin/users", `{"username":"fuzzer","role":"user","password":"a-long-password"}`},
	{"POST", "/api/v1/tokens", `{"name":"fz","expires_in_days":30}`},
	{"POST", "/api/v1/calculator/estimate", `{"flavor":"CPU small","hours":10}`},
	{"POST", "/api/v1/calculator/tco", `{"gpu_model":"NVIDIA H100 80GB HBM3","gpus":8}`},
	{"POST", "/api/v1/admin/calculator/apply-rate", `{"gpu_model":"NVIDIA H100 80GB HBM3"}`},
	{"PUT", "/api/v1/admin/calculator/settings", `{"discounts":{"spot":"30"}}`},
	{"POST", "/api/v1/admin/cloud-prices", `{"provider":"F","offer":"o","gpu_model":"H100","tier":"spot","currency":"USD","price_per_gpu_hour":"1.5","source":"s"}`},
	{"PUT", "/api/v1/admin/cloud-prices/1", `{"provider":"F","offer":"o2","gpu_model":"H100","gpus_in_offer":8,"tier":"spot","currency":"USD","price_per_gpu_hour_micros":1500000,"source":"s"}`},
}

// FuzzAPIJSONBodies sends any bytes as the body of any JSON endpoint, as an
// admin. Whatever comes in, the portal answers: never a 500 (a panic or an
// unhandled decode error), and every refusal is the JSON error shape. The
// Docker engine is pointed at nothing, so a launch the fuzzer gets right
// creates no container (it is refused or fails in the background).
func FuzzAPIJSONBodies(f *testing.F) {
	f.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	srv, ts := servePortal(f)
	admin, err := srv.Store.UserByUsername(context.Background(), "admin")
	if err != nil {
		f.Fatal(err)
	}
	_, token, err := srv.Store.CreateToken(context.Background(), admin.ID, "fuzz", 0)
	if err != nil {
		f.Fatal(err)
	}
	for i, e := range fuzzEndpoints {
		for _, body := range []string{e.seed, ``, `null`, `[]`, `"x"`, `{"name":`, `{"name":1e999}`, `{"rates":[null]}`,
			`{"max_gpus":-1}`, `{"a":[}`, "\x00\xff", `{"name":"` + string(bytes.Repeat([]byte("é"), 300)) + `"}`} {
			f.Add(uint8(i), []byte(body))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		e := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		req, _ := http.NewRequest(e.method, ts.URL+e.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := fuzzClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s with %q: %v", e.method, e.path, body, err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %s with %q: %d %s", e.method, e.path, body, res.StatusCode, raw)
		}
		if res.StatusCode >= 400 {
			var out map[string]any
			if err := json.Unmarshal(raw, &out); err != nil || errCode(out) == "" {
				t.Fatalf("%s %s with %q: %d without the JSON error shape: %s", e.method, e.path, body, res.StatusCode, raw)
			}
		}
	})
}

// fuzzClient gives up on a request that hangs, so a hang is a failure
// naming its input rather than a stalled fuzzer.
var fuzzClient = &http.Client{Timeout: 20 * time.Second}
