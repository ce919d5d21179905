package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// The install lease: the engine is the referee of which portal process
// manages an install's containers. The install id lives in the database,
// so a copy of the data (a restored backup, a cloned VM) carries it; two
// portals reconciling the same install would stop and remove each other's
// workbenches. The holder of the lease is the only one that reconciles:
//
//   - the lease is a volume wb-lease-<install> whose holder label is the
//     process's random nonce; the engine creates a name once, so the
//     first creator holds it;
//   - the holder proves it is alive by re-creating one of its two beat
//     volumes wb-lease-<install>-beat-<nonce>-{0,1} every leaseBeat, in
//     turn: their latest creation time is the heartbeat (two, so that a
//     reader looking between a removal and the creation after it still
//     finds a recent beat);
//   - a portal that finds the lease held waits while the holder's beat is
//     fresh (up to leaseStale); a holder that stopped beating (it
//     crashed) is taken over, a live one is refused, with the reason.
//
// `workbench serve --new-identity` gives a copy its own install id.

var (
	leaseBeat  = 5 * time.Second
	leaseStale = 20 * time.Second
)

// LeaseStale is how long a holder's beat stays fresh: a holder silent
// longer is taken over.
func LeaseStale() time.Duration { return leaseStale }

// ErrLeaseHeld is a live portal holding this install's lease.
var ErrLeaseHeld = errors.New("install lease held")

// LeaseError says which live portal holds the lease and what to do.
type LeaseError struct {
	InstallID string
	Holder    string
	LastBeat  time.Time
}

func (e *LeaseError) Error() string {
	return fmt.Sprintf("another portal process is managing install %s on this Docker engine (its lease was renewed %s ago): "+
		"this process will not reconcile its workbenches, or the two would stop each other's. "+
		"If this is a COPY of that install (a restored backup) in another data directory, start the copy with --new-identity — "+
		"never on the data directory the running portal uses (it would refuse); "+
		"if you are moving the install, stop the other portal first",
		e.InstallID, time.Since(e.LastBeat).Round(time.Second))
}

func (e *LeaseError) Unwrap() error { return ErrLeaseHeld }

// lease is this process's hold on the install.
type lease struct {
	mu    sync.Mutex
	nonce string
	slot  int // the beat volume renewed next (0 or 1)
	held  bool
	err   error // why it is not held (shown to admins)
}

func (m *Manager) leaseName() string { return leaseName(m.installID) }

func leaseName(installID string) string { return "wb-lease-" + installID }

// beatName names the holder's beat volume in slot 0 or 1.
func (m *Manager) beatName(nonce string, slot int) string { return beatName(m.installID, nonce, slot) }

func beatName(installID, nonce string, slot int) string {
	return legacyBeatName(installID, nonce) + "-" + strconv.Itoa(slot)
}

// legacyBeatName is the single beat volume of portals before the two
// slots: still read, so that a new portal started beside a running older
// one does not take its lease over.
func (m *Manager) legacyBeatName(nonce string) string { return legacyBeatName(m.installID, nonce) }

func legacyBeatName(installID, nonce string) string {
	return "wb-lease-" + installID + "-beat-" + nonce
}

func (m *Manager) leaseLabels() map[string]string {
	host, _ := os.Hostname()
	return map[string]string{runtime.LabelInstall: m.installID, runtime.LabelKind: "lease", "workbench.lease.holder": m.lease.nonce,
		"workbench.lease.host": host, "workbench.lease.pid": strconv.Itoa(os.Getpid()), "workbench.lease.data": m.opt.DataIdentity}
}

// holderGone reports whether the lease's holder is a process of this very
// data (same database file) on this host that no longer exists: this
// portal restarting after a crash, which need not wait for its old beat to
// go stale. A copy of the data is another file and always waits.
func (m *Manager) holderGone(labels map[string]string) bool {
	if m.opt.DataIdentity == "" || labels["workbench.lease.data"] != m.opt.DataIdentity {
		return false
	}
	return processGone(labels)
}

// processGone reports whether the lease's holder was a process of this
// host that no longer exists.
func processGone(labels map[string]string) bool {
	if host, _ := os.Hostname(); labels["workbench.lease.host"] != host {
		return false
	}
	pid, err := strconv.Atoi(labels["workbench.lease.pid"])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false // another manager of this process: not gone
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// LeaseHolder is the live portal process holding an install's lease, as
// its labels record it.
type LeaseHolder struct {
	Host, PID string
	// Data is the database file it runs on (device:inode, as
	// Options.DataIdentity); empty for a portal that did not record it.
	Data     string
	LastBeat time.Time
}

// LiveLeaseHolder returns the portal process holding installID's lease
// while its beat is fresh and its process not known gone, or nil: what
// AcquireLease would wait for and then refuse. It takes nothing over.
// `serve --new-identity` asks it before rewriting the install id: run on
// the data of that very portal it is not a copy, and the rewrite closed
// the live workbenches as the original's.
func LiveLeaseHolder(ctx context.Context, rt runtime.Runtime, installID string) (*LeaseHolder, error) {
	v, err := rt.InspectVolume(ctx, leaseName(installID))
	if errors.Is(err, runtime.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	last, err := lastBeatOf(ctx, rt, beatNames(installID, v.Labels["workbench.lease.holder"]), v.CreatedAt)
	if err != nil {
		return nil, err
	}
	if time.Since(last) > leaseStale || processGone(v.Labels) {
		return nil, nil
	}
	return &LeaseHolder{Host: v.Labels["workbench.lease.host"], PID: v.Labels["workbench.lease.pid"],
		Data: v.Labels["workbench.lease.data"], LastBeat: last}, nil
}

// LeaseStatus reports whether this process holds the install lease and,
// if not, why.
func (m *Manager) LeaseStatus() (bool, error) {
	m.lease.mu.Lock()
	defer m.lease.mu.Unlock()
	return m.lease.held, m.lease.err
}

// AcquireLease takes the install lease, waiting while a previous holder's
// beat may still be fresh. It returns a *LeaseError when a live portal
// holds it.
func (m *Manager) AcquireLease(ctx context.Context) error {
	err := m.acquireLease(ctx)
	if err != nil {
		// A start cut short (the portal told to stop while it took the
		// lease) may have created the lease already: give it back, or
		// the next portal on another host (a re-created compose
		// container) waits for it to go stale.
		m.dropOwnLease(context.WithoutCancel(ctx))
	}
	m.lease.mu.Lock()
	m.lease.held, m.lease.err = err == nil, err
	m.lease.mu.Unlock()
	return err
}

func (m *Manager) acquireLease(ctx context.Context) error {
	if m.lease.nonce == "" {
		m.lease.nonce = models.RandomSecret(9)
	}
	deadline := time.Now().Add(leaseStale + leaseBeat)
	told := false
	for {
		v, err := m.rt.CreateVolume(ctx, m.leaseName(), m.leaseLabels())
		if err != nil {
			return err
		}
		holder := v.Labels["workbench.lease.holder"]
		if holder == m.lease.nonce {
			return m.beat(ctx)
		}
		last, err := m.lastBeat(ctx, holder, v.CreatedAt)
		if err != nil {
			return err
		}
		if time.Since(last) > leaseStale || m.holderGone(v.Labels) {
			// The holder stopped beating, or its process is gone: take over.
			m.log.Warn("install lease: taking over from a holder that stopped", "holder", holder, "last_beat", last)
			for _, name := range m.beatNames(holder) {
				_ = m.rt.RemoveVolume(ctx, name)
			}
			if err := m.rt.RemoveVolume(ctx, m.leaseName()); err != nil {
				return err
			}
			continue
		}
		if time.Now().After(deadline) {
			return &LeaseError{InstallID: m.installID, Holder: holder, LastBeat: last}
		}
		if !told {
			// The wait is up to half a minute; without a word the start
			// looks hung.
			m.log.Info("install lease: another portal holds it; waiting to see whether it still runs",
				"holder", holder, "last_beat", last, "up_to", time.Until(deadline).Round(time.Second).String())
			told = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// beatNames lists every beat volume a holder may have.
func (m *Manager) beatNames(holder string) []string { return beatNames(m.installID, holder) }

func beatNames(installID, holder string) []string {
	return []string{beatName(installID, holder, 0), beatName(installID, holder, 1), legacyBeatName(installID, holder)}
}

// lastBeat is the holder's latest heartbeat: the newest of its beat
// volumes, or the lease's own creation (since) when it has none yet.
func (m *Manager) lastBeat(ctx context.Context, holder string, since time.Time) (time.Time, error) {
	return lastBeatOf(ctx, m.rt, m.beatNames(holder), since)
}

func lastBeatOf(ctx context.Context, rt runtime.Runtime, beats []string, since time.Time) (time.Time, error) {
	last := since
	for _, name := range beats {
		b, err := rt.InspectVolume(ctx, name)
		if errors.Is(err, runtime.ErrNotFound) {
			continue
		}
		if err != nil {
			return time.Time{}, err
		}
		if b.CreatedAt.After(last) {
			last = b.CreatedAt
		}
	}
	return last, nil
}

// beat renews this process's heartbeat: it re-creates the beat volume in
// one slot while the other keeps the previous beat, and moves to the
// other slot only once the creation succeeded. With a single volume, a
// portal started on a copy of the data once looked between a live
// holder's removal and re-creation on a busy engine, saw no beat, and
// took the lease over (CI).
func (m *Manager) beat(ctx context.Context) error {
	name := m.beatName(m.lease.nonce, m.lease.slot)
	if err := m.rt.RemoveVolume(ctx, name); err != nil {
		return err
	}
	if _, err := m.rt.CreateVolume(ctx, name, m.leaseLabels()); err != nil {
		return err
	}
	m.lease.slot = 1 - m.lease.slot
	return nil
}

// keepLease renews the lease every leaseBeat; losing it (someone took it
// over while this process was stalled) is logged, counted by LeaseStatus
// and ends reconciliation.
func (m *Manager) keepLease(ctx context.Context, lost func()) {
	periodically(ctx, leaseBeat, false, func(ctx context.Context) {
		v, err := m.rt.InspectVolume(ctx, m.leaseName())
		if err == nil && v.Labels["workbench.lease.holder"] != m.lease.nonce {
			err = &LeaseError{InstallID: m.installID, Holder: v.Labels["workbench.lease.holder"], LastBeat: v.CreatedAt}
			m.log.Error("install lease lost: no longer reconciling", "err", err)
			m.lease.mu.Lock()
			m.lease.held, m.lease.err = false, err
			m.lease.mu.Unlock()
			lost()
			return
		}
		if err != nil {
			m.log.Warn("install lease: renew", "err", err)
			return
		}
		if err := m.beat(ctx); err != nil {
			m.log.Warn("install lease: beat", "err", err)
		}
	})
}

// ReleaseLease gives the lease up (a clean shutdown), so a successor need
// not wait for it to go stale.
func (m *Manager) ReleaseLease(ctx context.Context) {
	if held, _ := m.LeaseStatus(); !held {
		return
	}
	m.dropOwnLease(ctx)
	m.lease.mu.Lock()
	m.lease.held = false
	m.lease.mu.Unlock()
}

// dropOwnLease removes this process's beat and the lease if this process
// is its holder; someone else's lease is left alone.
func (m *Manager) dropOwnLease(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, name := range m.beatNames(m.lease.nonce) {
		_ = m.rt.RemoveVolume(ctx, name)
	}
	if v, err := m.rt.InspectVolume(ctx, m.leaseName()); err == nil && v.Labels["workbench.lease.holder"] == m.lease.nonce {
		_ = m.rt.RemoveVolume(ctx, m.leaseName())
	}
}
