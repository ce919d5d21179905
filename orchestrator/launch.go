package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// LaunchRequest is what a user asks for: a name, a catalog image and a
// flavor (each by name or id), and optionally an idle timeout.
type LaunchRequest struct {
	Name        string
	Image       string
	Flavor      string
	IdleTimeout time.Duration // 0 = the default
	// Queue waits for capacity (or a concurrency quota) instead of
	// failing: the workbench is recorded "queued" (docs/scheduling.md).
	Queue bool
	// Priority names a priority class ("" = the default class).
	Priority string
	// Preemptible runs at the discounted tier and may be preempted;
	// AutoResume re-queues it when it is.
	Preemptible bool
	AutoResume  bool
	// Reservation names one of the owner's bookings of the flavor's units
	// (0: none named; the owner's bookings apply all the same). A launch
	// naming a booking whose window has not opened must queue: it waits
	// for the window.
	Reservation int64
}

// RefusedError is a launch the portal will not do, with the reason the user
// reads and a stable code; handlers answer 409 (or 422 for quotas).
type RefusedError struct {
	Code    string
	Message string
	Limit   string // for quota_exceeded: the limit that refused
	// WayOut and CPUFlavor: over the storage limit, what the user can
	// start to clean up (models.WayOut*; the API's error.way_out and
	// error.cpu_flavor).
	WayOut    string
	CPUFlavor string
}

func (e *RefusedError) Error() string { return e.Message }

// Launch validates the request, records the workbench and binds its GPUs in
// one transaction, and starts the launch pipeline in the background. It
// returns as soon as the record exists (state requested).
//
// Once the record is about to be written, it runs to its end whatever
// happens to ctx (a client that goes away must not leave a record without
// its launch).
func (m *Manager) Launch(ctx context.Context, owner *models.User, req LaunchRequest) (*models.Workbench, error) {
	img, err := m.store.ImageByNameOrID(ctx, req.Image)
	if errors.Is(err, models.ErrNotFound) || (err == nil && !img.Enabled) {
		return nil, &models.ValidationError{Field: "image", Message: reasonf("no enabled catalog image %q", req.Image)}
	} else if err != nil {
		return nil, err
	}
	if img.Saved() {
		groups, err := m.store.UserGroups(ctx, owner.ID)
		if err != nil {
			return nil, err
		}
		if !img.VisibleTo(owner.ID, groups) {
			// Someone else's saved image: as if it did not exist.
			return nil, &models.ValidationError{Field: "image", Message: reasonf("no enabled catalog image %q", req.Image)}
		}
	}
	fl, err := m.store.FlavorByNameOrID(ctx, req.Flavor)
	if errors.Is(err, models.ErrNotFound) || (err == nil && !fl.Enabled) {
		return nil, &models.ValidationError{Field: "flavor", Message: reasonf("no enabled flavor %q", req.Flavor)}
	} else if err != nil {
		return nil, err
	}
	// Preemptible on a flavor without GPUs was dropped in silence (202,
	// "preemptible": false): nothing takes a CPU-only run's place and no
	// preemptible price applies to it, so the box promised a discount it
	// never gave. Refused beside the box, as auto-resume on a run never
	// preempted. A preemptible class on such a flavor is a priority only,
	// and stays accepted.
	if req.Preemptible && fl.GPUCount == 0 {
		return nil, preemptibleRefusal(req)
	}
	if err := m.exceedsHost(ctx, fl); err != nil {
		return nil, err
	}
	idle := req.IdleTimeout
	if idle == 0 {
		if idle, err = m.defaultIdleFor(ctx, owner.ID); err != nil {
			return nil, err
		}
	}
	if idle < m.opt.MinIdle || idle > m.opt.MaxIdle {
		return nil, &models.ValidationError{Field: "idle_timeout", Message: reasonf("must be between %s and %s", durationText(m.opt.MinIdle), durationText(m.opt.MaxIdle))}
	}
	if err := m.rt.Ping(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEngineUnavailable, err)
	}
	if fl.GPUCount > 0 && !m.pool.Simulated() {
		ok, err := m.rt.HasNVIDIA(ctx)
		if err != nil {
			return nil, err
		}
		if !ok && m.pool.OnKubernetes() {
			return nil, &RefusedError{Code: "no_gpu_runtime", Message: reasonf("no node of the Kubernetes cluster advertises NVIDIA GPUs: GPU flavors cannot start (install the NVIDIA device plugin or the GPU operator)")}
		}
		if !ok {
			return nil, &RefusedError{Code: "no_gpu_runtime", Message: reasonf("the Docker engine has no NVIDIA runtime or CDI devices: GPU flavors cannot start (install the NVIDIA Container Toolkit)")}
		}
	}
	cls, err := m.priorityClass(ctx, owner, fl, req)
	if err != nil {
		return nil, err
	}
	need, err := m.pool.Need(ctx, fl)
	if err != nil {
		return nil, err
	}
	if need.NeverFits() {
		// Refused now, queue or not: queued, it would wait for good and
		// hold back the launches behind it.
		return nil, neverFits(need)
	}
	month, err := m.billing.MonthUsage(ctx, owner.ID)
	if err != nil {
		return nil, err
	}
	wb := &models.Workbench{Name: req.Name, OwnerID: owner.ID, ImageID: img.ID, FlavorID: fl.ID,
		Token: models.RandomSecret(32), IdleTimeoutS: int64(idle / time.Second),
		Priority: cls.Name, PriorityRank: cls.Rank, Preemptible: cls.Preemptible && fl.GPUCount > 0}
	// Only a preemptible run is ever preempted to be resumed. Asked of
	// another, auto-resume was dropped in silence (202, "auto_resume":
	// false, said only in passing): the user believed their run would come
	// back by itself. Refused instead, beside the field, before anything
	// is recorded.
	if req.AutoResume && !wb.Preemptible {
		return nil, autoResumeRefusal(fl)
	}
	wb.AutoResume = req.AutoResume
	if req.Reservation != 0 {
		if err := m.pinReservation(ctx, owner, fl, req, wb); err != nil {
			return nil, err
		}
	}
	ask := models.LaunchAsk{UserID: owner.ID, Image: img.Name, Flavor: fl.Name, GPUModel: fl.GPUModel, GPUs: fl.GPUCount, Kind: fl.UnitKind, IdleTimeout: idle, Currency: m.opt.Currency}
	// An unpriced shape is left to the billing pass (it stops unpriced runs).
	ask.MinChargeMicros, ask.MinChargeSecs, _ = m.billing.MinimumCharge(ctx, WorkbenchShape(fl, wb.Preemptible))
	// A launch pinned to a booking runs on it (waiting in the queue for
	// one not open yet): it takes from what the booking set aside.
	if wb.ReservationID == nil {
		if ask.SetAsideMicros, err = m.launchSetAside(ctx, owner.ID, fl); err != nil {
			return nil, err
		}
	}
	// Accepted from here on: what follows must not be cut half-way by the
	// request ending (a record without its launch), so the request's
	// cancellation no longer applies. Until here it only stopped checks.
	ctx = context.WithoutCancel(ctx)
	// The queue places every kind of unit (whole GPUs, MIG instances,
	// slices): its scheduler keeps one pool per kind.
	if req.Queue {
		return m.enqueue(ctx, owner, wb, models.CheckLaunchQuota(ask, month))
	}
	// Units others wait for in the queue go by the queue's rules.
	if need.Count > 0 {
		waiting, err := m.store.AnyQueued(ctx)
		if err != nil {
			return nil, err
		}
		if waiting {
			return m.launchWithoutWaiting(ctx, wb, models.CheckLaunchQuota(ask, month))
		}
	}
	m.accepting.RLock()
	defer m.accepting.RUnlock()
	if err := m.store.CreateWorkbench(ctx, wb, need, m.launchCheck(owner.ID, need, models.CheckLaunchQuota(ask, month))); err != nil {
		return nil, m.refusal(ctx, err)
	}
	m.log.Info("launch", "id", wb.ID, "owner", owner.Username, "image", img.Name, "flavor", fl.Name, "gpus", wb.GPUs, "units", len(wb.Units), "unit_kind", fl.UnitKind)
	m.events.Publish(Update{ID: wb.ID, State: wb.State, At: time.Now().UTC()})
	m.startPipeline(wb.ID, owner.HomeName(), img, fl, wb.Units, wb.Token)
	return wb, nil
}

// autoResumeRefusal is the refusal of auto-resume on a run that is never
// preempted: a flavor without GPUs (nothing to take from it), or a run
// neither asked preemptible nor of a preemptible priority class.
func autoResumeRefusal(fl *models.Flavor) error {
	msg := reasonf("only a preemptible run is resumed after a preemption: ask for preemptible (or a preemptible priority class), or leave auto-resume off")
	if fl.GPUCount == 0 {
		msg = reasonf("a flavor without GPUs is never preempted, so there is nothing to resume: leave auto-resume off")
	}
	return &models.ValidationError{Field: "auto_resume", Code: "auto_resume_needs_preemptible", Message: msg}
}

// preemptibleRefusal is the refusal of preemptible on a flavor without
// GPUs: only GPU units are preempted and priced preemptible. With
// auto-resume asked too, it says to leave both off (one correction, not
// two refusals in turn).
func preemptibleRefusal(req LaunchRequest) error {
	msg := reasonf("a flavor without GPUs is never preempted and has no preemptible price: leave preemptible off, or choose a GPU flavor")
	if req.AutoResume {
		msg = reasonf("a flavor without GPUs is never preempted and has no preemptible price: leave preemptible and auto-resume off, or choose a GPU flavor")
	}
	return &models.ValidationError{Field: "preemptible", Code: "preemptible_needs_gpu", Message: msg}
}

// neverFits is the refusal of a need for more units than the server has
// at all (GPUNeed.NeverFits), what the launch form says of the flavor.
func neverFits(need models.GPUNeed) error {
	if need.Kind == models.UnitSlice {
		return &RefusedError{Code: "no_capacity", Message: noSharedGPU(need)}
	}
	noun := "GPUs"
	if need.Kind == models.UnitMIG {
		noun = "MIG instances"
	}
	return &RefusedError{Code: "no_capacity", Message: reasonf(
		"needs %d %s at once; this server has %d (GPUs split into MIG instances do not count as whole ones; shared ones do), so it could never start",
		need.Count, noun, need.Structural)}
}

// noSharedGPU says why a slice launch cannot start while no GPU of its
// model is shared: only an admin sharing one (on the GPUs page) helps.
func noSharedGPU(need models.GPUNeed) string {
	return reasonf("needs a slice of a shared %s, and no GPU of that model is shared on this server: an administrator shares one on the GPUs page", need.Model)
}

// refusal turns allocation and quota errors into what the user reads.
func (m *Manager) refusal(ctx context.Context, err error) error {
	var nc *models.NoCapacityError
	var qe *models.QuotaError
	switch {
	case errors.As(err, &nc):
		// Said after the counts: waiting is the way to get the units. The
		// launch form and the Start button each have a box for it; the API
		// takes queue=true (a launch's field, a start's parameter).
		wait := reasonf("wait in the queue for them (tick the box to wait for a free GPU, or send queue=true through the API)")
		if nc.Kind != "" && nc.Kind != models.UnitGPU {
			return &RefusedError{Code: "no_capacity", Message: reasonf("%s; %s", nc.Error(), wait)} // its own count says what is free
		}
		if free := m.pool.FreeSummary(ctx); free != "" {
			return &RefusedError{Code: "no_capacity", Message: reasonf("%s; %s; %s", nc.Error(), free, wait)}
		}
		return &RefusedError{Code: "no_capacity", Message: reasonf("%s; %s", nc.Error(), wait)}
	case errors.As(err, &qe):
		return &RefusedError{Code: "quota_exceeded", Message: qe.Message, Limit: qe.Limit, WayOut: qe.WayOut, CPUFlavor: qe.CPUFlavor}
	}
	return err
}

// startPipeline runs pull → create → start → ready in the background.
// owner is the owner's home name (models.User.HomeName), which the home
// volume and the container's labels carry.
func (m *Manager) startPipeline(id, owner string, img *models.Image, fl *models.Flavor, units []models.Unit, token string) {
	m.inBackground(id, func(ctx context.Context) error {
		return m.runPipeline(ctx, id, owner, img, fl, units, token)
	})
}

func (m *Manager) runPipeline(ctx context.Context, id, owner string, img *models.Image, fl *models.Flavor, units []models.Unit, token string) error {
	if err := m.transition(ctx, id, models.Transition{From: []string{models.StateRequested}, To: models.StatePulling,
		Set: models.WorkbenchFields{ReasonDetails: new("")}}); err != nil {
		return err
	}
	lastPct := -1
	err := m.rt.EnsureImage(ctx, img.Image, func(pct int, status string) {
		if pct != lastPct {
			lastPct = pct
			// A refusal here is seen at the next step's transition.
			_ = m.transition(ctx, id, models.Transition{From: []string{models.StatePulling}, To: models.StatePulling, Progress: pct * 70 / 100})
		}
	})
	m.forgetImages() // it may have pulled
	var pe *runtime.PullError
	if errors.As(err, &pe) {
		// The reason is the plain sentence; the engine's error chain is
		// kept for the page's "details". An admin's own launch is told
		// what to do rather than to ask an admin.
		m.setFields(ctx, id, models.WorkbenchFields{ReasonDetails: new(pe.Details)})
		reason := pe.Reason
		if u, err := m.store.UserByHomeName(ctx, owner); err == nil && u.IsAdmin() {
			reason = pe.AdminReason
		}
		return errors.New(sentence(reason))
	}
	if err != nil {
		return errors.New(reasonf("could not get image %s: %v", img.Image, err))
	}
	if err := m.transition(ctx, id, models.Transition{From: []string{models.StatePulling}, To: models.StateCreating, Progress: 75}); err != nil {
		return err
	}
	cid, err := m.createContainer(ctx, id, owner, img, fl, units, token)
	if err != nil {
		return err
	}
	if err := m.transition(ctx, id, models.Transition{From: []string{models.StateCreating}, To: models.StateStarting, Progress: 85,
		Set: models.WorkbenchFields{ContainerID: new(cid)}}); err != nil {
		return err
	}
	if err := m.startContainer(ctx, cid); err != nil {
		return errors.New(reasonf("could not start the container: %v", err))
	}
	return m.waitReady(ctx, id, cid, owner, token)
}

// startContainer asks the engine to start cid and waits for its answer
// even when ctx ends (a stop cancelling the launch): a start abandoned
// half-way still happens in the engine, after the stop looked at the
// container, on GPUs the stop then gave to another launch, unmetered. The
// stop waits for the launch to end (cancelLaunch), so it then finds the
// container running and stops it.
func (m *Manager) startContainer(ctx context.Context, cid string) error {
	return m.rt.Start(context.WithoutCancel(ctx), cid)
}

// createContainer makes the user's home volume, the install's shared
// network (if not there yet) and the hardened container.
//
// Each call that makes or removes an engine object waits for the engine's
// answer even when ctx ends (a stop or a shutdown cancelling the launch),
// as startContainer does: the engine carries out a request whose client
// gave up, so a cancelled create still made its network or container after
// the launch had ended and whoever cancelled it had looked (a test's
// cleanup left the install's network behind). ctx is checked between the
// calls instead.
func (m *Manager) createContainer(ctx context.Context, id, owner string, img *models.Image, fl *models.Flavor, units []models.Unit, token string) (string, error) {
	// The device request names exactly the units bound: GPU UUIDs, MIG
	// UUIDs, or a shared GPU's UUID for a slice.
	gpus := models.DeviceIDs(units)
	vol, net := m.homeVolume(owner), m.network()
	ectx := context.WithoutCancel(ctx)
	fresh, err := m.rt.EnsureVolume(ectx, vol, m.labels("", owner))
	if err != nil {
		return "", errors.New(reasonf("could not create the home volume: %v", err))
	}
	var ownerID int64
	if fresh {
		ownerID = m.homeMadeAnew(ctx, id, vol)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := m.rt.EnsureNetwork(ectx, net, m.labels("", owner)); err != nil {
		return "", errors.New(reasonf("could not create the network: %v", err))
	}
	if err := m.egressBeforeStart(ctx); err != nil {
		return "", err
	}
	cmd, err := models.ExpandStartCommand(img.StartCommand, JupyterPort, BaseURL(id), token)
	if err != nil {
		return "", errors.New(reasonf("bad start command in image %s: %v", img.Name, err))
	}
	spec := runtime.Spec{
		WorkbenchID: id, Owner: owner, InstallID: m.installID, Name: m.containerName(id),
		Image: img.Image, Cmd: cmd, User: img.ContainerUser(), HomeVolume: vol, HomePath: img.HomePath,
		Env: append([]string{"HOME=" + img.HomePath, "JUPYTER_TOKEN=" + token, "WORKBENCH_ID=" + id,
			// Where a preemption notice appears (preempt.go): code that
			// checkpoints watches it. Set for every workbench, so scripts
			// need no special case; only preemptible runs ever get one,
			// and each workbench its own (the home is shared).
			PreemptFileEnv + "=" + path.Join(img.HomePath, PreemptFile(id))}, m.pool.UnitEnv(ctx, units)...),
		NanoCPUs: m.fitSimulated(ctx, int64(fl.CPUMilli)*1_000_000), MemoryBytes: fl.MemoryMiB << 20, ShmBytes: int64(fl.ShmMiB) << 20,
		PidsLimit: m.opt.PidsLimit, GPUs: runtime.GPURequest{UUIDs: gpus, Simulated: m.pool.Simulated()},
		Network: net, Port: JupyterPort, HomeNoCopy: !fresh,
		ExtraLabels: map[string]string{labelGPUs: joinGPUs(gpus), labelFlavor: strconv.FormatInt(fl.ID, 10)},
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	cid, err := m.rt.Create(ectx, spec)
	if errors.Is(err, runtime.ErrConflict) {
		// A container of this workbench survived a crash between Create and
		// recording its id: replace it.
		_ = m.rt.Remove(ectx, spec.Name)
		cid, err = m.rt.Create(ectx, spec)
	}
	if err != nil {
		if fresh {
			// Never leave a fresh volume unprepared: the next launch would
			// take it as a home already set up.
			m.removeFreshHome(ectx, ownerID, vol)
		}
		return "", errors.New(reasonf("could not create the container: %v", err))
	}
	if fresh || homeMayBeUnprepared(ctx) {
		if err := m.prepareHome(ctx, cid, img); err != nil {
			// Start over with a fresh volume next time rather than leave
			// a home its user cannot write (only one made now: another
			// may hold the user's files).
			_ = m.rt.Remove(ectx, cid)
			if fresh {
				m.removeFreshHome(ectx, ownerID, vol)
			}
			return "", err
		}
	}
	return cid, nil
}

// waitReady polls Jupyter through the address the proxy uses until it
// answers, the container dies, or ReadyTimeout passes.
func (m *Manager) waitReady(ctx context.Context, id, cid, owner, token string) error {
	deadline := time.Now().Add(m.opt.ReadyTimeout)
	var info runtime.ContainerInfo
	for poll := 0; ; poll++ {
		// Jupyter is asked every poll; the engine only every tenth (and
		// until the container has an address): an inspect costs the engine
		// CPU that a Jupyter starting on a small server needs, and a
		// container that died is still noticed within a quarter second.
		host, port := m.rt.Endpoint(info, m.network())
		if poll%10 != 0 && host != "" {
			if m.jupyterAnswers(ctx, fmt.Sprintf("%s:%d", host, port), id, token) {
				return m.becameReady(ctx, id, cid, info, fmt.Sprintf("%s:%d", host, port))
			}
			if err := sleepCtx(ctx, 25*time.Millisecond); err != nil {
				return err
			}
			continue
		}
		var err error
		info, err = m.rt.Inspect(ctx, cid)
		if err != nil {
			return errors.New(reasonf("container vanished while starting: %v", err))
		}
		if !info.Running && info.State == runtime.StatePending {
			// Kubernetes has not placed or started the Pod yet: the page
			// says why, and the ready timeout counts from when it runs.
			m.notePending(ctx, id, info.Error)
			deadline = time.Now().Add(m.opt.ReadyTimeout)
		} else if !info.Running {
			if out := m.lastOutput(ctx, cid); out != "" {
				return errors.New(reasonf("Jupyter exited while starting (exit code %s); last output: %s", strconv.Itoa(info.ExitCode), out))
			}
			return errors.New(reasonf("Jupyter exited while starting (exit code %s)", strconv.Itoa(info.ExitCode)))
		}
		host, port = m.rt.Endpoint(info, m.network())
		if host != "" {
			endpoint := fmt.Sprintf("%s:%d", host, port)
			if m.jupyterAnswers(ctx, endpoint, id, token) {
				return m.becameReady(ctx, id, cid, info, endpoint)
			}
		}
		if time.Now().After(deadline) {
			if out := m.lastOutput(ctx, cid); out != "" {
				return errors.New(reasonf("Jupyter did not answer within %s; last output: %s", m.opt.ReadyTimeout, out))
			}
			return errors.New(reasonf("Jupyter did not answer within %s", m.opt.ReadyTimeout))
		}
		if err := sleepCtx(ctx, 25*time.Millisecond); err != nil {
			return err
		}
	}
}

// becameReady opens the usage interval and marks the workbench running, once
// Jupyter answered at endpoint.
func (m *Manager) becameReady(ctx context.Context, id, cid string, info runtime.ContainerInfo, endpoint string) error {
	now := time.Now().UTC()
	if err := m.openInterval(ctx, id, info.StartedAt); err != nil {
		return errors.New(meteringFailed(err))
	}
	// The last run's notice is emptied before the run counts as running:
	// from then on a preemption may write this run's notice, and clearing
	// after would erase it (a CI run saw the empty file).
	m.clearPreemptNotice(ctx, id, cid)
	if err := m.transition(ctx, id, models.Transition{From: models.LaunchingStates, To: models.StateRunning, Progress: 100,
		Set: models.WorkbenchFields{Endpoint: new(endpoint), StartedAt: &now, ClearStoppedAt: true, RuntimeExtensionS: new(int64(0)),
			RunMaxRuntimeS: m.flavorMaxRuntime(ctx, id)}}); err != nil {
		return err
	}
	m.log.Info("workbench running", "id", id, "endpoint", endpoint)
	// Told to yield while it launched: its notice, now that it runs.
	m.repostPreemptNotice(ctx, id)
	return nil
}

// sleepCtx waits d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// jupyterAnswers reports whether Jupyter serves its status API at endpoint.
func (m *Manager) jupyterAnswers(ctx context.Context, endpoint, id, token string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+endpoint+BaseURL(id)+"api/status", nil)
	req.Header.Set("Authorization", "token "+token)
	res, err := m.http.Do(req)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// fail marks a workbench failed with a readable reason and frees what it held.
func (m *Manager) fail(ctx context.Context, id, reason string) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err == nil && wb.ContainerID != "" {
		m.keepExitLogs(ctx, id, wb.ContainerID)
		if err := m.rt.Remove(ctx, wb.ContainerID); err != nil {
			m.log.Warn("remove failed container", "id", id, "err", err)
		}
	}
	m.closeInterval(ctx, id, time.Now().UTC(), "failed: "+reason)
	if err := m.store.ReleaseGPUs(ctx, id); err != nil {
		m.log.Error("release GPUs", "id", id, "err", err)
	}
	_ = m.transition(ctx, id, models.Transition{From: models.LaunchingStates, To: models.StateFailed, Reason: reason,
		Set: models.WorkbenchFields{ContainerID: new(""), Endpoint: new(""), StoppedAt: new(time.Now().UTC())}})
	m.kickDrain()
}

// sentence starts s with a capital letter and ends it with a full stop.
// A sentence that starts with a name — a registry or an image reference,
// "ghcr.io refused to hand out …" — keeps it as written: "Ghcr.io" is not
// the registry's name.
func sentence(s string) string {
	if s == "" {
		return s
	}
	if first, _, _ := strings.Cut(s, " "); strings.Trim(first, "abcdefghijklmnopqrstuvwxyz'") == "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// BaseURL is the path prefix of a workbench behind the portal's proxy.
func BaseURL(id string) string { return "/wb/" + id + "/" }

const (
	labelGPUs   = "workbench.gpus"
	labelFlavor = "workbench.flavor"
)

func joinGPUs(g []string) string {
	s := ""
	for i, u := range g {
		if i > 0 {
			s += ","
		}
		s += u
	}
	return s
}

// defaultIdleFor is the idle timeout of a launch that names none: the
// portal's default brought within the user's quota bounds, as the launch
// form offers it. Unbounded, a user whose quota allows at most 20 minutes
// was refused a launch that asked for no timeout at all.
func (m *Manager) defaultIdleFor(ctx context.Context, userID int64) (time.Duration, error) {
	idle := m.opt.DefaultIdle
	lim, err := m.store.EffectiveQuota(ctx, userID)
	if err != nil {
		return 0, err
	}
	if lim.MinIdleMinutes != nil {
		idle = max(idle, time.Duration(*lim.MinIdleMinutes)*time.Minute)
	}
	if lim.MaxIdleMinutes != nil {
		idle = min(idle, time.Duration(*lim.MaxIdleMinutes)*time.Minute)
	}
	return idle, nil
}
