package orchestrator

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// In memory: a preemptible run told to yield while it still launches gets
// its notice once it runs — the file with the stop time and the reason on
// its page. becameReady emptied the file and blanked the reason after the
// notice had been skipped as "still launching", so the job that watched
// the file lost its work without a word.
func TestMemPreemptedWhileLaunchingGetsItsNotice(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	hostPort := func(url string) (string, int) {
		h, p, _ := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
		n, _ := strconv.Atoi(p)
		return h, n
	}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(ok.Close)
	// The held launch's Jupyter answers only once released.
	var released atomic.Bool
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !released.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(gate.Close)
	var mu sync.Mutex
	open := map[string]bool{r.wb.ID: true} // workbenches whose Jupyter answers at once
	r.rt.SetEndpoint(func(info runtime.ContainerInfo, _ string) (string, int) {
		if !info.Running {
			return "", 0
		}
		mu.Lock()
		defer mu.Unlock()
		if open[info.Labels[runtime.LabelID]] {
			return hostPort(ok.URL)
		}
		return hostPort(gate.URL)
	})
	dave := r.user(t, "dave")
	for i := range 6 {
		mu.Lock()
		wb := r.launch(t, dave, fmt.Sprintf("spot-%d", i), LaunchRequest{Preemptible: true})
		open[wb.ID] = true
		mu.Unlock()
		r.waitState(t, wb.ID, models.StateRunning)
		r.advance(time.Minute)
	}
	late := r.launch(t, dave, "late-spot", LaunchRequest{Preemptible: true})
	r.waitState(t, late.ID, models.StateStarting)

	eve := r.user(t, "eve")
	if want := r.launch(t, eve, "interactive", LaunchRequest{Queue: true}); want.State != models.StateQueued {
		t.Fatalf("interactive launch is %s", want.State)
	}
	told, _ := r.store.WorkbenchByID(ctx, late.ID)
	if told.PreemptAt == nil || told.State != models.StateStarting {
		t.Fatalf("the launching spot: state %s, preempt at %v; want told to yield while starting", told.State, told.PreemptAt)
	}

	released.Store(true)
	got := r.waitState(t, late.ID, models.StateRunning)
	// The notice follows the move to running, in the same launch.
	waitFor(t, func() bool {
		got, _ = r.store.WorkbenchByID(ctx, late.ID)
		notice, _ := r.rt.HomeFile(got.ContainerID, PreemptFile(got.ID))
		return got.Reason != "" && len(notice) > 0
	})
	notice, found := r.rt.HomeFile(got.ContainerID, PreemptFile(got.ID))
	if !found || strings.TrimSpace(string(notice)) != told.PreemptAt.UTC().Format(time.RFC3339) {
		t.Errorf("notice file %q (found %v), want the stop time %s", notice, found, told.PreemptAt.UTC().Format(time.RFC3339))
	}
	if !strings.Contains(got.Reason, "this workbench stops at "+told.PreemptAt.UTC().Format("15:04:05")) {
		t.Errorf("reason %q, want the preemption's", got.Reason)
	}
}
