package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"workbench/orchestrator/runtime"
)

func testRuntime(t *testing.T) *Runtime {
	t.Helper()
	r, err := New(nil, nil, Config{Namespace: "wb"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func testSpec() runtime.Spec {
	return runtime.Spec{WorkbenchID: "abc", Owner: "alice_x", InstallID: "Ab_9-x", Name: "wb-Ab_9-x-abc", Image: "img:1",
		Cmd: []string{"jupyter", "lab"}, User: "1000", HomeVolume: "wb-home-Ab_9-x-alice_x", HomePath: "/home/jovyan",
		NanoCPUs: 2_500_000_000, MemoryBytes: 8 << 30, ShmBytes: 1 << 30, Network: "wb-net-Ab_9-x", Port: 8888,
		ExtraLabels: map[string]string{runtime.LabelID: "forged", "workbench.gpus": "n1:gpu-0,n1:gpu-1"}}
}

// TestPodResources: requests = limits from the flavor; whole GPUs, MIG
// instances and a shared slice each as their extended resource.
func TestPodResources(t *testing.T) {
	r := testRuntime(t)
	for _, tc := range []struct {
		name string
		ids  []string
		env  []string
		want map[string]string
	}{
		{"whole", []string{"n1:gpu-0", "n1:gpu-3"}, nil, map[string]string{"nvidia.com/gpu": "2"}},
		{"mig", []string{"n2:mig-1g.10gb-4"}, nil, map[string]string{"nvidia.com/mig-1g.10gb": "1"}},
		{"slice", []string{"n1:gpu-0"}, []string{"WORKBENCH_GPU_SHARED=1"}, map[string]string{DefaultSharedResource: "1"}},
		{"none", nil, nil, map[string]string{}},
	} {
		s := testSpec()
		s.GPUs.UUIDs, s.Env = tc.ids, tc.env
		pod, err := r.podFor(s)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		res := pod.Spec.Containers[0].Resources
		tc.want["cpu"], tc.want["memory"] = "2500m", "8Gi"
		if len(res.Limits) != len(tc.want) {
			t.Errorf("%s: limits %v, want %v", tc.name, res.Limits, tc.want)
		}
		for name, v := range tc.want {
			q := resource.MustParse(v)
			if l, rq := res.Limits[corev1.ResourceName(name)], res.Requests[corev1.ResourceName(name)]; l.Cmp(q) != 0 || rq.Cmp(q) != 0 {
				t.Errorf("%s: %s limit %s request %s, want %s", tc.name, name, l.String(), rq.String(), v)
			}
		}
	}
	s := testSpec()
	s.GPUs.UUIDs = []string{"GPU-1234"}
	if _, err := r.podFor(s); err == nil || !strings.Contains(err.Error(), "not a Kubernetes node's GPU") {
		t.Fatalf("a Docker GPU UUID: %v", err)
	}
}

// TestPodIdentityAndNames: the identity labels cannot be forged through
// ExtraLabels; names the portal makes Docker-style become valid object
// names and label values, while the annotations keep them verbatim.
func TestPodIdentityAndNames(t *testing.T) {
	r := testRuntime(t)
	pod, err := r.podFor(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	info := infoFromPod(pod)
	if info.Labels[runtime.LabelID] != "abc" || info.Labels["workbench.gpus"] != "n1:gpu-0,n1:gpu-1" || info.Name != "wb-Ab_9-x-abc" {
		t.Fatalf("labels %v name %q", info.Labels, info.Name)
	}
	if !dns1123Label.MatchString(pod.Name) || objectName(pod.Name) != pod.Name || objectName("wb-Ab_9-x-abc") != pod.Name {
		t.Fatalf("pod name %q is not a stable valid name", pod.Name)
	}
	if objectName("wb-Ab_9-x-abc") == objectName("wb-ab-9-x-abc") {
		t.Fatal("two portal names share an object name")
	}
	for k, v := range pod.Labels {
		if !labelValueRe.MatchString(v) || len(v) > 63 {
			t.Errorf("label %s=%q is not a valid value", k, v)
		}
	}
	if info.State != "created" || info.Running {
		t.Fatalf("a gated pod is %q running=%v, want created", info.State, info.Running)
	}
	if len(pod.Spec.SchedulingGates) != 1 {
		t.Fatalf("gates %v: a created pod must wait for Start", pod.Spec.SchedulingGates)
	}
	mounts := pod.Spec.Containers[0].VolumeMounts
	if len(mounts) != 2 || mounts[0].MountPath != "/home/jovyan" || mounts[1].MountPath != "/dev/shm" {
		t.Fatalf("mounts %+v", mounts)
	}
}

// TestPodRefusesRootAndNames: runAsNonRoot needs a numeric, non-zero uid.
func TestPodRefusesRootAndNames(t *testing.T) {
	r := testRuntime(t)
	for _, u := range []string{"0", "root", "jovyan", ""} {
		s := testSpec()
		s.User = u
		if _, err := r.podFor(s); err == nil {
			t.Errorf("user %q accepted", u)
		}
	}
	s := testSpec()
	s.User = "1000:100"
	pod, err := r.podFor(s)
	if err != nil || *pod.Spec.SecurityContext.RunAsGroup != 100 || *pod.Spec.SecurityContext.FSGroup != 100 {
		t.Fatalf("uid:gid: %v", err)
	}
}

// TestUnitIDs: the inventory's ids parse back to their resources.
func TestUnitIDs(t *testing.T) {
	for id, want := range map[string]string{
		gpuUnitID("node-a.example", 7):         ResourceGPU,
		migUnitID("n", "1g.10gb", 12):          "nvidia.com/mig-1g.10gb",
		migUnitID("n", "3g.40gb+me", 0):        "nvidia.com/mig-3g.40gb+me",
		"n:gpu-x":                              "",
		"GPU-6f1c2d3e-aaaa-bbbb-cccc-ddddeeee": "",
	} {
		u, ok := parseUnitID(id)
		if ok != (want != "") || u.resource != want {
			t.Errorf("%s: %+v %v, want %q", id, u, ok, want)
		}
	}
}
