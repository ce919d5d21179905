package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"

	"workbench/orchestrator/runtime"
)

// TestEgressPolicyThroughPortal: the portal installs its egress rules before
// the first workbench starts, a workbench cannot reach a service on the
// host (bound to 0.0.0.0) via its gateway nor via the host's primary
// address, and an admin changes the policy on the API and on the page, with
// bad input refused and nothing changed. The deeper matrix (metadata, lab
// CIDRs, other workbenches, none) is orchestrator/runtime's
// TestEgressPolicyFromInsideAContainer.
func TestEgressPolicyThroughPortal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: egress rules need root")
	}
	if err := runtime.NewFirewall(slog.New(slog.DiscardHandler)).Check(context.Background()); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	p, cli := enginePortal(t)
	admin := tokenFor(t, p, "root", "admin")
	alice := tokenFor(t, p, "alice", "user")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// No network yet: pending, and the default policy.
	code, st := p.api("GET", "/api/v1/admin/egress", admin, "")
	if code != 200 || st["mode"] != "internet" || st["pending"] != true || st["enforced"] != false {
		t.Fatalf("egress before any workbench: %d %v", code, st)
	}

	id := isoLaunch(t, p, alice, "e1")
	waitState(t, p, alice, id, "running")
	code, st = p.api("GET", "/api/v1/admin/egress", admin, "")
	if code != 200 || st["enforced"] != true || !strings.HasPrefix(st["bridge"].(string), "br-") {
		t.Fatalf("egress after launch: %d %v", code, st)
	}

	// A service on the host, on every address.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
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
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	install, _ := p.srv.Store.InstallID(ctx)
	n, err := cli.NetworkInspect(ctx, "wb-net-"+install, network.InspectOptions{})
	if err != nil || len(n.IPAM.Config) == 0 {
		t.Fatalf("inspect workbench network: %v %+v", err, n.IPAM)
	}
	gw := net.JoinHostPort(n.IPAM.Config[0].Gateway, port)
	primary := net.JoinHostPort(hostPrimaryIPv4(t), port)

	ac := p.client()
	p.login(ac, "alice", "alice-password")
	probe := func(target string, want bool) {
		t.Helper()
		var sc isoCheck
		for try := 0; try < 3; try++ {
			if sc = isoSelfcheck(t, p, ac, id, target); sc.Probe != nil && sc.Probe.Reachable == want {
				return
			}
			time.Sleep(300 * time.Millisecond)
		}
		t.Errorf("probe %s from the workbench: %+v, want reachable=%v", target, sc.Probe, want)
	}
	probe(gw, false)
	probe(primary, false)

	// Control: with "all" the same probes connect, so the refusals above
	// are the policy.
	put := func(body string) (int, map[string]any) {
		t.Helper()
		return p.api("PUT", "/api/v1/admin/egress", admin, body)
	}
	if code, st := put(`{"mode":"all"}`); code != 200 || st["mode"] != "all" || st["enforced"] != true {
		t.Fatalf("PUT all: %d %v", code, st)
	}
	probe(gw, true)
	probe(primary, true)
	if code, st := put(`{"mode":"internet","allow":["` + strings.Split(primary, ":")[0] + `"]}`); code != 200 {
		t.Fatalf("PUT internet+allow: %d %v", code, st)
	}
	probe(gw, false)
	probe(primary, true)

	// Bad input: 400 naming the field; the policy in force is unchanged.
	for _, tc := range []struct{ body, code string }{
		{`{"mode":"open"}`, "invalid_mode"},
		{`{"allow":["10.0.0.0/8"]}`, "invalid_mode"},
		{`{"mode":"none","allow":["10.1.2.3/8"]}`, "invalid_allow"},
		{`{"mode":"none","allow":["10.0.0.0/8, 11.0.0.0/8"]}`, "invalid_allow"},
		{`{"mode":"none","allow":["0.0.0.0/0"]}`, "invalid_allow"},
		{`{"mode":"none","allow":"10.0.0.0/8"}`, "invalid_body"},
	} {
		if code, body := put(tc.body); code != 400 || errCode(body) != tc.code {
			t.Errorf("PUT %s: %d %v, want 400 %s", tc.body, code, body, tc.code)
		}
	}
	if code, body := p.api("PUT", "/api/v1/admin/egress", alice, `{"mode":"all"}`); code != 403 {
		t.Errorf("PUT by a user: %d %v, want 403", code, body)
	}
	if _, st := p.api("GET", "/api/v1/admin/egress", admin, ""); st["mode"] != "internet" || len(st["allow"].([]any)) != 1 {
		t.Errorf("policy changed by refused requests: %v", st)
	}
	probe(gw, false)

	// The admin page: status, then the form.
	adm := p.client()
	p.loginSudo(adm, "root", "root-password")
	res, body := p.get(adm, "/admin/egress")
	doc := parseHTML(t, body)
	if res.StatusCode != 200 || doc.Find(`[data-testid=egress-status]`).AttrOr("data-enforced", "") != "true" {
		t.Fatalf("admin page: %d enforced=%q", res.StatusCode, doc.Find(`[data-testid=egress-status]`).AttrOr("data-enforced", ""))
	}
	if _, ok := doc.Find(`[data-testid=egress-mode-internet]`).Attr("checked"); !ok {
		t.Error("page does not show internet as the mode")
	}
	res = p.postForm(adm, "/admin/egress", url.Values{"mode": {"none"}, "allow": {"10.1.2.3/8"}})
	if res.StatusCode != 400 {
		t.Errorf("form with bad CIDR: %d, want 400", res.StatusCode)
	}
	res = p.postForm(adm, "/admin/egress", url.Values{"mode": {"none"}, "allow": {""}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("form none: %d, want 303", res.StatusCode)
	}
	_, body = p.get(adm, "/admin/egress")
	if _, ok := parseHTML(t, body).Find(`[data-testid=egress-mode-none]`).Attr("checked"); !ok {
		t.Error("page does not show none after saving it")
	}
	probe(primary, false)
	entries, err := p.srv.Store.ListAudit(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	var sets int
	for _, e := range entries {
		if e.Action == "egress.set" {
			sets++
		}
	}
	if sets != 3 {
		t.Errorf("audit has %d egress.set entries, want 3 (all, internet+allow, none)", sets)
	}

	// After a host reboot the rules are gone; restarting a stopped
	// workbench puts them back before its container runs.
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 202 && code != 200 {
		t.Fatalf("stop: %d %v", code, body)
	}
	waitState(t, p, alice, id, "stopped")
	if err := runtime.NewFirewall(slog.New(slog.DiscardHandler)).Remove(ctx, install); err != nil {
		t.Fatal(err)
	}
	fwd, _ := runtime.EgressChains(install)
	if strings.Contains(iptablesRules(t), fwd) {
		t.Fatal("rules still there after Remove")
	}
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/start", alice, ""); code != 202 && code != 200 {
		t.Fatalf("start: %d %v", code, body)
	}
	waitState(t, p, alice, id, "running")
	if !strings.Contains(iptablesRules(t), "-j "+fwd) {
		t.Error("restarted workbench runs without the egress rules")
	}
	probe(primary, false)

	// A host that cannot enforce anything says so on the page, whatever
	// the setting.
	p.srv.Manager.UseFirewall(unavailableFirewall{})
	_, body = p.get(adm, "/admin/egress")
	doc = parseHTML(t, body)
	if doc.Find(`[data-testid=egress-status]`).AttrOr("data-enforced", "") != "false" || doc.Find(`[data-testid=egress-not-enforced]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid=egress-problem]`).Text(), "no iptables") {
		t.Errorf("page on a host without iptables does not say the policy is not enforced:\n%s", doc.Find(`[data-testid=egress-status]`).Text())
	}
	// …and every admin page says so, once the status is known.
	_, body = p.get(adm, "/admin/users")
	if !strings.Contains(body, "egress policy NOT enforced") {
		t.Error("admin pages carry no banner while the egress policy is not enforced")
	}
}

// unavailableFirewall is a host without iptables.
type unavailableFirewall struct{}

func (unavailableFirewall) Apply(context.Context, string, string, runtime.EgressPolicy) error {
	return errors.Join(runtime.ErrFirewallUnavailable, errors.New("no iptables on this host's PATH"))
}
func (unavailableFirewall) Remove(context.Context, string) error { return nil }
func (f unavailableFirewall) Check(ctx context.Context) error {
	return f.Apply(ctx, "", "", runtime.EgressPolicy{})
}

func iptablesRules(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("iptables", "-w", "-S").Output()
	if err != nil {
		t.Fatalf("iptables -S: %v", err)
	}
	return string(out)
}

// hostPrimaryIPv4 is the host's address on its default route; no packet
// is sent.
func hostPrimaryIPv4(t *testing.T) string {
	t.Helper()
	c, err := net.Dial("udp4", "8.8.8.8:53")
	if err != nil {
		t.Skipf("SKIP: no IPv4 default route: %v", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

// brokenFirewall is iptables that is there but fails to write rules.
type brokenFirewall struct{ unavailableFirewall }

func (brokenFirewall) Apply(context.Context, string, string, runtime.EgressPolicy) error {
	return errors.New("iptables-restore: exit status 1: line 3 failed")
}
func (brokenFirewall) Check(context.Context) error { return nil }

// TestEgressLaunchWhenRulesFail: rules that cannot be written fail the
// launch before any container exists (never a workbench without the rules
// the host could enforce); a host that cannot enforce rules at all still
// launches, and says so.
func TestEgressLaunchWhenRulesFail(t *testing.T) {
	p, cli := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	admin := tokenFor(t, p, "root", "admin")

	p.srv.Manager.UseFirewall(brokenFirewall{})
	id := isoLaunch(t, p, alice, "broken")
	wb := waitState(t, p, alice, id, "failed")
	if reason, _ := wb["reason"].(string); !strings.Contains(reason, "egress policy") || !strings.Contains(reason, "line 3 failed") {
		t.Errorf("failed launch reason %q does not name the egress rules", reason)
	}
	cs, err := cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", runtime.LabelID+"="+id))})
	if err != nil || len(cs) != 0 {
		t.Errorf("containers of the failed launch: %d (%v), want none: none may run without its egress rules", len(cs), err)
	}

	p.srv.Manager.UseFirewall(unavailableFirewall{})
	id = isoLaunch(t, p, alice, "unenforced")
	waitState(t, p, alice, id, "running")
	if code, st := p.api("GET", "/api/v1/admin/egress", admin, ""); code != 200 || st["enforced"] != false || !strings.Contains(st["problem"].(string), "not enforced") {
		t.Errorf("status on a host without iptables: %d %v", code, st)
	}
}
