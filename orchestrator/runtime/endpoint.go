package runtime

import "strconv"

// Endpoint returns the container's IP on network and the Jupyter port
// recorded at create time. Jupyter is never published on a host port; the
// portal, running on the host, reaches it through the bridge.
func (d *Docker) Endpoint(info ContainerInfo, network string) (string, int) {
	host := info.IPs[network]
	if host == "" {
		return "", 0
	}
	port, err := strconv.Atoi(info.Labels[LabelPort])
	if err != nil || port <= 0 {
		return "", 0
	}
	return host, port
}
