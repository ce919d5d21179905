package kube

import (
	"context"
	"errors"
	"maps"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"

	"workbench/orchestrator/runtime"
)

// The install's "network" is a NetworkPolicy over its workbench Pods:
// ingress only from the portal's Pods (any TCP port: Jupyter's and the
// extra ports the proxy serves), so workbenches cannot reach each other
// (Docker's icc=false). Egress is a second policy the Firewall writes from
// the admin's egress setting. Both need a CNI that enforces
// NetworkPolicy (Calico, Cilium, …): docs/kubernetes.md.

func ingressPolicyName(network string) string { return objectName(network) + "-ingress" }
func egressPolicyName(installID string) string {
	return objectName("wb-egress-"+installID) + "-egress"
}

// workbenchSelector selects one install's workbench Pods.
func workbenchSelector(installID string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{labelManaged: managedBy, labelRole: roleWorkbench,
		runtime.LabelInstall: labelValue(installID)}}
}

// EnsureNetwork writes the ingress policy of the install (labels carry
// its install id), replacing what is there.
func (r *Runtime) EnsureNetwork(ctx context.Context, name string, labels map[string]string) error {
	install := labels[runtime.LabelInstall]
	meta := r.objectMeta(name, "network", map[string]string{runtime.LabelInstall: install})
	meta.Name = ingressPolicyName(name)
	from := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: maps.Clone(r.cfg.PortalLabels)}}
	if ns := r.cfg.PortalNamespace; ns != "" && ns != r.cfg.Namespace {
		from.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	}
	np := &networkingv1.NetworkPolicy{ObjectMeta: meta, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: workbenchSelector(install),
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{from}}},
	}}
	return r.upsertPolicy(ctx, np)
}

// upsertPolicy creates a policy or brings the existing one's spec to
// np's. Launches call it concurrently: a lost update is retried.
func (r *Runtime) upsertPolicy(ctx context.Context, np *networkingv1.NetworkPolicy) error {
	api := r.cli.NetworkingV1().NetworkPolicies(r.cfg.Namespace)
	_, err := api.Create(ctx, np, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return apiErr("create network policy "+np.Name, err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := api.Get(ctx, np.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(cur.Spec, np.Spec) && equality.Semantic.DeepEqual(cur.Labels, np.Labels) {
			return nil // as wanted: no write
		}
		cur.Spec, cur.Labels, cur.Annotations = np.Spec, np.Labels, np.Annotations
		_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	return apiErr("update network policy "+np.Name, err)
}

// NetworkBridge names the ingress policy as the "bridge" the egress
// policy is enforced at; ErrNotFound before EnsureNetwork.
func (r *Runtime) NetworkBridge(ctx context.Context, name string) (string, error) {
	np, err := r.cli.NetworkingV1().NetworkPolicies(r.cfg.Namespace).Get(ctx, ingressPolicyName(name), metav1.GetOptions{})
	if err != nil {
		return "", apiErr("read network policy", err)
	}
	return "networkpolicy/" + np.Name, nil
}

// Firewall enforces the egress policy as a NetworkPolicy: it is the
// orchestrator.Firewall of a Kubernetes portal (Manager.UseFirewall).
type Firewall struct{ r *Runtime }

// Firewall returns the runtime's egress enforcer.
func (r *Runtime) Firewall() *Firewall { return &Firewall{r: r} }

// Apply writes the install's egress policy for p:
//   - internet: anywhere but the non-internet ranges (private, link-local
//     with the cloud metadata address, …), plus the allow-list, plus DNS
//     to the cluster's DNS (names must resolve);
//   - none: only the allow-list;
//   - all: anything.
func (f *Firewall) Apply(ctx context.Context, installID, _ string, p runtime.EgressPolicy) error {
	var rules []networkingv1.NetworkPolicyEgressRule
	allow := func(cidr string, except []string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
	}
	var peers []networkingv1.NetworkPolicyPeer
	for _, a := range p.AllowStrings() {
		peers = append(peers, allow(a, nil))
	}
	switch p.Mode {
	case runtime.EgressAll:
		rules = []networkingv1.NetworkPolicyEgressRule{{}}
	case runtime.EgressInternet:
		peers = append(peers, allow("0.0.0.0/0", runtime.NonInternetRanges()))
		rules = append(rules, networkingv1.NetworkPolicyEgressRule{To: peers}, dnsRule())
	default: // none
		if len(peers) > 0 {
			rules = append(rules, networkingv1.NetworkPolicyEgressRule{To: peers})
		}
	}
	meta := f.r.objectMeta("wb-egress-"+installID, "network", map[string]string{runtime.LabelInstall: installID})
	meta.Name = egressPolicyName(installID)
	np := &networkingv1.NetworkPolicy{ObjectMeta: meta, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: workbenchSelector(installID),
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		Egress:      rules,
	}}
	return f.r.upsertPolicy(ctx, np)
}

// dnsRule lets Pods ask the cluster DNS (kube-system, port 53).
func dnsRule() networkingv1.NetworkPolicyEgressRule {
	port := intstr.FromInt32(53)
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &port}, {Protocol: &tcp, Port: &port}},
	}
}

// Remove deletes the install's egress policy.
func (f *Firewall) Remove(ctx context.Context, installID string) error {
	err := f.r.cli.NetworkingV1().NetworkPolicies(f.r.cfg.Namespace).Delete(ctx, egressPolicyName(installID), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return apiErr("delete egress policy", err)
}

// Check has nothing to check: whether the CNI enforces NetworkPolicy is
// not visible through the API (docs/kubernetes.md says which do).
func (f *Firewall) Check(context.Context) error { return nil }

// ConnectNetwork: a Pod is never off the install's "network" (a policy
// selecting it by label), so there is nothing to reconnect.
func (r *Runtime) ConnectNetwork(context.Context, string, string) error {
	return errors.ErrUnsupported
}
