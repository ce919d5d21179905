package kube

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"workbench/orchestrator/runtime"
)

// historyMax bounds the die events kept for LastExit (as the Docker
// engine keeps its recent events in memory).
const historyMax = 10000

// podWatch is one informer over the namespace's workbench Pods. It turns
// their container state changes into start/die/destroy events for the
// subscribers of Events, keeps the die events for LastExit, and the last
// state of each Pod for Stop's tombstone.
type podWatch struct {
	cancel context.CancelFunc

	mu      sync.Mutex
	pods    map[string]*corev1.Pod // name → last state seen
	subs    map[*subscriber]struct{}
	history []runtime.Event
}

type subscriber struct {
	installID string
	events    chan runtime.Event
	errs      chan error
}

// ensureWatch starts the informer once and waits for its first sync.
func (r *Runtime) ensureWatch(ctx context.Context) (*podWatch, error) {
	r.mu.Lock()
	if r.watch != nil {
		w := r.watch
		r.mu.Unlock()
		return w, nil
	}
	wctx, cancel := context.WithCancel(context.Background())
	w := &podWatch{cancel: cancel, pods: map[string]*corev1.Pod{}, subs: map[*subscriber]struct{}{}}
	r.watch = w
	r.mu.Unlock()
	f := informers.NewSharedInformerFactoryWithOptions(r.cli, 0, informers.WithNamespace(r.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labelManaged + "=" + managedBy + "," + labelRole + "=" + roleWorkbench
		}))
	inf := f.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.update(nil, asPod(obj)) },
		UpdateFunc: func(old, obj any) { w.update(asPod(old), asPod(obj)) },
		DeleteFunc: func(obj any) { w.deleted(asPod(obj)) },
	})
	if err != nil {
		return nil, err
	}
	f.Start(wctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return w, errors.New("the pod watch did not sync")
	}
	return w, nil
}

func asPod(obj any) *corev1.Pod {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o
	case cache.DeletedFinalStateUnknown:
		p, _ := o.Obj.(*corev1.Pod)
		return p
	}
	return nil
}

func (w *podWatch) stop() {
	w.cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.subs {
		close(s.events)
		close(s.errs)
		delete(w.subs, s)
	}
}

// update compares a Pod's container state with the last seen and emits
// start (at the container's startedAt) and die (at its finishedAt).
func (w *podWatch) update(old, p *corev1.Pod) {
	if p == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if prev, ok := w.pods[p.Name]; ok {
		old = prev
	}
	w.pods[p.Name] = p
	was, now := runtime.ContainerInfo{}, infoFromPod(p)
	if old != nil {
		was = infoFromPod(old)
	}
	switch {
	case now.Running && (!was.Running || !now.StartedAt.Equal(was.StartedAt)):
		w.emit(now, runtime.ActionStart, now.StartedAt)
	case now.State == "exited" && was.State != "exited" && old != nil:
		w.emit(now, runtime.ActionDie, now.FinishedAt)
	}
}

// deleted emits die (if it was running: deleted under it) and destroy.
func (w *podWatch) deleted(p *corev1.Pod) {
	if p == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if prev, ok := w.pods[p.Name]; ok {
		p = prev
	}
	delete(w.pods, p.Name)
	info := infoFromPod(p)
	now := time.Now().UTC()
	if info.Running {
		info.Running, info.FinishedAt = false, now
		w.emit(info, runtime.ActionDie, now)
	}
	w.emit(info, runtime.ActionDestroy, now)
}

// last is the latest state seen of a Pod (nil: none).
func (w *podWatch) last(name string) *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.pods[name]; ok {
		return p.DeepCopy()
	}
	return nil
}

// emit sends an event to the install's subscribers; one that falls behind
// gets its stream ended with an error (the manager then reconciles and
// subscribes again), as the Docker engine drops a slow consumer. Callers
// hold w.mu.
func (w *podWatch) emit(info runtime.ContainerInfo, action string, at time.Time) {
	if at.IsZero() {
		at = time.Now().UTC()
	}
	ev := runtime.Event{ContainerID: info.ID, WorkbenchID: info.Labels[runtime.LabelID], Action: action,
		ExitCode: info.ExitCode, Labels: maps.Clone(info.Labels), Time: at}
	if action == runtime.ActionDie {
		w.history = append(w.history, ev)
		if len(w.history) > historyMax {
			w.history = w.history[len(w.history)-historyMax:]
		}
	}
	for s := range w.subs {
		if s.installID != info.Labels[runtime.LabelInstall] {
			continue
		}
		select {
		case s.events <- ev:
		default:
			s.errs <- errors.New("kube: event subscriber fell behind")
			close(s.events)
			close(s.errs)
			delete(w.subs, s)
		}
	}
}

// Events streams the install's start/die/destroy events until ctx ends.
func (r *Runtime) Events(ctx context.Context, installID string) (<-chan runtime.Event, <-chan error) {
	s := &subscriber{installID: installID, events: make(chan runtime.Event, 1024), errs: make(chan error, 1)}
	w, err := r.ensureWatch(ctx)
	if err != nil {
		s.errs <- apiErr("watch pods", err)
		close(s.events)
		close(s.errs)
		return s.events, s.errs
	}
	w.mu.Lock()
	w.subs[s] = struct{}{}
	w.mu.Unlock()
	go func() {
		<-ctx.Done()
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.subs[s]; ok {
			delete(w.subs, s)
			close(s.events)
			close(s.errs)
		}
	}()
	return s.events, s.errs
}

// LastExit finds the latest die event of the workbench's Pod seen by this
// process's watch since since (less a second). A Pod that ended while no
// portal watched is not found, and the caller falls back to its heartbeat,
// as after a Docker engine restart.
func (r *Runtime) LastExit(ctx context.Context, installID, workbenchID string, since time.Time) (time.Time, bool, error) {
	w, err := r.ensureWatch(ctx)
	if err != nil {
		return time.Time{}, false, apiErr("watch pods", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var at time.Time
	found := false
	from := since.Add(-time.Second)
	for _, ev := range w.history {
		if ev.WorkbenchID == workbenchID && ev.Labels[runtime.LabelInstall] == installID && !ev.Time.Before(from) && !ev.Time.Before(at) {
			at, found = ev.Time, true
		}
	}
	return at.UTC(), found, nil
}

// StopAsked is false on Kubernetes: the Pod watch keeps no record of who
// ended a container (a Pod deleted outside the portal is gone, not
// exited, and reads as vanished).
func (r *Runtime) StopAsked(context.Context, string, string, time.Time, time.Time) (bool, error) {
	return false, nil
}
