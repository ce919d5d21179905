package kube_test

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"workbench/models"
	"workbench/orchestrator"
)

// TestKubePreemptionDeletesTheVictimPod: both GPUs of a node held by
// preemptible runs, an interactive launch queues; after the grace the
// newest preemptible run's Pod is deleted (that one only), it ends
// preempted, and the interactive workbench runs in its place.
func TestKubePreemptionDeletesTheVictimPod(t *testing.T) {
	r := newKubeRig(t, 1, 2)
	var victims []*models.Workbench
	for _, name := range []string{"spot-0", "spot-1"} {
		wb, err := r.m.Launch(r.ctx, r.user, orchestrator.LaunchRequest{Name: name, Image: "kwok", Flavor: r.flavor.Name, Preemptible: true})
		if err != nil {
			t.Fatal(err)
		}
		victims = append(victims, r.waitState(wb.ID, models.StateRunning))
		time.Sleep(1100 * time.Millisecond) // distinct start seconds: "newest" is well defined
	}
	bob, err := r.store.CreateUser(r.ctx, models.NewUser{Username: "bob", Password: "bob-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.m.Launch(r.ctx, bob, orchestrator.LaunchRequest{Name: "interactive", Image: "kwok", Flavor: r.flavor.Name, Queue: true})
	if err != nil || want.State != models.StateQueued {
		t.Fatalf("interactive launch: %v, %+v", err, want)
	}
	oldest, newest := victims[0], victims[1]
	r.eventually(2*time.Minute, "the newest preemptible run to be preempted", func() bool {
		_ = r.m.Drain(r.ctx)
		got, err := r.store.WorkbenchByID(r.ctx, newest.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.State == models.StatePreempted || got.State == models.StateQueued
	})
	if _, err := r.pod(newest); !apierrors.IsNotFound(err) {
		t.Fatalf("victim's pod: %v, want deleted", err)
	}
	if p, err := r.pod(oldest); err != nil || p.DeletionTimestamp != nil {
		t.Fatalf("the other preemptible run's pod: %v (deleting %v)", err, err == nil && p.DeletionTimestamp != nil)
	}
	if got, _ := r.store.WorkbenchByID(r.ctx, oldest.ID); got.State != models.StateRunning {
		t.Fatalf("the older run is %s", got.State)
	}
	placed := r.waitState(want.ID, models.StateRunning)
	if p, err := r.pod(placed); err != nil || p.Spec.NodeName == "" {
		t.Fatalf("interactive pod: %v", err)
	}
}
