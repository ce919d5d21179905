package gpu

import "context"

// nullInventory is the backend with no GPUs: mode "none", or "auto" on a
// host without the NVIDIA driver. Its Status carries the reason so the UI
// can tell the operator why there are no GPUs.
type nullInventory struct {
	reason string
}

func newNull(reason string) *nullInventory { return &nullInventory{reason: reason} }

// Devices returns an empty, non-nil slice so JSON lists render as [].
func (n *nullInventory) Devices(ctx context.Context) ([]Device, error) {
	return []Device{}, ctx.Err()
}

func (n *nullInventory) Sample(ctx context.Context) ([]Sample, error) {
	return []Sample{}, ctx.Err()
}

func (n *nullInventory) Simulated() bool { return false }
func (n *nullInventory) Backend() string { return KindNone }
func (n *nullInventory) Status() string  { return n.reason }
func (n *nullInventory) Close() error    { return nil }
