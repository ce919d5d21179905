package web_test

import (
	"archive/tar"
	"context"
	"net/http"
	"strings"
	"testing"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
)

// A fresh home volume belongs to the image's run-as user (uid and its own
// gid) and the workbench can write it, whatever owns the home directory in
// the image (the fake image ships it as 1000:100), without running as root
// or with any capability. A second launch on the same volume keeps it so.
func TestHomeOwnershipOnFreshVolume(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	fake, _ := p.srv.Store.ImageByNameOrID(ctx, "fake")
	nobody := &models.Image{Name: "fake-nobody", Image: fake.Image, StartCommand: testimages.FakeJupyterStartCommand,
		RunAsUser: "65534", HomePath: testimages.FakeJupyterHome, Enabled: true}
	if err := p.srv.Store.CreateImage(ctx, nobody); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, image string
		uid         int
	}{{"alice", "fake", 1000}, {"nina", "fake-nobody", 65534}} {
		tok := tokenFor(t, p, c.user, "user")
		code, wb := p.api("POST", "/api/v1/workbenches", tok, `{"name":"home","image":"`+c.image+`","flavor":"CPU small"}`)
		if code != 202 {
			t.Fatalf("%s: launch: %d %v", c.user, code, wb)
		}
		id := wb["id"].(string)
		waitState(t, p, tok, id, "running")

		rec, err := p.srv.Store.WorkbenchByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rc, _, err := cli.CopyFromContainer(ctx, rec.ContainerID, testimages.FakeJupyterHome)
		if err != nil {
			t.Fatal(err)
		}
		hdr, err := tar.NewReader(rc).Next()
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Uid != c.uid || hdr.Gid != c.uid {
			t.Errorf("%s: home owned by %d:%d, want %d:%d", c.user, hdr.Uid, hdr.Gid, c.uid, c.uid)
		}
		info, err := cli.ContainerInspect(ctx, rec.ContainerID)
		if err != nil {
			t.Fatal(err)
		}
		if info.HostConfig.Privileged || len(info.HostConfig.CapAdd) != 0 || info.Config.User != strings.Repeat(itoa(int64(c.uid))+":", 2)[:2*len(itoa(int64(c.uid)))+1] {
			t.Errorf("%s: container runs as %q with caps %v privileged %v", c.user, info.Config.User, info.HostConfig.CapAdd, info.HostConfig.Privileged)
		}

		ac := p.client()
		p.login(ac, c.user, c.user+"-password")
		req, _ := http.NewRequest("POST", p.ts.URL+"/wb/"+id+"/api/homefile?name=mine.txt", strings.NewReader("mine"))
		req.Header.Set("Origin", p.ts.URL)
		res, err := ac.Do(req)
		if err != nil || res.StatusCode != http.StatusNoContent {
			t.Fatalf("%s (uid %d) cannot write its home: %v %v", c.user, c.uid, res.StatusCode, err)
		}
		res.Body.Close()
	}
	p.srv.Manager.Wait()
}
