package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"workbench/models"
)

// A script disables a catalog image and a flavor by sending only
// {"enabled": false} with PATCH: nothing else changes (PUT, which replaces
// the whole entry, had wiped the image's description and tags, or refused
// the body for a missing name). A bad value is refused and changes
// nothing; a user may not patch.
func TestPatchChangesOnlyWhatItSends(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	user := tokenFor(t, p, "uma", "user")
	img := &models.Image{Name: "torch", Image: "example/torch:2", Description: "PyTorch 2 with CUDA 12", Tags: "pytorch,cuda",
		StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser:    "1000", HomePath: "/home/jovyan", OpenPath: "/lab", Enabled: true}
	if err := p.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/api/v1/images/%d", img.ID)
	if code, _ := p.api("PATCH", path, user, `{"enabled":false}`); code != http.StatusForbidden {
		t.Errorf("a user's PATCH: %d, want 403", code)
	}
	if code, out := p.api("PATCH", path, admin, `{"enabled":false}`); code != 200 || out["enabled"] != false {
		t.Fatalf("PATCH enabled=false: %d %v", code, out)
	}
	got, err := p.srv.Store.ImageByID(ctx, img.ID)
	if err != nil || got.Enabled || got.Description != img.Description || got.Tags != img.Tags || got.Name != "torch" || got.OpenPath != "/lab" {
		t.Fatalf("after the PATCH: %+v (%v), want only enabled changed", got, err)
	}
	if code, out := p.api("PATCH", path, admin, `{"home_path":"relative"}`); code != http.StatusBadRequest {
		t.Errorf("a bad home path: %d %v, want 400", code, out)
	}
	if after, _ := p.srv.Store.ImageByID(ctx, img.ID); after.HomePath != "/home/jovyan" {
		t.Errorf("a refused PATCH changed the home path to %q", after.HomePath)
	}

	fls, err := p.srv.Store.ListFlavors(ctx, true)
	if err != nil || len(fls) == 0 {
		t.Fatalf("flavors: %v", err)
	}
	fl := fls[len(fls)-1]
	fpath := fmt.Sprintf("/api/v1/flavors/%d", fl.ID)
	if code, out := p.api("PATCH", fpath, admin, `{"enabled":false,"max_runtime_seconds":7200}`); code != 200 {
		t.Fatalf("PATCH flavor: %d %v", code, out)
	}
	gotF, err := p.srv.Store.FlavorByID(ctx, fl.ID)
	if err != nil || gotF.Enabled || gotF.MaxRuntimeS != 7200 || gotF.MemoryMiB != fl.MemoryMiB || gotF.CPUMilli != fl.CPUMilli ||
		gotF.ShmMiB != fl.ShmMiB || gotF.GPUCount != fl.GPUCount || gotF.Name != fl.Name {
		t.Fatalf("flavor after the PATCH: %+v (%v), want only enabled and the runtime changed from %+v", gotF, err, fl)
	}
	if code, out := p.api("PATCH", fpath, admin, `{"memory_mib":`+fmt.Sprint(fl.MemoryMiB+512)+`}`); code != 200 {
		t.Fatalf("PATCH memory: %d %v", code, out)
	}
	if gotF, _ = p.srv.Store.FlavorByID(ctx, fl.ID); gotF.MemoryMiB != fl.MemoryMiB+512 || gotF.ShmMiB != fl.ShmMiB {
		t.Errorf("after PATCH memory_mib: %d MiB (shm %d), want %d (shm kept at %d)", gotF.MemoryMiB, gotF.ShmMiB, fl.MemoryMiB+512, fl.ShmMiB)
	}
	if code, _ := p.api("PATCH", "/api/v1/flavors/999999", admin, `{"enabled":false}`); code != http.StatusNotFound {
		t.Errorf("PATCH of a missing flavor: %d, want 404", code)
	}
}

// A PUT replaces the whole entry, so it must say whether the entry is
// enabled: one that left "enabled" out turned a disabled flavor back on
// (a POST's default) without the script asking.
func TestPutWithoutEnabledIsRefused(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	fls, err := p.srv.Store.ListFlavors(ctx, true)
	if err != nil || len(fls) == 0 {
		t.Fatalf("flavors: %v", err)
	}
	fl := fls[0]
	path := fmt.Sprintf("/api/v1/flavors/%d", fl.ID)
	if code, out := p.api("PATCH", path, admin, `{"enabled":false}`); code != 200 {
		t.Fatalf("disable: %d %v", code, out)
	}
	whole := fmt.Sprintf(`{"name":%q,"cpu_cores":2,"memory_gib":4`, fl.Name)
	if code, out := p.api("PUT", path, admin, whole+`}`); code != http.StatusBadRequest || errCode(out) != "invalid_enabled" {
		t.Errorf("PUT without enabled: %d %v; want 400 invalid_enabled", code, out)
	}
	if got, _ := p.srv.Store.FlavorByID(ctx, fl.ID); got.Enabled || got.MemoryMiB != fl.MemoryMiB {
		t.Errorf("a refused PUT changed the flavor: %+v", got)
	}
	if code, out := p.api("PUT", path, admin, whole+`,"enabled":false}`); code != 200 || out["enabled"] != false {
		t.Errorf("PUT with enabled false: %d %v", code, out)
	}
	img := &models.Image{Name: "torch", Image: "example/torch:2", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		HomePath: "/home/jovyan", Enabled: false}
	if err := p.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"name":"torch","image":"example/torch:3","start_command":%q}`, img.StartCommand)
	if code, out := p.api("PUT", fmt.Sprintf("/api/v1/images/%d", img.ID), admin, body); code != http.StatusBadRequest || errCode(out) != "invalid_enabled" {
		t.Errorf("image PUT without enabled: %d %v; want 400 invalid_enabled", code, out)
	}
	if got, _ := p.srv.Store.ImageByID(ctx, img.ID); got.Enabled || got.Image != "example/torch:2" {
		t.Errorf("a refused image PUT changed it: %+v", got)
	}
}
