package web_test

import (
	"context"
	"net/http"
	"testing"
)

// force=true kills the container without the grace period: the slow
// image's 2 s shutdown never runs (exit code 137, SIGKILL), where a plain
// stop lets it exit by itself.
func TestForceStopThroughTheAPI(t *testing.T) {
	r := newLCRig(t)
	for _, tc := range []struct {
		name, query string
		wantExit    int
	}{{"graceful", "", 0}, {"forced", "?force=true", 137}} {
		id := r.launchAPI(t, tc.name, lcSlowImage)
		code, body := r.p.api("POST", "/api/v1/workbenches/"+id+"/stop"+tc.query, r.token, "")
		if code != http.StatusOK || body["state"] != "stopped" {
			t.Fatalf("%s stop: %d %v", tc.name, code, body)
		}
		r.assertStopped(t, id)
		info, err := r.cli.ContainerInspect(context.Background(), "wb-"+r.installID+"-"+id)
		if err != nil {
			t.Fatalf("%s stop: inspect: %v", tc.name, err)
		}
		if info.State.ExitCode != tc.wantExit {
			t.Errorf("%s stop: exit code %d, want %d", tc.name, info.State.ExitCode, tc.wantExit)
		}
	}
}
