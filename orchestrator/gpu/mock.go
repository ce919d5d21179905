package gpu

import (
	"crypto/sha256"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// mockLabels are the human names used in Status lines.
var mockLabels = map[string]string{
	"dgxa100": "DGX A100",
	"dgxh100": "DGX H100",
	"dgxh200": "DGX H200",
}

// newMockServer builds a go-nvml mock server (8 GPUs each) with stable
// UUIDs. The mock draws random UUIDs on every start, but the portal keys
// database rows, bindings and bills on GPU UUIDs and adopts running
// workbenches after a restart, so a simulated pool must keep its UUIDs
// across restarts just as real GPUs do.
func newMockServer(name string) (nvml.Interface, error) {
	var srv *server.Server
	switch name {
	case "dgxa100":
		srv = dgxa100.New()
	case "dgxh100":
		srv = dgxh100.New()
	case "dgxh200":
		srv = dgxh200.New()
	default:
		return nil, fmt.Errorf("unknown mock GPU server %q", name)
	}
	for i, d := range srv.Devices {
		if dev, ok := d.(*server.Device); ok {
			dev.UUID = stableMockUUID(name, i)
		}
	}
	return srv, nil
}

// stableMockUUID derives a GPU-prefixed UUID from the server name and
// index, in the format NVML uses for real GPUs.
func stableMockUUID(server string, index int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("workbench-mock-gpu/%s/%d", server, index)))
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
