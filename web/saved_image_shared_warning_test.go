package web_test

import (
	"context"
	"strings"
	"testing"

	"workbench/models"
)

// A saved image shared by someone else says whose files it runs, on the
// launch form and the catalog (security review, session 54): launching it
// runs the saver's files — Jupyter and its page's script included — with
// the launcher's home and, in path mode, in the portal's origin with the
// launcher's session, and only its name ("… v1 (alice)") hinted at that.
// The saver's own card, and catalog images, say nothing; the warning is in
// Chinese for a Chinese reader.
func TestSharedSavedImageSaysWhoseFilesItRuns(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	g, err := p.srv.Store.CreateGroup(ctx, "team", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []*models.User{alice, bob} {
		if err := p.srv.Store.AddGroupMember(ctx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	img := p.addImage(&models.Image{Name: "my-env v1 (alice)", Image: "workbench-saved/x/u1-my-env:v1", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser: "1000", HomePath: "/home/jovyan", Enabled: true, OwnerID: alice.ID, BaseName: "my-env", Version: 1})
	if err := p.srv.Store.ShareImage(ctx, img.ID, []string{"team"}); err != nil {
		t.Fatal(err)
	}
	const warning = "Saved by alice: launching it runs their files with your home and your portal access. Launch it only if you trust alice."
	for _, path := range []string{"/workbenches/new", "/catalog"} {
		b := p.client()
		p.login(b, "bob", "bob-password")
		if res, body := p.get(b, path); res.StatusCode != 200 || !strings.Contains(body, `data-testid="image-shared-by"`) || !strings.Contains(body, warning) {
			t.Errorf("bob's %s: %d; want the warning %q", path, res.StatusCode, warning)
		}
		a := p.client()
		p.login(a, "alice", "alice-password")
		if _, body := p.get(a, path); strings.Contains(body, `data-testid="image-shared-by"`) {
			t.Errorf("alice's own image on her %s carries the warning", path)
		}
	}
	zh, _ := p.readersSignedIn("bob", "bob-password")
	if _, body := p.get(zh, "/workbenches/new"); !strings.Contains(body, "由 alice 保存：启动它会以你的主目录和你的门户权限运行其文件。只有信任 alice 时才启动。") {
		t.Error("bob's launch form in Chinese lacks the warning in Chinese")
	}
}
