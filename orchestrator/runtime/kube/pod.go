package kube

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"workbench/orchestrator/runtime"
)

// envShared is set (to 1) in the environment of a workbench holding a
// slice of a shared GPU (orchestrator.EnvWorkbenchShared; the runtime
// cannot import the orchestrator).
const envShared = "WORKBENCH_GPU_SHARED"

// envUnits lists, in the Pod, the portal's unit ids the Pod was given (the
// device plugin picks the devices; this is the portal's bookkeeping).
const envUnits = "WORKBENCH_GPU_UNITS"

// podFor builds the workbench Pod for a Spec. It is pure, so the
// hardening and the resources are tested without a cluster.
func (r *Runtime) podFor(s runtime.Spec) (*corev1.Pod, error) {
	if err := validate(s); err != nil {
		return nil, err
	}
	uid, gid, err := numericUser(s.User)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{runtime.LabelKind: runtime.KindWorkbench}
	maps.Copy(labels, s.ExtraLabels)
	// Identity labels last, as on Docker: ExtraLabels cannot fake them.
	labels[runtime.LabelID] = s.WorkbenchID
	labels[runtime.LabelOwner] = s.Owner
	labels[runtime.LabelInstall] = s.InstallID
	labels[runtime.LabelPort] = strconv.Itoa(s.Port)

	res, gpuEnv, err := r.resources(s)
	if err != nil {
		return nil, err
	}
	env := make([]corev1.EnvVar, 0, len(s.Env)+len(gpuEnv))
	for _, kv := range append(append([]string(nil), s.Env...), gpuEnv...) {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, corev1.EnvVar{Name: k, Value: v})
	}
	meta := r.objectMeta(s.Name, roleWorkbench, labels)
	meta.Annotations[annImage] = s.Image
	meta.Annotations[annNetwork] = s.Network
	meta.Annotations[annGPUs] = strings.Join(s.GPUs.UUIDs, ",")

	caps := make([]corev1.Capability, 0, len(s.CapAdd))
	for _, c := range s.CapAdd {
		caps = append(caps, corev1.Capability(strings.TrimPrefix(strings.ToUpper(c), "CAP_")))
	}
	c := corev1.Container{
		Name:  containerName,
		Image: s.Image,
		// Cmd replaces the image's CMD, as on Docker; the ENTRYPOINT stays.
		Args:      s.Cmd,
		Env:       env,
		Resources: res,
		Ports:     []corev1.ContainerPort{{Name: "jupyter", ContainerPort: int32(s.Port), Protocol: corev1.ProtocolTCP}},
		SecurityContext: &corev1.SecurityContext{
			Privileged:               new(false),
			AllowPrivilegeEscalation: new(false), // no-new-privileges
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: caps},
			RunAsNonRoot:             new(true),
			RunAsUser:                new(int64(uid)),
			RunAsGroup:               new(int64(gid)),
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			// Writable like the Docker container: pip install --user and
			// /tmp must work.
			ReadOnlyRootFilesystem: new(false),
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	pod := &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{
		Containers: []corev1.Container{c},
		// The lifecycle manager owns restarts, as on Docker.
		RestartPolicy: corev1.RestartPolicyNever,
		// Workbenches talk to nothing in the cluster's API.
		AutomountServiceAccountToken: new(false),
		EnableServiceLinks:           new(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: new(true),
			RunAsUser:    new(int64(uid)),
			RunAsGroup:   new(int64(gid)),
			// The home PVC is made group-owned by the user's gid: the
			// Kubernetes way of PrepareHome (docs/kubernetes.md).
			FSGroup:             new(int64(gid)),
			FSGroupChangePolicy: new(corev1.FSGroupChangeOnRootMismatch),
			SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		SchedulingGates: []corev1.PodSchedulingGate{{Name: gateStart}},
		NodeSelector:    maps.Clone(r.cfg.NodeLabels),
	}}
	if s.HomeVolume != "" {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "home", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: objectName(s.HomeVolume)}}})
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: "home", MountPath: s.HomePath})
	}
	if s.ShmBytes > 0 {
		// Docker's --shm-size: a memory-backed emptyDir at /dev/shm,
		// counted against the memory limit.
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "shm", VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: resource.NewQuantity(s.ShmBytes, resource.BinarySI)}}})
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: "shm", MountPath: "/dev/shm"})
	}
	return pod, nil
}

// resources turns the flavor and the GPU units into requests = limits
// (the Guaranteed QoS class: nothing is overcommitted) and the GPU
// environment.
func (r *Runtime) resources(s runtime.Spec) (corev1.ResourceRequirements, []string, error) {
	rl := corev1.ResourceList{}
	if s.NanoCPUs > 0 {
		rl[corev1.ResourceCPU] = *resource.NewMilliQuantity(s.NanoCPUs/1_000_000, resource.DecimalSI)
	}
	if s.MemoryBytes > 0 {
		rl[corev1.ResourceMemory] = *resource.NewQuantity(s.MemoryBytes, resource.BinarySI)
	}
	counts, err := r.gpuResources(s)
	if err != nil {
		return corev1.ResourceRequirements{}, nil, err
	}
	for name, n := range counts {
		rl[corev1.ResourceName(name)] = *resource.NewQuantity(int64(n), resource.DecimalSI)
	}
	var env []string
	if len(counts) == 0 {
		// As on Docker: an image carrying NVIDIA_VISIBLE_DEVICES=all must
		// not get every GPU of a node whose default runtime is nvidia.
		env = append(env, runtime.EnvNVIDIAVisible+"=void")
	} else {
		env = append(env, envUnits+"="+strings.Join(s.GPUs.UUIDs, ","))
	}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}, env, nil
}

// gpuResources counts the extended resources a Spec's units ask for:
// whole GPUs as nvidia.com/gpu, MIG instances as nvidia.com/mig-<profile>,
// a shared slice as SharedResource. The ids are the inventory's
// (inventory.go); simulated GPUs ask for nothing.
func (r *Runtime) gpuResources(s runtime.Spec) (map[string]int, error) {
	out := map[string]int{}
	if s.GPUs.Simulated || len(s.GPUs.UUIDs) == 0 {
		return out, nil
	}
	for _, kv := range s.Env {
		if kv == envShared+"=1" {
			out[r.cfg.SharedResource] = 1
			return out, nil
		}
	}
	for _, id := range s.GPUs.UUIDs {
		u, ok := parseUnitID(id)
		if !ok {
			return nil, fmt.Errorf("GPU %q is not a Kubernetes node's GPU (the pool must come from the cluster: WORKBENCH_RUNTIME=kubernetes)", id)
		}
		out[u.resource]++
	}
	return out, nil
}

// validate refuses what would leave a Pod the reconciler cannot find, as
// the Docker runtime's validateSpec does. The network is only a name here.
func validate(s runtime.Spec) error {
	var errs []error
	for _, f := range []struct{ what, v string }{
		{"workbench id", s.WorkbenchID}, {"owner", s.Owner}, {"install id", s.InstallID},
		{"name", s.Name}, {"image", s.Image},
	} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("%s is required", f.what))
		}
	}
	if s.Port <= 0 || s.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d out of range", s.Port))
	}
	if (s.HomeVolume == "") != (s.HomePath == "") {
		errs = append(errs, errors.New("home volume and home path go together"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid container spec: %w", err)
	}
	return nil
}

// numericUser reads "uid" or "uid:gid". Kubernetes cannot look a user name
// up in the image, and runAsNonRoot refuses uid 0.
func numericUser(u string) (int, int, error) {
	name, group, hasGroup := strings.Cut(u, ":")
	uid, err := strconv.Atoi(name)
	if err != nil || uid < 0 {
		return 0, 0, fmt.Errorf("unable to find user %s: on Kubernetes the run-as user must be a numeric uid such as 1000", u)
	}
	if uid == 0 {
		return 0, 0, errors.New("the image runs as root (uid 0): workbench Pods run as non-root; set Run as user to a numeric uid such as 1000")
	}
	gid := uid
	if hasGroup {
		if gid, err = strconv.Atoi(group); err != nil {
			return 0, 0, fmt.Errorf("group %q of user %q: give a numeric gid", group, u)
		}
	}
	return uid, gid, nil
}
