package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
	"workbench/orchestrator/runtime"
)

// servePullable serves a fresh image from an in-process registry and puts
// it in the catalog as "pullable". It holds no Jupyter: launching it pulls
// for real, then fails to start.
func servePullable(t *testing.T, p *testPortal, delay time.Duration) *testimages.Registry {
	t.Helper()
	cli := dockerClient(t)
	ctx := context.Background()
	reg, err := testimages.ServeRandomImage(ctx, cli, 2<<20)
	if err != nil {
		t.Fatalf("serve image: %v", err)
	}
	reg.SetDelay(delay)
	t.Cleanup(func() {
		reg.Close()
		_, _ = cli.ImageRemove(context.Background(), reg.Ref, image.RemoveOptions{Force: true})
	})
	img := &models.Image{Name: "pullable", Image: reg.Ref, StartCommand: testimages.FakeJupyterStartCommand, Enabled: true}
	if err := p.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestStopDuringPullCancelsTheLaunch(t *testing.T) {
	p, cli := enginePortal(t)
	servePullable(t, p, 3*time.Second)
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"slow","image":"pullable","flavor":"1x H100 80GB HBM3"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "pulling")
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 200 {
		t.Fatalf("stop during pull: %d %v", code, body)
	}
	waitState(t, p, alice, id, "stopped")
	// The cancelled launch must not bring it back, nor leave a container:
	// looked at once its pipeline has ended (Manager.Wait), not after a
	// time it should have ended in.
	p.srv.Manager.Wait()
	if _, wb := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); wb["state"] != "stopped" || len(wb["gpus"].([]any)) != 0 {
		t.Fatalf("after the cancelled launch: %v", wb)
	}
	f := filters.NewArgs(filters.Arg("label", runtime.LabelID+"="+id))
	if cs, _ := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f}); len(cs) != 0 {
		t.Fatalf("%d containers left by a cancelled launch", len(cs))
	}
	p.srv.Manager.Wait()
}

func TestPulledImageThatCannotStartFailsReadably(t *testing.T) {
	p, _ := enginePortal(t)
	servePullable(t, p, 0)
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"broken","image":"pullable","flavor":"1x H100 80GB HBM3"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	wb = waitState(t, p, alice, wb["id"].(string), "failed")
	reason, _ := wb["reason"].(string)
	if !strings.Contains(reason, "start") || len(wb["gpus"].([]any)) != 0 {
		t.Fatalf("failed workbench: reason %q, gpus %v", reason, wb["gpus"])
	}
	hist, err := p.srv.Store.WorkbenchHistory(context.Background(), wb["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, h := range hist {
		states = append(states, h.State)
	}
	if got := strings.Join(states, ","); !strings.HasPrefix(got, "requested,pulling,creating,starting") {
		t.Fatalf("history %s", got)
	}
	p.srv.Manager.Wait()
}
