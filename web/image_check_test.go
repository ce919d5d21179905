package web_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
	"workbench/orchestrator/runtime"
)

// buildEntry is one file or directory of a test image's build context.
type buildEntry struct {
	name string
	dir  bool
	mode int64
	data string
}

// buildBrokenImage builds a small image for one broken-image case (classic
// builder, labelled as a test object) and removes it when the test ends.
func buildBrokenImage(t *testing.T, cli *client.Client, name, dockerfile string, entries ...buildEntry) string {
	t.Helper()
	ctx := context.Background()
	tag := "workbench-test/broken-" + name + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	entries = append([]buildEntry{{name: "Dockerfile", mode: 0o644, data: dockerfile}}, entries...)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if e.dir {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := cli.ImageBuild(ctx, &buf, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true,
		Labels: map[string]string{testimages.TestLabel: "1"}, Version: build.BuilderV1})
	if err != nil {
		t.Fatalf("build %s: %v", name, err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if bytes.Contains(out, []byte(`"error"`)) {
		t.Fatalf("build %s: %s", name, out)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
	})
	return tag
}

// runImageTest starts Test image through the API and waits for its result.
func runImageTest(t *testing.T, p *testPortal, admin string, imageID int64) map[string]any {
	t.Helper()
	code, chk := p.api("POST", "/api/v1/images/"+itoa(imageID)+"/test", admin, "")
	if code != http.StatusAccepted || chk["state"] != "running" {
		t.Fatalf("start test: %d %v", code, chk)
	}
	path := "/api/v1/images/" + itoa(imageID) + "/tests/" + itoa(int64(chk["id"].(float64)))
	deadline := time.Now().Add(4 * time.Minute)
	for chk["state"] == "running" {
		if time.Now().After(deadline) {
			t.Fatalf("image test still running: %v", chk)
		}
		time.Sleep(100 * time.Millisecond)
		if code, chk = p.api("GET", path, admin, ""); code != 200 {
			t.Fatalf("get test: %d %v", code, chk)
		}
	}
	return chk
}

// Test image catches each kind of broken image at the right check, in one
// sentence that says what to do, and passes a good one. Each image here is
// broken the way real ones are: no Jupyter in it, an entrypoint that
// ignores the base URL, a home directory shipped read-only, a run-as user
// the image does not have.
func TestImageTestReportsBrokenImages(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	fake, _ := p.srv.Store.ImageByNameOrID(ctx, "fake")
	admin := tokenFor(t, p, "admin", "admin")

	noJupyter := buildBrokenImage(t, cli, "nojupyter", "FROM scratch\nCOPY passwd /etc/passwd\nCOPY home/ /home/jovyan/\nUSER 1000\n",
		buildEntry{name: "passwd", mode: 0o644, data: "root:x:0:0::/:/x\njovyan:x:1000:100::/home/jovyan:/x\n"},
		buildEntry{name: "home/.keep", mode: 0o644, data: "x"})
	wrongBase := buildBrokenImage(t, cli, "wrongbase", "FROM "+fake.Image+"\nENTRYPOINT [\"/fakejupyter\", \"--base-url=/\"]\n")
	roHome := buildBrokenImage(t, cli, "rohome", "FROM "+fake.Image+"\nCOPY rohome/ /home/\n",
		buildEntry{name: "rohome/", dir: true, mode: 0o755},
		buildEntry{name: "rohome/ro/", dir: true, mode: 0o555},
		buildEntry{name: "rohome/ro/.keep", mode: 0o444, data: "x"})

	cases := []struct {
		name, ref, runAs, home string
		state, step            string
		says                   []string
	}{
		{"good", fake.Image, "1000", testimages.FakeJupyterHome, "passed", "", []string{"All checks passed"}},
		{"no-jupyter", noJupyter, "1000", testimages.FakeJupyterHome, "failed", "jupyter", []string{"/fakejupyter is not in the image", "start command"}},
		{"wrong-base-url", wrongBase, "1000", testimages.FakeJupyterHome, "failed", "jupyter", []string{"answers at / but not under the base URL", "{base_url}"}},
		{"unwritable-home", roHome, "1000", "/home/ro", "failed", "home", []string{"/home/ro is not writable by 1000:1000", "r-xr-xr-x", "chmod u+w"}},
		{"wrong-user", fake.Image, "notjovyan", testimages.FakeJupyterHome, "failed", "user", []string{`no user "notjovyan"`, "Run as user"}},
		{"not-pullable", "127.0.0.1:1/workbench-test/absent:1", "1000", testimages.FakeJupyterHome, "failed", "image", []string{"cannot download from 127.0.0.1:1", "set a mirror for it under Admin → Registries"}},
	}
	for _, c := range cases {
		img := &models.Image{Name: "t-" + c.name, Image: c.ref, StartCommand: testimages.FakeJupyterStartCommand,
			RunAsUser: c.runAs, HomePath: c.home, Enabled: true}
		if err := p.srv.Store.CreateImage(ctx, img); err != nil {
			t.Fatal(err)
		}
		chk := runImageTest(t, p, admin, img.ID)
		msg, _ := chk["message"].(string)
		if chk["state"] != c.state || (c.step != "" && chk["step"] != c.step) {
			t.Errorf("%s: state %v at step %v, want %s at %q: %s (details %v)", c.name, chk["state"], chk["step"], c.state, c.step, msg, chk["details"])
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: message %q does not say %q", c.name, msg, s)
			}
		}
		// One plain sentence: no engine error chain in it.
		if strings.Count(strings.TrimSuffix(msg, "."), ". ") > 0 || strings.Contains(msg, "Error response from daemon") || !strings.HasSuffix(msg, ".") {
			t.Errorf("%s: not one plain sentence: %q", c.name, msg)
		}
		t.Logf("%s: %s", c.name, msg)
	}

	// Every run cleaned up its container and volume.
	id, _ := p.srv.Store.InstallID(ctx)
	f := filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+id), filters.Arg("label", runtime.LabelKind+"=image-test"))
	p.srv.Manager.Wait()
	if cs, _ := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f}); len(cs) != 0 {
		t.Errorf("%d image test containers left", len(cs))
	}
	if vs, _ := cli.VolumeList(ctx, volume.ListOptions{Filters: f}); len(vs.Volumes) != 0 {
		t.Errorf("%d image test volumes left", len(vs.Volumes))
	}
}

// Test image from the catalog page without JavaScript: the form POST goes
// to a result page that reloads itself until the run is done, then shows
// the outcome as an error; the catalog card shows the last test.
func TestImageTestFromTheCatalogPage(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	fake, _ := p.srv.Store.ImageByNameOrID(ctx, "fake")
	img := &models.Image{Name: "misconfigured", Image: fake.Image, StartCommand: testimages.FakeJupyterStartCommand,
		RunAsUser: "nobody-here", HomePath: testimages.FakeJupyterHome, Enabled: true}
	if err := p.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	_, page := p.get(c, "/catalog")
	var action string
	parseHTML(t, page).Find(`[data-testid=image-card]`).Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Find("h3").Text(), "misconfigured") {
			action, _ = s.Find(`[data-testid=test-image]`).Closest("form").Attr("action")
		}
	})
	if action == "" {
		t.Fatal("no Test image button on the catalog card")
	}
	res := p.postForm(c, action, nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/images/"+itoa(img.ID)+"/tests/") {
		t.Fatalf("Test image: %d → %q", res.StatusCode, loc)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		_, page = p.get(c, loc)
		doc := parseHTML(t, page)
		state, _ := doc.Find(`[data-testid=image-test]`).Attr("data-state")
		// Without JavaScript the page reloads (the noscript block); with
		// it the result is a live region, and nothing reloads the page.
		refresh := noscriptDoc(t, page).Find(`meta[http-equiv=refresh]`).Length() > 0
		if doc.Find(`meta[http-equiv=refresh]`).Length() > 0 {
			t.Fatal("the test's page reloads itself with JavaScript too")
		}
		if state == "running" {
			if !refresh {
				t.Fatal("a running test's page does not refresh itself")
			}
		} else {
			msg := doc.Find(`[data-testid=image-test-message]`)
			class, _ := msg.Attr("class")
			if state != "failed" || refresh || !strings.Contains(class, "flash-error") || !strings.Contains(msg.Text(), `no user "nobody-here"`) {
				t.Fatalf("result page: state %q refresh %v class %q message %q", state, refresh, class, msg.Text())
			}
			if st, _ := doc.Find(`[data-step=user]`).Attr("data-state"); st != "failed" {
				t.Errorf("user step shown as %q", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the test did not finish")
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, page = p.get(c, "/catalog")
	found := false
	parseHTML(t, page).Find(`[data-testid=last-test]`).Each(func(_ int, s *goquery.Selection) {
		st, _ := s.Attr("data-state")
		found = found || (st == "failed" && strings.Contains(s.Text(), "nobody-here"))
	})
	if !found {
		t.Error("the catalog does not show the failed last test")
	}
	// A non-admin can neither start a test nor read one.
	user := tokenFor(t, p, "gus", "user")
	if code, _ := p.api("POST", "/api/v1/images/"+itoa(img.ID)+"/test", user, ""); code != 403 {
		t.Errorf("user started an image test: %d", code)
	}
}
