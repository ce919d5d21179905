package memruntime

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"workbench/orchestrator/runtime"
)

// The runtime.Runtime methods. Each counts its call, honours an injected
// failure and a cancelled context (as the Docker client does), then acts on
// the records.

func (r *Runtime) begin(ctx context.Context, method string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.enter(method)
}

func (r *Runtime) Ping(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.begin(ctx, "Ping")
}

func (r *Runtime) HasNVIDIA(ctx context.Context) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "HasNVIDIA"); err != nil {
		return false, err
	}
	return r.nvidia, nil
}

func (r *Runtime) EnsureImage(ctx context.Context, ref string, progress func(pct int, status string)) error {
	return r.pull(ctx, "EnsureImage", ref, func(p runtime.PullProgress) {
		if progress != nil {
			progress(p.Percent, p.Status)
		}
	})
}

func (r *Runtime) PullImage(ctx context.Context, ref string, progress func(runtime.PullProgress)) error {
	return r.pull(ctx, "PullImage", ref, func(p runtime.PullProgress) {
		if progress != nil {
			progress(p)
		}
	})
}

// pull reports the planned steps outside the lock (progress callbacks may
// call back into the engine), then fails or makes ref present.
func (r *Runtime) pull(ctx context.Context, method, ref string, progress func(runtime.PullProgress)) error {
	r.mu.Lock()
	if err := r.begin(ctx, method); err != nil {
		r.mu.Unlock()
		return err
	}
	if _, ok := r.images[ref]; ok {
		r.mu.Unlock()
		return nil
	}
	plan, ok := r.pulls[ref]
	if !ok {
		plan.steps = []runtime.PullProgress{{Percent: 0, Status: "Pulling"}, {Percent: 100, Status: "Downloaded", DoneBytes: 1 << 20, TotalBytes: 1 << 20}}
	}
	r.mu.Unlock()
	for _, s := range plan.steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		progress(s)
	}
	if plan.err != nil {
		return plan.err
	}
	var size int64 = 1 << 20
	if n := len(plan.steps); n > 0 && plan.steps[n-1].TotalBytes > 0 {
		size = plan.steps[n-1].TotalBytes
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.images[ref] = size
	return nil
}

func (r *Runtime) ImageSize(ctx context.Context, ref string) (bool, int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "ImageSize"); err != nil {
		return false, 0, err
	}
	size, ok := r.images[ref]
	return ok, size, nil
}

func (r *Runtime) EnsureVolume(ctx context.Context, name string, labels map[string]string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "EnsureVolume"); err != nil {
		return false, err
	}
	if _, ok := r.volumes[name]; ok {
		return false, nil
	}
	r.volumes[name] = &volume{labels: maps.Clone(labels), created: r.now()}
	return true, nil
}

func (r *Runtime) CreateVolume(ctx context.Context, name string, labels map[string]string) (runtime.VolumeInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "CreateVolume"); err != nil {
		return runtime.VolumeInfo{}, err
	}
	v, ok := r.volumes[name]
	if !ok {
		v = &volume{labels: maps.Clone(labels), created: r.now()}
		r.volumes[name] = v
	}
	return runtime.VolumeInfo{Name: name, Labels: maps.Clone(v.labels), CreatedAt: v.created}, nil
}

func (r *Runtime) InspectVolume(ctx context.Context, name string) (runtime.VolumeInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "InspectVolume"); err != nil {
		return runtime.VolumeInfo{}, err
	}
	v, ok := r.volumes[name]
	if !ok {
		return runtime.VolumeInfo{}, runtime.ErrNotFound
	}
	return runtime.VolumeInfo{Name: name, Labels: maps.Clone(v.labels), CreatedAt: v.created}, nil
}

// LastExit finds the latest die event of the workbench's container in this
// engine's history, from a second before since on (as the Docker engine's).
func (r *Runtime) LastExit(ctx context.Context, installID, workbenchID string, since time.Time) (time.Time, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "LastExit"); err != nil {
		return time.Time{}, false, err
	}
	var at time.Time
	found := false
	for _, ev := range r.history {
		if ev.Action == runtime.ActionDie && ev.WorkbenchID == workbenchID && ev.Labels[runtime.LabelInstall] == installID &&
			!ev.Time.Before(since.Add(-time.Second)) && !ev.Time.Before(at) {
			at, found = ev.Time, true
		}
	}
	return at, found, nil
}

func (r *Runtime) RemoveVolume(ctx context.Context, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "RemoveVolume"); err != nil {
		return err
	}
	for _, c := range r.containers {
		if c.info.Labels[volumeLabel] == name {
			return fmt.Errorf("memruntime: volume %s is in use by container %s: %w", name, c.info.ID, runtime.ErrConflict)
		}
	}
	delete(r.volumes, name)
	return nil
}

func (r *Runtime) VolumeSizes(ctx context.Context, installID string) ([]runtime.VolumeUsage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "VolumeSizes"); err != nil {
		return nil, err
	}
	var out []runtime.VolumeUsage
	for name, v := range r.volumes {
		if v.labels[runtime.LabelInstall] == installID {
			out = append(out, runtime.VolumeUsage{Name: name, Labels: maps.Clone(v.labels), Bytes: v.bytes, CreatedAt: v.created})
		}
	}
	return out, nil
}

func (r *Runtime) EnsureNetwork(ctx context.Context, name string, _ map[string]string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "EnsureNetwork"); err != nil {
		return err
	}
	r.networks[name] = true
	return nil
}

func (r *Runtime) ConnectNetwork(ctx context.Context, id, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "ConnectNetwork"); err != nil {
		return err
	}
	c := r.find(id)
	if c == nil || !r.networks[name] {
		return runtime.ErrNotFound
	}
	if _, ok := c.info.IPs[name]; ok && (c.info.IPs[name] != "" || !c.info.Running) {
		return nil
	}
	c.info.IPs[name] = ""
	if c.info.Running {
		c.info.IPs[name] = fmt.Sprintf("10.213.%d.%d", r.seq/250, 2+r.seq%250)
	}
	return nil
}

func (r *Runtime) NetworkBridge(ctx context.Context, name string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "NetworkBridge"); err != nil {
		return "", err
	}
	if !r.networks[name] {
		return "", runtime.ErrNotFound
	}
	return "br-mem" + strconv.Itoa(len(name)), nil
}

// volumeLabel records, on a container, the home volume it mounts (so
// RemoveVolume refuses a volume in use, as the engine does).
const volumeLabel = "memruntime.volume"

func (r *Runtime) Create(ctx context.Context, s runtime.Spec) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "Create"); err != nil {
		return "", err
	}
	if _, ok := r.images[s.Image]; !ok {
		return "", fmt.Errorf("memruntime: no such image: %s", s.Image)
	}
	if s.Name != "" && r.find(s.Name) != nil {
		return "", fmt.Errorf("memruntime: container name %s is in use: %w", s.Name, runtime.ErrConflict)
	}
	// The labels the Docker runtime sets (runtime.containerConfig).
	labels := map[string]string{runtime.LabelKind: runtime.KindWorkbench}
	maps.Copy(labels, s.ExtraLabels)
	labels[runtime.LabelID] = s.WorkbenchID
	labels[runtime.LabelOwner] = s.Owner
	labels[runtime.LabelInstall] = s.InstallID
	labels[runtime.LabelPort] = strconv.Itoa(s.Port)
	if s.HomeVolume != "" {
		labels[volumeLabel] = s.HomeVolume
	}
	r.seq++
	id := fmt.Sprintf("mem-%06d", r.seq)
	c := &container{info: runtime.ContainerInfo{ID: id, Name: "/" + s.Name, Image: s.Image, Labels: labels,
		State: "created", Created: r.now(), IPs: map[string]string{}, Env: append([]string(nil), s.Env...)},
		gpus: runtime.GPURequest{UUIDs: append([]string(nil), s.GPUs.UUIDs...), Simulated: s.GPUs.Simulated}}
	if s.Network != "" {
		c.info.IPs[s.Network] = "" // joined, no address until it runs
	}
	c.uid, c.gid = numericUser(s.User)
	r.containers[id] = c
	return id, nil
}

// numericUser reads "uid" or "uid:gid"; anything else runs as root.
func numericUser(u string) (int, int) {
	name, group, _ := strings.Cut(u, ":")
	uid, err := strconv.Atoi(name)
	if err != nil {
		return 0, 0
	}
	gid, err := strconv.Atoi(group)
	if err != nil {
		gid = uid
	}
	return uid, gid
}

func (r *Runtime) Start(ctx context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "Start"); err != nil {
		return err
	}
	c := r.find(id)
	if c == nil {
		return runtime.ErrNotFound
	}
	if c.info.Running {
		return nil
	}
	c.info.Running, c.info.State, c.info.StartedAt, c.info.ExitCode = true, "running", r.now(), 0
	c.info.FinishedAt, c.info.OOMKilled = time.Time{}, false
	ips := map[string]string{}
	for net := range c.info.IPs {
		ips[net] = fmt.Sprintf("10.213.%d.%d", r.seq/250, 2+r.seq%250)
	}
	c.info.IPs = ips
	r.emit(c, runtime.ActionStart)
	return nil
}

func (r *Runtime) Stop(ctx context.Context, id string, _ time.Duration) error {
	r.mu.Lock()
	hook := r.stopHook
	r.mu.Unlock()
	if hook != nil {
		hook(ctx, id)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "Stop"); err != nil {
		return err
	}
	c := r.find(id)
	if c == nil {
		return runtime.ErrNotFound
	}
	if c.info.Running {
		// As `docker stop`: the engine records the signal it sends (its
		// history only: Events delivers start, die and destroy).
		r.history = append(r.history, runtime.Event{ContainerID: c.info.ID, WorkbenchID: c.info.Labels[runtime.LabelID], Action: runtime.ActionKill,
			Labels: maps.Clone(c.info.Labels), Time: r.now()})
		r.die(c, r.stopCode)
	}
	return nil
}

// StopAsked looks for a kill or stop in the history, as the Docker engine's.
func (r *Runtime) StopAsked(ctx context.Context, installID, workbenchID string, from, to time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "StopAsked"); err != nil {
		return false, err
	}
	for _, ev := range r.history {
		if (ev.Action == runtime.ActionKill || ev.Action == runtime.ActionStop) && ev.WorkbenchID == workbenchID &&
			ev.Labels[runtime.LabelInstall] == installID && runtime.StopOfRun(ev.Time, from, to) {
			return true, nil
		}
	}
	return false, nil
}

func (r *Runtime) Remove(ctx context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "Remove"); err != nil {
		return err
	}
	c := r.find(id)
	if c == nil {
		return nil
	}
	if c.info.Running {
		r.die(c, 137) // force-removed: killed
	}
	delete(r.containers, c.info.ID)
	r.emit(c, runtime.ActionDestroy)
	return nil
}

func (r *Runtime) Inspect(ctx context.Context, id string) (runtime.ContainerInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "Inspect"); err != nil {
		return runtime.ContainerInfo{}, err
	}
	c := r.find(id)
	if c == nil {
		return runtime.ContainerInfo{}, runtime.ErrNotFound
	}
	return copyInfo(c.info), nil
}

func (r *Runtime) List(ctx context.Context, installID string) ([]runtime.ContainerInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "List"); err != nil {
		return nil, err
	}
	var out []runtime.ContainerInfo
	for _, c := range r.containers {
		if c.info.Labels[runtime.LabelInstall] == installID {
			out = append(out, copyInfo(c.info))
		}
	}
	return out, nil
}

func (r *Runtime) Logs(ctx context.Context, id string, tail int, _ bool) (io.ReadCloser, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "Logs"); err != nil {
		return nil, err
	}
	c := r.find(id)
	if c == nil {
		return nil, runtime.ErrNotFound
	}
	text := c.logs
	if tail > 0 {
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > tail {
			text = strings.Join(lines[len(lines)-tail:], "")
		}
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

// Events subscribes to the install's events until ctx ends (then both
// channels close) or CloseEvents ends the stream with an error.
func (r *Runtime) Events(ctx context.Context, installID string) (<-chan runtime.Event, <-chan error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &subscriber{installID: installID, events: make(chan runtime.Event, 1024), errs: make(chan error, 1)}
	if err := r.begin(ctx, "Events"); err != nil {
		s.errs <- err
		close(s.events)
		close(s.errs)
		return s.events, s.errs
	}
	r.subs[s] = struct{}{}
	go func() {
		<-ctx.Done()
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, ok := r.subs[s]; ok {
			delete(r.subs, s)
			close(s.events)
			close(s.errs)
		}
	}()
	return s.events, s.errs
}

func (r *Runtime) Endpoint(info runtime.ContainerInfo, network string) (string, int) {
	r.mu.Lock()
	fn := r.endpoint
	r.mu.Unlock()
	if fn != nil {
		return fn(info, network)
	}
	host := info.IPs[network]
	port, err := strconv.Atoi(info.Labels[runtime.LabelPort])
	if host == "" || err != nil || port <= 0 {
		return "", 0
	}
	return host, port
}

func (r *Runtime) PrepareHome(ctx context.Context, containerID, _, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "PrepareHome"); err != nil {
		return err
	}
	if r.find(containerID) == nil {
		return runtime.ErrNotFound
	}
	return nil
}

func (r *Runtime) ResolveUser(ctx context.Context, containerID, user string) (int, int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "ResolveUser"); err != nil {
		return 0, 0, err
	}
	if r.find(containerID) == nil {
		return 0, 0, runtime.ErrNotFound
	}
	uid, gid := numericUser(user)
	return uid, gid, nil
}

func (r *Runtime) ProcessUser(ctx context.Context, containerID string) (int, int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "ProcessUser"); err != nil {
		return 0, 0, err
	}
	c := r.find(containerID)
	if c == nil {
		return 0, 0, runtime.ErrNotFound
	}
	if !c.info.Running {
		return 0, 0, fmt.Errorf("memruntime: container %s is not running", containerID)
	}
	return c.uid, c.gid, nil
}

// HomeOwner answers that the home belongs to the user the container runs
// as, mode 0755 (what PrepareHome makes it).
func (r *Runtime) HomeOwner(ctx context.Context, containerID, _ string) (int, int, int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "HomeOwner"); err != nil {
		return 0, 0, 0, err
	}
	c := r.find(containerID)
	if c == nil {
		return 0, 0, 0, runtime.ErrNotFound
	}
	return c.uid, c.gid, 0o755, nil
}

// Commit records a new image of the container's image size (the engine
// would measure its layers); volumes are not part of it, as in Docker.
func (r *Runtime) Commit(ctx context.Context, containerID string, spec runtime.CommitSpec) (runtime.SavedImage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "Commit"); err != nil {
		return runtime.SavedImage{}, err
	}
	c := r.find(containerID)
	if c == nil {
		return runtime.SavedImage{}, runtime.ErrNotFound
	}
	if hook := r.commitHook; hook != nil {
		paused := spec.Pause && c.info.Running && !c.info.Paused
		if paused {
			c.info.Paused = true
		}
		r.mu.Unlock()
		hook(ctx, containerID)
		r.mu.Lock()
		if paused {
			c.info.Paused = false
		}
	}
	size := r.images[c.info.Image]
	r.images[spec.Ref] = size
	r.imageLabel[spec.Ref] = maps.Clone(spec.Labels)
	r.imageMade[spec.Ref] = r.now()
	return runtime.SavedImage{ID: "sha256:mem-" + spec.Ref, Size: size, Added: 0}, nil
}

// RemoveImage forgets an image; one already gone is not an error.
func (r *Runtime) RemoveImage(ctx context.Context, ref string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "RemoveImage"); err != nil {
		return err
	}
	delete(r.images, ref)
	delete(r.imageLabel, ref)
	delete(r.imageMade, ref)
	return nil
}

// SavedImages lists the committed images labelled with the install.
func (r *Runtime) SavedImages(ctx context.Context, installID string) ([]runtime.ImageInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "SavedImages"); err != nil {
		return nil, err
	}
	var out []runtime.ImageInfo
	for ref, l := range r.imageLabel {
		if l[runtime.LabelKind] == runtime.KindSavedImage && l[runtime.LabelInstall] == installID {
			out = append(out, runtime.ImageInfo{Ref: ref, Labels: maps.Clone(l), Created: r.imageMade[ref]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

// WriteHomeFile records the file; HomeFile reads it back.
func (r *Runtime) WriteHomeFile(ctx context.Context, containerID, _, _, rel string, content []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx, "WriteHomeFile"); err != nil {
		return err
	}
	c := r.find(containerID)
	if c == nil {
		return runtime.ErrNotFound
	}
	if c.files == nil {
		c.files = map[string][]byte{}
	}
	c.files[rel] = append([]byte(nil), content...)
	return nil
}

// HomeFile returns a file WriteHomeFile wrote in a container's home.
func (r *Runtime) HomeFile(containerID, rel string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.find(containerID)
	if c == nil {
		return nil, false
	}
	b, ok := c.files[rel]
	return b, ok
}
