package kube

import (
	"context"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Logs streams the container's output through the API server (the
// kubelet serves it); a stopped Pod's last lines come from its tombstone.
func (r *Runtime) Logs(ctx context.Context, id string, tail int, follow bool) (io.ReadCloser, error) {
	name := objectName(id)
	if _, err := r.pod(ctx, name); err != nil {
		r.mu.Lock()
		ts, ok := r.tombstones[name]
		r.mu.Unlock()
		if ok {
			return io.NopCloser(strings.NewReader(lastLines(ts.logs, tail))), nil
		}
		return nil, err
	}
	opts := &corev1.PodLogOptions{Container: containerName, Follow: follow}
	if tail > 0 {
		opts.TailLines = new(int64(tail))
	}
	rc, err := r.cli.CoreV1().Pods(r.cfg.Namespace).GetLogs(name, opts).Stream(ctx)
	if err != nil {
		return nil, apiErr("logs of pod "+name, err)
	}
	return rc, nil
}

// tailLogs reads the last n lines, "" when the kubelet cannot be reached.
func (r *Runtime) tailLogs(ctx context.Context, name string, n int) string {
	rc, err := r.cli.CoreV1().Pods(r.cfg.Namespace).GetLogs(name, &corev1.PodLogOptions{Container: containerName, TailLines: new(int64(n))}).Stream(ctx)
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
	return string(b)
}

func lastLines(text string, n int) string {
	if n <= 0 {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// pod reads a Pod by container id or name.
func (r *Runtime) pod(ctx context.Context, id string) (*corev1.Pod, error) {
	p, err := r.cli.CoreV1().Pods(r.cfg.Namespace).Get(ctx, objectName(id), metav1.GetOptions{})
	if err != nil {
		return nil, apiErr("read pod "+id, err)
	}
	return p, nil
}
