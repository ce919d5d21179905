package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docker/docker/client"
)

// The engine refuses a second concurrent disk-usage scan with 409 Conflict
// ("a disk usage operation is already running"). On a real engine that race
// cannot be arranged on demand, so this test stands an HTTP endpoint in for
// the engine's /system/df (only that refusal; everything else about volumes
// is tested on the real engine): VolumeSizes must ask again and measure,
// and give up with the engine's error when the refusals do not stop.
func TestVolumeSizesAsksAgainWhenAScanIsRunning(t *testing.T) {
	for _, tc := range []struct {
		name      string
		refusals  int32
		wantError bool
	}{
		{"refused twice, then measured", 2, false},
		{"refused every time", 1000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/system/df") {
					http.NotFound(w, r)
					return
				}
				if calls.Add(1) <= tc.refusals {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusConflict)
					_, _ = w.Write([]byte(`{"message":"a disk usage operation is already running"}`))
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"Volumes":[{"Name":"wb-home-ann","Labels":{"` + LabelInstall + `":"i1"},"UsageData":{"Size":4096,"RefCount":0}}]}`))
			}))
			defer srv.Close()
			d, err := NewDocker(WithClientOpts(client.WithHost("tcp://"+strings.TrimPrefix(srv.URL, "http://")), client.WithVersion("1.47")))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			vols, err := d.VolumeSizes(context.Background(), "i1")
			if tc.wantError {
				if err == nil {
					t.Fatalf("no error after %d refusals", calls.Load())
				}
				if got := calls.Load(); got != int32(diskUsageTries) {
					t.Fatalf("asked %d times, want %d", got, diskUsageTries)
				}
				return
			}
			if err != nil {
				t.Fatalf("VolumeSizes after %d refusals: %v", tc.refusals, err)
			}
			if len(vols) != 1 || vols[0].Bytes != 4096 {
				t.Fatalf("volumes = %+v, want wb-home-ann with 4096 bytes", vols)
			}
		})
	}
}
