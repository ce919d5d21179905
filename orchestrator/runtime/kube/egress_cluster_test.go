package kube_test

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"workbench/internal/testsupport/kubecluster"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/kube"
)

// TestKubeEgressPolicyModes: each egress mode becomes the NetworkPolicy it
// promises, written to (and replaced on) the real API server, and Remove
// deletes it.
func TestKubeEgressPolicyModes(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kubernetes test cluster (skipped with -short)")
	}
	c := kubecluster.Shared(t)
	rt, err := kube.New(c.Client, c.Config, kube.Config{Namespace: c.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	fw := rt.Firewall()
	read := func() (cidrs []string, except []string, dns bool, rules int) {
		t.Helper()
		l, err := c.Client.NetworkingV1().NetworkPolicies(c.Namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("policies %+v (%v), want one", l, err)
		}
		np := l.Items[0]
		if np.Spec.PodSelector.MatchLabels[runtime.LabelInstall] != "inst1" || len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != "Egress" {
			t.Fatalf("policy %s selects %v types %v", np.Name, np.Spec.PodSelector.MatchLabels, np.Spec.PolicyTypes)
		}
		for _, r := range np.Spec.Egress {
			for _, to := range r.To {
				if to.IPBlock != nil {
					cidrs = append(cidrs, to.IPBlock.CIDR)
					except = append(except, to.IPBlock.Except...)
				}
				dns = dns || to.NamespaceSelector != nil
			}
		}
		return cidrs, except, dns, len(np.Spec.Egress)
	}
	internet, err := runtime.ParseEgressPolicy("internet", "10.20.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Apply(t.Context(), "inst1", "", internet); err != nil {
		t.Fatal(err)
	}
	cidrs, except, dns, _ := read()
	if !slices.Contains(cidrs, "0.0.0.0/0") || !slices.Contains(cidrs, "10.20.0.0/16") || !slices.Contains(except, "169.254.0.0/16") ||
		!slices.Contains(except, "10.0.0.0/8") || !dns {
		t.Fatalf("internet: to %v except %v dns %v", cidrs, except, dns)
	}
	none, _ := runtime.ParseEgressPolicy("none", "192.168.7.0/24")
	if err := fw.Apply(t.Context(), "inst1", "", none); err != nil {
		t.Fatal(err)
	}
	if cidrs, except, dns, _ := read(); !slices.Equal(cidrs, []string{"192.168.7.0/24"}) || len(except) != 0 || dns {
		t.Fatalf("none: to %v except %v dns %v, want the allow-list only", cidrs, except, dns)
	}
	all, _ := runtime.ParseEgressPolicy("all", "")
	if err := fw.Apply(t.Context(), "inst1", "", all); err != nil {
		t.Fatal(err)
	}
	if cidrs, _, _, rules := read(); len(cidrs) != 0 || rules != 1 {
		t.Fatalf("all: %d rules to %v, want one rule allowing anything", rules, cidrs)
	}
	if err := fw.Remove(t.Context(), "inst1"); err != nil {
		t.Fatal(err)
	}
	if l, _ := c.Client.NetworkingV1().NetworkPolicies(c.Namespace).List(t.Context(), metav1.ListOptions{}); len(l.Items) != 0 {
		t.Fatalf("%d policies left after Remove", len(l.Items))
	}
}
