package orchestrator

import (
	"context"
	"testing"
)

// An SSH session runs as the container's own user: an image whose
// run_as_user is a bare uid ("1000") runs its container as "1000:1000",
// and a session given "1000" alone got group 0 (root's) wherever the
// image's /etc/passwd does not list the uid.
func TestExecTargetRunsAsTheContainersUser(t *testing.T) {
	r := newMemRig(t)
	target, err := r.m.ExecTarget(context.Background(), r.wb)
	if err != nil {
		t.Fatal(err)
	}
	if target.User != "1000:1000" || target.ContainerID != "c-"+r.wb.ID || target.Home != "/home/jovyan" {
		t.Fatalf("exec target %+v; want user 1000:1000 in c-%s, home /home/jovyan", target, r.wb.ID)
	}
}
