package kube

import (
	"bytes"
	"context"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// WriteHomeFile writes the preemption notice through the Pod's exec
// subresource (RBAC: pods/exec create): a shell in the workbench's own
// container, as its own user, writes stdin to the file. The Docker path
// copies a tar archive in without running anything; Kubernetes has no
// such API, so an image without /bin/sh gets no notice (the preemption
// still happens at its time; the page says when).
func (r *Runtime) WriteHomeFile(ctx context.Context, containerID, homePath, _, rel string, content []byte) error {
	if r.rest == nil {
		return &UnsupportedError{Op: "writing a file into a workbench", Why: "the runtime has no API server connection for exec"}
	}
	name := objectName(containerID)
	file := path.Join(homePath, rel)
	req := r.cli.CoreV1().RESTClient().Post().Resource("pods").Namespace(r.cfg.Namespace).Name(name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: containerName, Stdin: true, Stdout: true, Stderr: true,
			Command: []string{"/bin/sh", "-c", `mkdir -p "$(dirname "$1")" && cat > "$1"`, "sh", file}}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(r.rest, "POST", req.URL())
	if err != nil {
		return fmt.Errorf("exec in pod %s: %w", name, err)
	}
	var stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: bytes.NewReader(content), Stdout: &stderr, Stderr: &stderr})
	if err != nil {
		return apiErr(fmt.Sprintf("write %s in pod %s (%s)", rel, name, bytes.TrimSpace(stderr.Bytes())), err)
	}
	return nil
}
