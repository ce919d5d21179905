// Package memruntime is a container engine in memory for tests: it
// implements runtime.Runtime with records instead of processes, so the
// lifecycle manager's logic (launch, stop, reconcile, cull) can be tested in
// milliseconds, in parallel, where no Docker engine runs.
//
// Containers move through created → running → exited as the engine's do;
// their times come from an injectable clock; start, die and destroy events
// reach every Events subscriber. Pulls report progress and fail on demand,
// and any method can be made to fail with Fail. Nothing here runs a
// process: a test that needs Jupyter to answer serves it itself (httptest)
// and points Endpoint at it with SetEndpoint.
package memruntime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"workbench/orchestrator/runtime"
)

// Runtime is the in-memory engine. The zero value is not usable; call New.
type Runtime struct {
	mu         sync.Mutex
	clock      func() time.Time
	containers map[string]*container        // by id
	images     map[string]int64             // ref → size
	imageLabel map[string]map[string]string // ref → labels of a committed image
	imageMade  map[string]time.Time         // ref → when it was committed
	pulls      map[string]pullPlan
	volumes    map[string]*volume
	networks   map[string]bool
	failures   map[string]failure
	calls      map[string]int
	subs       map[*subscriber]struct{}
	history    []runtime.Event // every event, for LastExit
	seq        int
	nvidia     bool
	endpoint   func(runtime.ContainerInfo, string) (string, int)
	stopHook   func(ctx context.Context, id string)
	commitHook func(ctx context.Context, id string)
	stopCode   int
	hostCPUs   int   // 0: the engine does not say (SetHost)
	hostMemory int64 // bytes; 0: the engine does not say
}

type container struct {
	info runtime.ContainerInfo
	gpus runtime.GPURequest // what Create was asked to pass (device request or simulated)
	logs string
	uid  int
	gid  int
	// files are what WriteHomeFile wrote in its home, by relative path.
	files map[string][]byte
}

type volume struct {
	labels  map[string]string
	bytes   int64
	created time.Time
}

type pullPlan struct {
	steps []runtime.PullProgress
	err   error
}

type failure struct {
	err  error
	once bool
}

type subscriber struct {
	installID string
	events    chan runtime.Event
	errs      chan error
}

// New returns an empty engine whose clock is time.Now.
func New() *Runtime {
	return &Runtime{
		clock:      time.Now,
		containers: map[string]*container{},
		images:     map[string]int64{},
		imageLabel: map[string]map[string]string{},
		imageMade:  map[string]time.Time{},
		pulls:      map[string]pullPlan{},
		volumes:    map[string]*volume{},
		networks:   map[string]bool{},
		failures:   map[string]failure{},
		calls:      map[string]int{},
		subs:       map[*subscriber]struct{}{},
	}
}

var _ runtime.Runtime = (*Runtime)(nil)

// SetClock sets the time containers' StartedAt, FinishedAt, Created and
// events' Time are read from.
func (r *Runtime) SetClock(now func() time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock = now
}

// GPURequest is the GPU request a container was created with: what the
// Docker runtime turns into its device request (runtime.gpuDeviceRequests).
func (r *Runtime) GPURequest(ref string) (runtime.GPURequest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.find(ref)
	if c == nil {
		return runtime.GPURequest{}, false
	}
	return c.gpus, true
}

// SetNVIDIA sets what HasNVIDIA answers.
func (r *Runtime) SetNVIDIA(ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nvidia = ok
}

// SetEndpoint replaces Endpoint's answer (by default the container's IP on
// the network and its LabelPort, as the Docker runtime answers; the IPs
// are made up and reach nothing).
func (r *Runtime) SetEndpoint(fn func(info runtime.ContainerInfo, network string) (string, int)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endpoint = fn
}

// SetStopHook makes Stop call fn (outside the engine's lock) before it
// does anything, so a test can hold a stop in flight.
func (r *Runtime) SetStopHook(fn func(ctx context.Context, id string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopHook = fn
}

// SetCommitHook makes Commit call fn (outside the engine's lock) while
// the container is paused, as `docker commit` pauses a running one when
// asked to (CommitSpec.Pause), so a test can look at it mid-save.
func (r *Runtime) SetCommitHook(fn func(ctx context.Context, id string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commitHook = fn
}

// SetStopExitCode sets the exit code a container stopped by Stop reports
// (0 unless set; Jupyter exits 0 on SIGTERM).
func (r *Runtime) SetStopExitCode(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopCode = code
}

// Fail makes every later call of method (its name in runtime.Runtime, for
// example "Start") return err, until Fail(method, nil).
func (r *Runtime) Fail(method string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		delete(r.failures, method)
		return
	}
	r.failures[method] = failure{err: err}
}

// FailOnce makes the next call of method return err.
func (r *Runtime) FailOnce(method string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures[method] = failure{err: err, once: true}
}

// Calls reports how many times method was called.
func (r *Runtime) Calls(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[method]
}

// enter counts a call and returns the failure injected for it. Callers
// hold r.mu.
func (r *Runtime) enter(method string) error {
	r.calls[method]++
	f, ok := r.failures[method]
	if !ok {
		return nil
	}
	if f.once {
		delete(r.failures, method)
	}
	return f.err
}

func (r *Runtime) now() time.Time { return r.clock().UTC() }

// SetHost sets the host's CPU count and memory the engine reports
// (HostCPUs, HostMemoryBytes); zero: it does not say.
func (r *Runtime) SetHost(cpus int, memoryBytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hostCPUs, r.hostMemory = cpus, memoryBytes
}

// HostCPUs is the host's CPU count set by SetHost (0: unknown).
func (r *Runtime) HostCPUs(context.Context) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hostCPUs
}

// HostMemoryBytes is the host's memory set by SetHost (0: unknown).
func (r *Runtime) HostMemoryBytes(context.Context) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hostMemory
}

// AddImage makes ref present locally with size bytes.
func (r *Runtime) AddImage(ref string, size int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.images[ref] = size
}

// PlanPull sets what pulling ref does: report steps in order, then fail
// with err, or (err nil) make ref present. A ref with no plan pulls at once
// with progress 0 and 100.
func (r *Runtime) PlanPull(ref string, steps []runtime.PullProgress, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pulls[ref] = pullPlan{steps: steps, err: err}
}

// AddContainer puts a container into the engine as it is given (use it to
// stage a container a previous portal left behind). An empty ID is made up.
func (r *Runtime) AddContainer(info runtime.ContainerInfo) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if info.ID == "" {
		r.seq++
		info.ID = fmt.Sprintf("mem-%06d", r.seq)
	}
	if info.Labels == nil {
		info.Labels = map[string]string{}
	}
	if info.IPs == nil {
		info.IPs = map[string]string{}
	}
	if info.Created.IsZero() {
		info.Created = r.now()
	}
	r.containers[info.ID] = &container{info: info}
	return info.ID
}

// Container returns a copy of a container's record.
func (r *Runtime) Container(ref string) (runtime.ContainerInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.find(ref)
	if c == nil {
		return runtime.ContainerInfo{}, false
	}
	return copyInfo(c.info), true
}

// Exit makes a running container die with code, as a crash, an OOM kill
// (oom) or a kill from outside the portal does, and sends its die event.
func (r *Runtime) Exit(ref string, code int, oom bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.find(ref)
	if c == nil {
		return runtime.ErrNotFound
	}
	if !c.info.Running {
		return fmt.Errorf("memruntime: container %s is not running", ref)
	}
	r.die(c, code)
	c.info.OOMKilled = oom
	return nil
}

// Vanish deletes a container behind the portal's back; destroyEvent says
// whether subscribers hear of it (an engine restart loses events).
func (r *Runtime) Vanish(ref string, destroyEvent bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.find(ref)
	if c == nil {
		return
	}
	delete(r.containers, c.info.ID)
	if destroyEvent {
		r.emit(c, runtime.ActionDestroy)
	}
}

// Rename gives a container another name, as `docker rename` does behind
// the portal's back; its id and labels stay.
func (r *Runtime) Rename(ref, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.find(ref); c != nil {
		c.info.Name = "/" + strings.TrimPrefix(name, "/")
	}
}

// SetLogs sets what Logs returns for a container.
func (r *Runtime) SetLogs(ref, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.find(ref); c != nil {
		c.logs = text
	}
}

// SetVolumeSize sets what VolumeSizes reports for a volume.
func (r *Runtime) SetVolumeSize(name string, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.volumes[name]; ok {
		v.bytes = bytes
	}
}

// HasVolume reports whether a volume exists.
func (r *Runtime) HasVolume(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.volumes[name]
	return ok
}

// CloseEvents ends every Events stream with err, as a dropped engine
// connection does.
func (r *Runtime) CloseEvents(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.subs {
		s.errs <- err
		close(s.events)
		close(s.errs)
		delete(r.subs, s)
	}
}

func (r *Runtime) find(ref string) *container {
	if c, ok := r.containers[ref]; ok {
		return c
	}
	for _, c := range r.containers {
		if strings.TrimPrefix(c.info.Name, "/") == strings.TrimPrefix(ref, "/") {
			return c
		}
	}
	return nil
}

func copyInfo(in runtime.ContainerInfo) runtime.ContainerInfo {
	out := in
	out.Labels = maps.Clone(in.Labels)
	out.IPs = maps.Clone(in.IPs)
	out.Env = append([]string(nil), in.Env...)
	return out
}

// die moves a running container to exited. Callers hold r.mu.
func (r *Runtime) die(c *container, code int) {
	c.info.Running, c.info.State, c.info.ExitCode, c.info.FinishedAt = false, "exited", code, r.now()
	for net := range c.info.IPs {
		c.info.IPs[net] = "" // still joined, no address while stopped
	}
	r.emit(c, runtime.ActionDie)
}

// emit sends an event to the subscribers of the container's install. A
// subscriber whose buffer is full has its stream ended with an error, as a
// real engine drops a consumer that falls behind. Callers hold r.mu.
func (r *Runtime) emit(c *container, action string) {
	ev := runtime.Event{ContainerID: c.info.ID, WorkbenchID: c.info.Labels[runtime.LabelID], Action: action,
		ExitCode: c.info.ExitCode, Labels: maps.Clone(c.info.Labels), Time: r.now()}
	r.history = append(r.history, ev)
	for s := range r.subs {
		if s.installID != c.info.Labels[runtime.LabelInstall] {
			continue
		}
		select {
		case s.events <- ev:
		default:
			s.errs <- errors.New("memruntime: event subscriber fell behind")
			close(s.events)
			close(s.errs)
			delete(r.subs, s)
		}
	}
}
