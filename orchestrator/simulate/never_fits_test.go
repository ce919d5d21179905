package simulate

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestSimulateJobThatCouldNeverFitIsRejected: a job asking for more whole
// GPUs than the server has — nine of eight, or (portal engine) eight of
// eight with one split into MIG instances, the README's --mig example — is
// rejected under every policy and the run goes on: the portal engine
// aborted the whole run ("launch j2: … could never start"), the pure one
// let the job wait for good, neither served nor counted.
func TestSimulateJobThatCouldNeverFitIsRejected(t *testing.T) {
	trace := func(gpus string) Trace {
		tr, err := ParseTrace(strings.NewReader(`arrival_s,user,gpus,duration_s,priority,preemptible,checkpoint_s
0,ann,1,3600,interactive,false,0
60,bob,` + gpus + `,3600,batch,false,0
120,cat,1,600,interactive,false,0
`))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	mig, err := ParseMIG([]string{"0:3g.40gb"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.GPUs, cfg.SharedGPUs = 8, 0
	cfg.Window = 4 * time.Hour
	migCfg := cfg
	migCfg.MIG = mig
	for _, pol := range []Policy{ExclusiveReject, QueueFIFO, QueueFair, FairPreemptSharing} {
		pure, err := Run(trace("9"), pol, cfg)
		if err != nil {
			t.Fatalf("%s, pure engine: %v", pol, err)
		}
		portal, err := RunPortal(context.Background(), trace("9"), pol, cfg)
		if err != nil {
			t.Fatalf("%s, portal engine: %v", pol, err)
		}
		split, err := RunPortal(context.Background(), trace("8"), pol, migCfg)
		if err != nil {
			t.Fatalf("%s, portal engine, one GPU split: %v", pol, err)
		}
		for name, r := range map[string]*Result{"pure, 9 of 8": pure, "portal, 9 of 8": portal, "portal, 8 of 7 whole": split} {
			if r.Rejected != 1 {
				t.Errorf("%s, %s: rejected %d, want bob's job", pol, name, r.Rejected)
			}
		}
	}
}
