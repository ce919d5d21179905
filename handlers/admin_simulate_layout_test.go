package handlers

import (
	"reflect"
	"testing"

	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
)

// The what-if default is the server as it is: the model's GPUs counted in
// index order, GPU 7 in MIG as "7:…", GPU 6 shared in 2; other models
// left out.
func TestLayoutOfTheServer(t *testing.T) {
	const h100 = "NVIDIA H100 80GB HBM3"
	var gpus []orchestrator.PoolGPU
	for i := 7; i >= 0; i-- { // out of order on purpose
		g := orchestrator.PoolGPU{Index: i + 1, Model: h100}
		switch i {
		case 7:
			g.MIGEnabled, g.MIG = true, []gpu.MIGInstance{{Profile: "3g.40gb"}, {Profile: "1g.10gb"}}
		case 6:
			g.SharedSlices = 2
		}
		gpus = append(gpus, g)
	}
	gpus = append(gpus, orchestrator.PoolGPU{Index: 0, Model: "NVIDIA A100-SXM4-80GB", SharedSlices: 4})
	got := layoutOf(gpus, h100)
	want := serverLayout{gpus: 8, shared: 1, slices: 2, mig: []string{"7:3g.40gb+1g.10gb"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("layout %+v, want %+v", got, want)
	}
}
