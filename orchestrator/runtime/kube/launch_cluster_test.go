package kube_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// TestKubeLaunchMakesHardenedPod: a launch through the manager makes a Pod
// with the flavor's requests = limits and one nvidia.com/gpu, the Docker
// path's hardening, the user's home claim and the install's policies; a
// stop deletes the Pod and keeps the claim; a start makes the Pod again.
func TestKubeLaunchMakesHardenedPod(t *testing.T) {
	r := newKubeRig(t, 1, 8)
	wb := r.waitState(r.launch("one").ID, models.StateRunning)
	pod, err := r.pod(wb)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodRunning {
		t.Fatalf("pod %s on node %q is %s, want running on a node", pod.Name, pod.Spec.NodeName, pod.Status.Phase)
	}
	c := pod.Spec.Containers[0]
	want := corev1.ResourceList{"nvidia.com/gpu": resourceQ("1"), corev1.ResourceCPU: resourceQ(r.flavor.CPUMilli.String()),
		corev1.ResourceMemory: resourceQ(formatMiB(r.flavor.MemoryMiB))}
	for name, q := range want {
		if lim, req := c.Resources.Limits[name], c.Resources.Requests[name]; lim.Cmp(q) != 0 || req.Cmp(q) != 0 {
			t.Errorf("%s: limit %s request %s, want both %s", name, lim.String(), req.String(), q.String())
		}
	}
	sc, psc := c.SecurityContext, pod.Spec.SecurityContext
	switch {
	case sc == nil || psc == nil:
		t.Fatal("no securityContext")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("privilege escalation allowed")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}):
		t.Errorf("capabilities %+v, want ALL dropped", sc.Capabilities)
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 1000:
		t.Errorf("runs as %v (non-root %v), want 1000, non-root", sc.RunAsUser, sc.RunAsNonRoot)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("seccomp %+v, want RuntimeDefault", sc.SeccompProfile)
	case sc.Privileged == nil || *sc.Privileged:
		t.Error("privileged")
	case psc.FSGroup == nil || *psc.FSGroup != 1000:
		t.Errorf("fsGroup %v, want 1000 (the home is the user's)", psc.FSGroup)
	case pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken:
		t.Error("the workbench gets an API token")
	case pod.Spec.RestartPolicy != corev1.RestartPolicyNever:
		t.Errorf("restart policy %s", pod.Spec.RestartPolicy)
	}
	if pod.Labels[runtime.LabelID] != wb.ID || pod.Labels[runtime.LabelInstall] != r.installID {
		t.Errorf("pod labels %v lack the workbench and install ids", pod.Labels)
	}
	// The home claim, mounted at the home path.
	claim := ""
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim == "" {
		t.Fatal("no home claim mounted")
	}
	if _, err := r.c.Client.CoreV1().PersistentVolumeClaims(r.c.Namespace).Get(r.ctx, claim, metav1.GetOptions{}); err != nil {
		t.Fatalf("home claim: %v", err)
	}
	// Ingress only from the portal; egress by the policy (internet: the
	// private ranges refused).
	nps, err := r.c.Client.NetworkingV1().NetworkPolicies(r.c.Namespace).List(r.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ingress, egress bool
	for _, np := range nps.Items {
		for _, rule := range np.Spec.Ingress {
			ingress = ingress || (len(rule.From) == 1 && rule.From[0].PodSelector != nil && rule.From[0].PodSelector.MatchLabels["app.kubernetes.io/name"] == "workbench")
		}
		for _, rule := range np.Spec.Egress {
			for _, to := range rule.To {
				egress = egress || (to.IPBlock != nil && to.IPBlock.CIDR == "0.0.0.0/0" && slices.Contains(to.IPBlock.Except, "169.254.0.0/16"))
			}
		}
		if np.Spec.PodSelector.MatchLabels[runtime.LabelInstall] != r.installID {
			t.Errorf("policy %s selects %v, not this install's pods", np.Name, np.Spec.PodSelector.MatchLabels)
		}
	}
	if !ingress || !egress {
		t.Fatalf("policies %+v: ingress from the portal %v, internet egress without private ranges %v", nps.Items, ingress, egress)
	}

	// Stop: the Pod goes, the claim stays, the GPU is free.
	if err := r.m.Stop(r.ctx, wb.ID, "test"); err != nil {
		t.Fatal(err)
	}
	r.waitState(wb.ID, models.StateStopped)
	if _, err := r.pod(wb); !apierrors.IsNotFound(err) {
		t.Fatalf("pod after stop: %v, want gone", err)
	}
	if _, err := r.c.Client.CoreV1().PersistentVolumeClaims(r.c.Namespace).Get(r.ctx, claim, metav1.GetOptions{}); err != nil {
		t.Fatalf("home claim after stop: %v", err)
	}
	// Start: a Pod again, same name, running.
	if err := r.m.Start(r.ctx, wb.ID, r.user); err != nil {
		t.Fatal(err)
	}
	wb = r.waitState(wb.ID, models.StateRunning)
	if pod2, err := r.pod(wb); err != nil || pod2.UID == pod.UID {
		t.Fatalf("pod after start: %v (same object %v)", err, err == nil && pod2.UID == pod.UID)
	}
}
