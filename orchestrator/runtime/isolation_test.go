package runtime

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"
)

// TestNetworkIsolation: workbenches of different users (different
// networks) and of the same user (same network, icc off) cannot reach each
// other, while the host — the portal — reaches all of them.
func TestNetworkIsolation(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	netA := e.network(t, ctx, "usera")
	netB := e.network(t, ctx, "userb")
	if err := e.d.EnsureNetwork(ctx, netA, e.labels()); err != nil {
		t.Fatalf("second EnsureNetwork: %v", err)
	}

	_, a1URL := e.start(t, ctx, e.spec("a1", netA, ""))
	a2, _ := e.start(t, ctx, e.spec("a2", netA, ""))
	b1, _ := e.start(t, ctx, e.spec("b1", netB, ""))

	netChurn.RLock()
	defer netChurn.RUnlock()

	// Positive control, so "unreachable" below means isolation and not a
	// broken probe: a1 can reach a listener on the host via its gateway.
	gw := gateway(t, ctx, e, netA)
	ln, err := net.Listen("tcp", gw+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if p := selfcheck(t, ctx, a1URL, ln.Addr().String()).Probe; p == nil || !p.Reachable {
		t.Fatalf("control probe to host %s failed: %+v", ln.Addr(), p)
	}

	for _, tc := range []struct {
		name   string
		target ContainerInfo
		net    string
	}{
		{"other user's workbench", b1, netB},
		{"same user's other workbench (icc off)", a2, netA},
	} {
		host, port := e.d.Endpoint(tc.target, tc.net)
		target := net.JoinHostPort(host, strconv.Itoa(port))
		if !isolated(t, ctx, a1URL, target) {
			t.Errorf("%s at %s reachable from a1", tc.name, target)
			logFirewall(t)
		}
	}
}

// isolated probes target from the container at url. Another process
// creating a network elsewhere on the host can open a sub-second gap in
// the engine's isolation (see EnsureNetwork); a steady-state leak shows on
// every try, a gap on one.
func isolated(t *testing.T, ctx context.Context, url, target string) bool {
	for try := 1; try <= 3; try++ {
		p := selfcheck(t, ctx, url, target).Probe
		if p == nil {
			t.Fatal("selfcheck ran no probe")
		}
		if !p.Reachable {
			return true
		}
		t.Logf("try %d: %s reachable (engine firewall gap while a network is created?)", try, target)
		time.Sleep(500 * time.Millisecond)
	}
	return false
}

func gateway(t *testing.T, ctx context.Context, e *engineEnv, name string) string {
	t.Helper()
	n, err := e.d.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range n.IPAM.Config {
		if c.Gateway != "" && !strings.Contains(c.Gateway, ":") {
			return c.Gateway
		}
	}
	t.Fatalf("network %s has no IPv4 gateway: %+v", name, n.IPAM.Config)
	return ""
}

// TestEnsureNetworkRefusesWeakNetwork: an existing network of the same name
// that lets containers talk is an error, not silently reused.
func TestEnsureNetworkRefusesWeakNetwork(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := fmt.Sprintf("wbtest-%s-weak", e.run)
	netChurn.Lock()
	defer netChurn.Unlock()
	if _, err := e.d.cli.NetworkCreate(ctx, name, network.CreateOptions{Driver: "bridge", Labels: e.labels()}); err != nil {
		t.Fatal(err)
	}
	err := e.d.EnsureNetwork(ctx, name, e.labels())
	if err == nil || !strings.Contains(err.Error(), "inter-container") {
		t.Errorf("EnsureNetwork on icc-enabled network: %v, want refusal", err)
	}
	if err := e.d.RemoveNetwork(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := e.d.RemoveNetwork(ctx, name); err != nil {
		t.Errorf("second RemoveNetwork: %v", err)
	}
}

// TestEnsureNetworkRefusesIPv6Network: an install network with IPv6 (one
// an engine made with IPv6 by default, or one made by hand) is refused:
// the egress rules, the host INPUT rule and, without the engine's
// ip6tables, icc=false are IPv4 only, and over IPv6 a workbench reached
// the host's services and other users' workbenches (session 54's review).
// A network EnsureNetwork makes itself has no IPv6.
func TestEnsureNetworkRefusesIPv6Network(t *testing.T) {
	t.Parallel()
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := fmt.Sprintf("wbtest-%s-ipv6", e.run)
	netChurn.Lock()
	defer netChurn.Unlock()
	on := true
	// A unique-local /64 of this run's own, so parallel runs do not clash.
	subnet := fmt.Sprintf("fd54:%s::/64", e.run[:4])
	if _, err := e.d.cli.NetworkCreate(ctx, name, network.CreateOptions{Driver: "bridge", EnableIPv6: &on,
		IPAM:    &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet}}},
		Options: map[string]string{iccOption: "false"}, Labels: e.labels()}); err != nil {
		// An engine (or kernel) that cannot make an IPv6 network cannot
		// hand one to the portal either: nothing to refuse here.
		t.Skipf("this engine makes no IPv6 network: %v", err)
	}
	err := e.d.EnsureNetwork(ctx, name, e.labels())
	if err == nil || !strings.Contains(err.Error(), "IPv6") {
		t.Errorf("EnsureNetwork on an IPv6 network: %v, want refusal naming IPv6", err)
	}
	if err := e.d.RemoveNetwork(ctx, name); err != nil {
		t.Fatal(err)
	}
	// Made by the portal: IPv4 only, asked for explicitly.
	if err := e.d.EnsureNetwork(ctx, name, e.labels()); err != nil {
		t.Fatalf("EnsureNetwork: %v", err)
	}
	n, err := e.d.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.EnableIPv6 {
		t.Errorf("the portal's network has IPv6 enabled: %+v", n.IPAM.Config)
	}
	if err := e.d.RemoveNetwork(ctx, name); err != nil {
		t.Fatal(err)
	}
}

// logFirewall logs the engine's iptables rules, the thing that enforces
// isolation, to explain a failure.
func logFirewall(t *testing.T) {
	out, err := exec.Command("iptables", "-S").CombinedOutput()
	t.Logf("iptables -S (%v):\n%s", err, out)
	out, err = exec.Command("docker", "network", "ls").CombinedOutput()
	t.Logf("docker network ls (%v):\n%s", err, out)
}
