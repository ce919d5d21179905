package kube

import (
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"workbench/orchestrator/runtime"
)

// StatePending: the gate is lifted but the Pod is not running yet — the
// scheduler found no node (ContainerInfo.Error says why), or the node is
// pulling the image.
const StatePending = runtime.StatePending

// infoFromPod maps a Pod to the engine-neutral container view: the
// container's running/terminated state with the kubelet's startedAt and
// finishedAt, the Pod IP under the Spec's network name.
func infoFromPod(p *corev1.Pod) runtime.ContainerInfo {
	info := runtime.ContainerInfo{ID: p.Name, Name: p.Annotations[annName], Image: p.Annotations[annImage],
		Labels: portalLabels(p.ObjectMeta), Created: p.CreationTimestamp.UTC(), IPs: map[string]string{}, State: "created"}
	if info.Name == "" {
		info.Name = p.Name
	}
	if len(p.Spec.Containers) > 0 {
		c := p.Spec.Containers[0]
		if info.Image == "" {
			info.Image = c.Image
		}
		for _, e := range c.Env {
			info.Env = append(info.Env, e.Name+"="+e.Value)
		}
	}
	if ids := p.Annotations[annGPUs]; ids != "" {
		// What ContainerInfo.GPUs reads back (the Docker runtime's env).
		info.Env = append(info.Env, runtime.EnvNVIDIAVisible+"="+ids)
	}
	switch {
	case len(p.Spec.SchedulingGates) > 0:
		return info // created, not started
	case p.Status.Phase == corev1.PodPending:
		info.State = StatePending
		info.Error = pendingReason(p)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != containerName {
			continue
		}
		switch st := cs.State; {
		case st.Running != nil:
			info.State, info.Running, info.StartedAt = "running", true, st.Running.StartedAt.UTC()
		case st.Terminated != nil:
			t := st.Terminated
			info.State, info.StartedAt, info.FinishedAt = "exited", t.StartedAt.UTC(), t.FinishedAt.UTC()
			info.ExitCode, info.OOMKilled = int(t.ExitCode), t.Reason == "OOMKilled"
			info.Error = t.Message
		case st.Waiting != nil:
			info.State = StatePending
			if w := st.Waiting; w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				info.Error = strings.TrimSuffix(w.Reason+": "+w.Message, ": ") // ErrImagePull: …
			}
		}
	}
	if info.Running && p.Status.PodIP != "" {
		info.IPs[p.Annotations[annNetwork]] = p.Status.PodIP
	}
	if terminal(p) && info.State != "exited" {
		// Failed without a container status (evicted, node lost).
		info.State, info.Running, info.Error = "exited", false, p.Status.Reason+": "+p.Status.Message
		if info.FinishedAt.IsZero() {
			info.FinishedAt = p.CreationTimestamp.UTC()
			for _, c := range p.Status.Conditions {
				if c.LastTransitionTime.After(info.FinishedAt) {
					info.FinishedAt = c.LastTransitionTime.UTC()
				}
			}
		}
		info.ExitCode = 137
	}
	return info
}

// pendingReason is the scheduler's word on an unscheduled Pod: the
// PodScheduled condition's message ("0/3 nodes are available: 3
// Insufficient nvidia.com/gpu.").
func pendingReason(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			if c.Message != "" {
				return c.Message
			}
			return c.Reason
		}
	}
	return ""
}

// Endpoint is the Pod IP and Jupyter's port: the portal runs in the
// cluster and reaches Pods directly (the NetworkPolicy lets only it in).
func (r *Runtime) Endpoint(info runtime.ContainerInfo, network string) (string, int) {
	if r.cfg.Endpoint != nil {
		return r.cfg.Endpoint(info, network)
	}
	host := info.IPs[network]
	port, err := strconv.Atoi(info.Labels[runtime.LabelPort])
	if host == "" || err != nil || port <= 0 {
		return "", 0
	}
	return host, port
}

func copyInfo(in runtime.ContainerInfo) runtime.ContainerInfo {
	out := in
	out.Labels = maps.Clone(in.Labels)
	out.IPs = maps.Clone(in.IPs)
	out.Env = append([]string(nil), in.Env...)
	return out
}
