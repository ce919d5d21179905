package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseEgressPolicy(t *testing.T) {
	for _, tc := range []struct {
		mode, allow string
		want        string // mode then CIDRs, or "error:<field>"
	}{
		{"", "", "internet"},
		{"none", "10.20.0.0/16, 192.168.1.7\n10.20.0.0/16", "none 10.20.0.0/16 192.168.1.7/32"},
		{"all", "", "all"},
		{"open", "", "error:mode"},
		{"internet", "10.1.2.3/8", "error:allow"},
		{"internet", "0.0.0.0/0", "error:allow"},
		{"internet", "fd00::/8", "error:allow"},
		{"internet", "example.org", "error:allow"},
	} {
		p, err := ParseEgressPolicy(tc.mode, tc.allow)
		got := strings.TrimSpace(string(p.Mode) + " " + strings.Join(p.AllowStrings(), " "))
		var fe *EgressFieldError
		if errors.As(err, &fe) {
			got = "error:" + fe.Field
		} else if err != nil {
			got = "error " + err.Error()
		}
		if got != tc.want {
			t.Errorf("ParseEgressPolicy(%q, %q) = %s (%v), want %s", tc.mode, tc.allow, got, err, tc.want)
		}
	}
}

// TestEgressRulesOrder: replies and the allow-list come before anything
// refused, and the host chain refuses everything else in internet mode.
func TestEgressRulesOrder(t *testing.T) {
	p, _ := ParseEgressPolicy("internet", "10.9.0.0/16")
	rules := egressRules("F", "I", p)
	idx := func(s string) int {
		i := strings.Index(rules, s)
		if i < 0 {
			t.Fatalf("no %q in\n%s", s, rules)
		}
		return i
	}
	if !(idx("-A F -d 10.9.0.0/16 -j RETURN") < idx("-A F -d 10.0.0.0/8 -j REJECT")) {
		t.Errorf("forward chain out of order:\n%s", rules)
	}
	if !(idx("-A I -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN") < idx("-A I -d 10.9.0.0/16 -j RETURN") && idx("-A I -d 10.9.0.0/16 -j RETURN") < idx("-A I -j REJECT")) {
		t.Errorf("host chain out of order:\n%s", rules)
	}
	// Forwarded packets are judged by destination whatever their state,
	// so a connection that slipped through a gap dies at its next packet.
	if strings.Contains(rules, "-A F -m conntrack") {
		t.Errorf("forward chain lets established connections through:\n%s", rules)
	}
	if !strings.Contains(rules, "-A F -d 169.254.0.0/16 -j REJECT") || !strings.Contains(rules, "-A I -j REJECT") {
		t.Errorf("missing refusals:\n%s", rules)
	}
}

// firewallEnv skips, saying why, where egress rules cannot be tested: no
// engine, not root, no iptables holding the engine's chains. On the CI
// machine and the development host none of that applies and it runs.
func firewallEnv(t *testing.T) (*engineEnv, *Firewall) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: egress rules need root (iptables and network namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("SKIP: no ip(8) to build the test's network namespace")
	}
	e := newEngineEnv(t)
	fw := NewFirewall(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := fw.Check(context.Background()); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	return e, fw
}

// TestEgressPolicyFromInsideAContainer proves each mode from inside a real
// workbench container on the real engine, probing real listeners:
//
//   - on the host, bound to 0.0.0.0, reached via the bridge's gateway and
//     via the host's primary address (both delivered locally: INPUT);
//   - in a "lab" network namespace reached through the host's routing
//     (FORWARD): 169.254.169.254 (metadata), a private lab address and a
//     public address;
//   - another workbench's Jupyter on the same network.
//
// Every probe is also the portal reaching Jupyter in the container from
// the host, which must keep working in every mode.
func TestEgressPolicyFromInsideAContainer(t *testing.T) {
	t.Parallel()
	e, fw := firewallEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	netName := e.network(t, ctx, "egress")
	bridge, err := e.d.NetworkBridge(ctx, netName)
	if err != nil {
		t.Fatal(err)
	}
	fwdChain, inChain := EgressChains(e.install)
	t.Cleanup(func() {
		if err := fw.Remove(context.Background(), e.install); err != nil {
			t.Errorf("cleanup: remove egress rules: %v", err)
		}
		assertNoRules(t, fwdChain, inChain)
	})

	_, probeURL := e.start(t, ctx, e.spec("prober", netName, ""))
	other, _ := e.start(t, ctx, e.spec("other", netName, ""))
	otherHost, otherPort := e.d.Endpoint(other, netName)

	// Listeners on the host.
	hostLn, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	acceptAll(hostLn)
	t.Cleanup(func() { hostLn.Close() })
	hostPort := strconv.Itoa(hostLn.Addr().(*net.TCPAddr).Port)
	gw := gateway(t, ctx, e, netName)
	primary := primaryIPv4(t)

	// The lab namespace, with addresses in 198.18.<n>.0/24 (benchmarking
	// range, never on a real LAN) and 11.<n>.<n>.2 standing in for the
	// internet.
	b, _ := strconv.ParseUint(e.run[:2], 16, 8)
	n := int(b)%200 + 20
	labSubnet := fmt.Sprintf("198.18.%d.0/24", n)
	labAddr := fmt.Sprintf("198.18.%d.2", n)
	public := fmt.Sprintf("11.%d.%d.2", n, n)
	lab := newLabNet(t, e.run, fmt.Sprintf("198.18.%d.1/24", n),
		[]string{labAddr + "/24", "169.254.169.254/32", public + "/32"},
		[]string{"169.254.169.254/32", public + "/32"})
	labPort := strconv.Itoa(lab.Port)

	targets := []struct{ name, addr string }{
		{"host via the bridge gateway", net.JoinHostPort(gw, hostPort)},
		{"host via its primary address", net.JoinHostPort(primary, hostPort)},
		{"metadata 169.254.169.254", net.JoinHostPort("169.254.169.254", labPort)},
		{"lab server " + labAddr, net.JoinHostPort(labAddr, labPort)},
		{"internet " + public, net.JoinHostPort(public, labPort)},
		{"other workbench", net.JoinHostPort(otherHost, strconv.Itoa(otherPort))},
	}
	for _, step := range []struct {
		mode, allow string
		reach       []bool // per target
	}{
		// Positive control first: nothing filtered by the portal, so every
		// "refused" below is the policy and not a broken probe or listener.
		// The other workbench stays refused (the engine's icc=false).
		{"all", "", []bool{true, true, true, true, true, false}},
		{"internet", "", []bool{false, false, false, false, true, false}},
		{"internet", labSubnet, []bool{false, false, false, true, true, false}},
		{"internet", primary + "/32", []bool{false, true, false, false, true, false}},
		{"none", labSubnet, []bool{false, false, false, true, false, false}},
		{"none", "", []bool{false, false, false, false, false, false}},
	} {
		p, err := ParseEgressPolicy(step.mode, step.allow)
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Apply(ctx, e.install, bridge, p); err != nil {
			t.Fatalf("apply %s %s: %v", step.mode, step.allow, err)
		}
		netChurn.RLock()
		for i, tgt := range targets {
			if step.mode == "internet" && step.allow == "" && i == 0 {
				// For the record: what a refused connection looks like
				// from inside, and how fast it fails.
				start := time.Now()
				p := selfcheck(t, ctx, probeURL, tgt.addr).Probe
				t.Logf("refused probe of %s: %q after %s", tgt.addr, p.Error, time.Since(start).Round(time.Millisecond))
			}
			got := reachable(t, ctx, probeURL, tgt.addr, step.reach[i])
			if got != step.reach[i] {
				t.Errorf("mode %s allow [%s]: %s (%s) reachable=%v, want %v", step.mode, step.allow, tgt.name, tgt.addr, got, step.reach[i])
			}
		}
		netChurn.RUnlock()
		if t.Failed() {
			logFirewall(t)
			t.FailNow()
		}
	}

	// Idempotent: applying again leaves one jump per parent chain.
	p, _ := ParseEgressPolicy("internet", "")
	for i := 0; i < 2; i++ {
		if err := fw.Apply(ctx, e.install, bridge, p); err != nil {
			t.Fatal(err)
		}
	}
	assertOneJump(t, "DOCKER-USER", bridge, fwdChain)
	assertOneJump(t, "INPUT", bridge, inChain)

	// A new bridge for the install (its network re-created) moves the
	// jumps; the lab's veth stands in for it.
	if err := fw.Apply(ctx, e.install, lab.hostIf, p); err != nil {
		t.Fatal(err)
	}
	assertOneJump(t, "DOCKER-USER", lab.hostIf, fwdChain)
	if err := fw.Apply(ctx, e.install, bridge, p); err != nil {
		t.Fatal(err)
	}
	assertOneJump(t, "DOCKER-USER", bridge, fwdChain)
	assertOneJump(t, "INPUT", bridge, inChain)
}

// TestEgressSweepsVanishedNetworks: the chains of an install whose bridge
// is gone (network deleted behind the portal's back) are removed by the
// next Apply of any install; a live one's are kept.
func TestEgressSweepsVanishedNetworks(t *testing.T) {
	t.Parallel()
	e, fw := firewallEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	netName := e.network(t, ctx, "sweep")
	bridge, err := e.d.NetworkBridge(ctx, netName)
	if err != nil {
		t.Fatal(err)
	}
	gone := e.install + "-gone"
	goneFwd, goneIn := EgressChains(gone)
	selfFwd, selfIn := EgressChains(e.install)
	t.Cleanup(func() {
		_ = fw.Remove(context.Background(), gone)
		if err := fw.Remove(context.Background(), e.install); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		waitNoRules(t, goneFwd, goneIn, selfFwd, selfIn)
	})
	// A veth pair plays the vanished install's bridge (deleting one end
	// deletes both).
	dummy := "wbeg" + e.run[:6] + "d"
	sh(t, "ip", "link", "add", dummy, "type", "veth", "peer", "name", "wbeg"+e.run[:6]+"e")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", dummy).Run() })
	if err := fw.Apply(ctx, gone, dummy, DefaultEgressPolicy); err != nil {
		t.Fatal(err)
	}
	if err := fw.Apply(ctx, e.install, bridge, DefaultEgressPolicy); err != nil {
		t.Fatal(err)
	}
	assertOneJump(t, "DOCKER-USER", dummy, goneFwd) // still there: its bridge exists
	sh(t, "ip", "link", "delete", dummy)
	if err := fw.Apply(ctx, e.install, bridge, DefaultEgressPolicy); err != nil {
		t.Fatal(err)
	}
	assertSwept(t, goneFwd, goneIn)
	assertOneJump(t, "DOCKER-USER", bridge, selfFwd)
}

// TestEgressSweepFinishesAPartialRemoval: a removal that failed half way
// (seen under load: the forward chain gone, the input chain and its jump
// left) is finished by the next sweep, which finds an install by its jumps
// from either parent chain.
func TestEgressSweepFinishesAPartialRemoval(t *testing.T) {
	t.Parallel()
	e, fw := firewallEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bridge, err := e.d.NetworkBridge(ctx, e.network(t, ctx, "partial"))
	if err != nil {
		t.Fatal(err)
	}
	half := e.install + "-half"
	halfFwd, halfIn := EgressChains(half)
	t.Cleanup(func() {
		_ = fw.Remove(context.Background(), half)
		_ = fw.Remove(context.Background(), e.install)
	})
	veth := "wbeg" + e.run[:6] + "h"
	sh(t, "ip", "link", "add", veth, "type", "veth", "peer", "name", "wbeg"+e.run[:6]+"i")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", veth).Run() })
	if err := fw.Apply(ctx, half, veth, DefaultEgressPolicy); err != nil {
		t.Fatal(err)
	}
	// What a removal stopped after the forward chain leaves behind.
	sh(t, "iptables", "-w", "-D", "DOCKER-USER", "-i", veth, "-j", halfFwd)
	sh(t, "iptables", "-w", "-F", halfFwd)
	sh(t, "iptables", "-w", "-X", halfFwd)
	assertOneJump(t, "INPUT", veth, halfIn)
	sh(t, "ip", "link", "delete", veth)

	if err := fw.Apply(ctx, e.install, bridge, DefaultEgressPolicy); err != nil {
		t.Fatal(err)
	}
	assertSwept(t, halfFwd, halfIn)
}

// reachable probes target from the container; a result other than want is
// retried twice, so a sub-second engine reprogramming (see EnsureNetwork)
// does not decide a test.
func reachable(t *testing.T, ctx context.Context, url, target string, want bool) bool {
	t.Helper()
	var p *struct {
		Target    string `json:"target"`
		Reachable bool   `json:"reachable"`
		Error     string `json:"error"`
	}
	for try := 0; try < 3; try++ {
		p = selfcheck(t, ctx, url, target).Probe
		if p == nil {
			t.Fatal("selfcheck ran no probe")
		}
		if p.Reachable == want {
			return want
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Logf("probe %s: reachable=%v error=%q", target, p.Reachable, p.Error)
	return p.Reachable
}

// primaryIPv4 is the host's address on its default route (what a LAN
// knows it by); no packet is sent.
func primaryIPv4(t *testing.T) string {
	t.Helper()
	c, err := net.Dial("udp4", "8.8.8.8:53")
	if err != nil {
		t.Skipf("SKIP: no IPv4 default route to find the host's primary address: %v", err)
	}
	defer c.Close()
	a := c.LocalAddr().(*net.UDPAddr).IP.String()
	if netip.MustParseAddr(a).IsLoopback() {
		t.Skipf("SKIP: primary address is loopback (%s)", a)
	}
	return a
}

func iptablesS(t *testing.T, chain string) string {
	out, err := exec.Command("iptables", "-w", "-S", chain).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func assertOneJump(t *testing.T, parent, iface, chain string) {
	t.Helper()
	rules := iptablesS(t, parent)
	want := fmt.Sprintf("-A %s -i %s -j %s", parent, iface, chain)
	if c := strings.Count(rules, "-j "+chain+"\n"); c != 1 || !strings.Contains(rules, want+"\n") {
		t.Errorf("%s: want exactly %q, got %d jumps:\n%s", parent, want, c, rules)
	}
}

// assertSwept checks, right after an Apply, that its sweep removed the
// vanished install's chains. Every Apply on this host sweeps them, not only
// the test's own: another test running in parallel, or a portal of the web
// tests, can be half way through removing the same chains when the test's
// Apply returns (the sweep finds an install by its jumps, so it then finds
// none to lead it there). Jumps left behind are the test's sweep failing
// (nobody else adds them); chains without jumps are that other removal in
// progress, and it finishing is waited for.
func assertSwept(t *testing.T, chains ...string) {
	t.Helper()
	for _, parent := range []string{"DOCKER-USER", "INPUT"} {
		rules := iptablesS(t, parent)
		for _, c := range chains {
			if strings.Contains(rules, "-j "+c+"\n") {
				t.Errorf("the sweep left the jump to %s in %s:\n%s", c, parent, rules)
			}
		}
	}
	if t.Failed() {
		return
	}
	waitNoRules(t, chains...)
}

// waitNoRules waits until no rule or chain named chains is left (another
// removal finishing: see assertSwept), for at most 2 minutes, then fails
// as assertNoRules.
func waitNoRules(t *testing.T, chains ...string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		all, err := exec.Command("iptables", "-w", "-S").Output()
		if err == nil && !mentionsAny(string(all), chains) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	assertNoRules(t, chains...)
}

func mentionsAny(rules string, chains []string) bool {
	for _, c := range chains {
		if strings.Contains(rules, " "+c+"\n") || strings.Contains(rules, " "+c+" ") {
			return true
		}
	}
	return false
}

func assertNoRules(t *testing.T, chains ...string) {
	t.Helper()
	all, err := exec.Command("iptables", "-w", "-S").Output()
	if err != nil {
		t.Errorf("iptables -S: %v", err)
		return
	}
	for _, c := range chains {
		if mentionsAny(string(all), []string{c}) {
			t.Errorf("rules of %s left behind", c)
		}
	}
}

// TestEgressRemovalOutlastsAFailedStep: a deletion that fails once (the
// nft backend refusing a change made at the same moment as another
// portal's) is tried again: the removal returns no error and leaves
// neither chain. It used to give up on the input chain and never reach
// the forward chain (make test saw a sweep leave it behind).
func TestEgressRemovalOutlastsAFailedStep(t *testing.T) {
	t.Parallel()
	e, fw := firewallEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst := e.install + "-busy"
	fwd, in := EgressChains(inst)
	veth := "wbeg" + e.run[:6] + "b"
	sh(t, "ip", "link", "add", veth, "type", "veth", "peer", "name", "wbeg"+e.run[:6]+"c")
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "delete", veth).Run()
		fw.failStep = nil
		_ = fw.Remove(context.Background(), inst)
	})
	if err := fw.Apply(ctx, inst, veth, DefaultEgressPolicy); err != nil {
		t.Fatal(err)
	}
	failed := 0
	fw.failStep = func(args []string) error {
		if len(args) == 2 && args[0] == "-X" && args[1] == in && failed == 0 {
			failed++
			return errors.New("Resource temporarily unavailable")
		}
		return nil
	}
	if err := fw.Remove(ctx, inst); err != nil {
		t.Errorf("remove: %v", err)
	}
	if failed != 1 {
		t.Fatalf("the injected failure ran %d times", failed)
	}
	assertNoRules(t, fwd, in)
}

// Rules taken away outside the portal (`workbench egress remove` run beside
// a live portal, an iptables flush) are put back by the next Apply with a
// warning in the log; the first Apply, a repeat with the rules in place and
// an Apply after the portal's own Remove say nothing.
func TestEgressRepairOutsideThePortalIsLogged(t *testing.T) {
	t.Parallel()
	e, _ := firewallEnv(t)
	var logs bytes.Buffer
	fw := NewFirewall(slog.New(slog.NewTextHandler(&logs, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bridge, err := e.d.NetworkBridge(ctx, e.network(t, ctx, "repair"))
	if err != nil {
		t.Fatal(err)
	}
	fwd, in := EgressChains(e.install)
	t.Cleanup(func() {
		if err := fw.Remove(context.Background(), e.install); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		waitNoRules(t, fwd, in)
	})
	const warning = "egress rules were changed outside the portal"
	apply := func() {
		t.Helper()
		if err := fw.Apply(ctx, e.install, bridge, DefaultEgressPolicy); err != nil {
			t.Fatal(err)
		}
	}
	apply()
	apply()
	if strings.Contains(logs.String(), warning) {
		t.Fatalf("first applies warned: %s", logs.String())
	}
	// What `workbench egress remove` does, from another process.
	if err := NewFirewall(slog.New(slog.NewTextHandler(io.Discard, nil))).Remove(ctx, e.install); err != nil {
		t.Fatal(err)
	}
	apply()
	if !strings.Contains(logs.String(), warning) {
		t.Fatalf("rules removed outside the portal were put back silently: %q", logs.String())
	}
	assertOneJump(t, "DOCKER-USER", bridge, fwd)
	logs.Reset()
	if err := fw.Remove(ctx, e.install); err != nil {
		t.Fatal(err)
	}
	apply()
	if strings.Contains(logs.String(), warning) {
		t.Fatalf("an Apply after the portal's own Remove warned: %s", logs.String())
	}
}
