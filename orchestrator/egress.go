package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// Firewall enforces the egress policy on the engine host
// (runtime.Firewall; tests may swap it).
type Firewall interface {
	Apply(ctx context.Context, installID, bridge string, p runtime.EgressPolicy) error
	Remove(ctx context.Context, installID string) error
	// Check reports whether rules can be enforced here at all.
	Check(ctx context.Context) error
}

// egressEvery is how often the rules are checked and put back should
// something (a firewall reload, an admin) have removed them.
const egressEvery = time.Minute

// EgressStatus is what the admin page shows about the egress policy.
type EgressStatus struct {
	Policy runtime.EgressPolicy
	// Enforced: the rules for Policy are in place on the workbench network.
	Enforced bool
	// Pending: the network does not exist yet; the rules are installed
	// before the first workbench starts.
	Pending bool
	// Problem says why the policy is not enforced ("" when it is).
	Problem   string
	Bridge    string
	CheckedAt time.Time
}

type egressState struct {
	apply  sync.Mutex // serialises applying; guards warned and the firewall
	warned string     // the last problem logged, so a standing one is logged once

	mu     sync.Mutex // guards status only: pages read it while rules are written
	status EgressStatus
}

// UseFirewall replaces the firewall (tests).
func (m *Manager) UseFirewall(fw Firewall) {
	m.egress.apply.Lock()
	defer m.egress.apply.Unlock()
	m.fw = fw
}

// EgressPolicy is the policy in force: the admin's setting, else the
// configured default.
func (m *Manager) EgressPolicy(ctx context.Context) (runtime.EgressPolicy, error) {
	return m.egressPolicyIn(ctx, m.store)
}

func (m *Manager) egressPolicyIn(ctx context.Context, store *models.Store) (runtime.EgressPolicy, error) {
	mode, allow, set, err := store.EgressSetting(ctx)
	if err != nil {
		return runtime.EgressPolicy{}, err
	}
	if !set {
		return m.opt.Egress, nil
	}
	p, err := runtime.ParseEgressPolicy(mode, allow)
	if err != nil {
		return runtime.EgressPolicy{}, fmt.Errorf("stored egress policy: %w", err)
	}
	return p, nil
}

// SetEgressPolicy stores p and applies it at once. The error is about
// storing; a policy that is stored but cannot be enforced (or whose rules
// failed to write) is reported in the returned status (Problem), and the
// next launch retries the rules.
func (m *Manager) SetEgressPolicy(ctx context.Context, p runtime.EgressPolicy) (EgressStatus, error) {
	if err := m.store.SetEgressSetting(ctx, string(p.Mode), strings.Join(p.AllowStrings(), ",")); err != nil {
		return EgressStatus{}, err
	}
	_ = m.EnforceEgress(ctx) // logged and recorded in the status
	return m.EgressStatus(), nil
}

// SetEgressPolicyBy is SetEgressPolicy done by actor: the new setting and
// its audit row (egress.set, the policy before and after) commit in one
// transaction; then the policy is applied.
func (m *Manager) SetEgressPolicyBy(ctx context.Context, p runtime.EgressPolicy, actor string) (EgressStatus, error) {
	audit := func(p runtime.EgressPolicy) map[string]any {
		return map[string]any{"mode": p.Mode, "allow": nonNilStrings(p.AllowStrings())}
	}
	err := m.store.InTx(ctx, func(tx *models.Store) error {
		before, err := m.egressPolicyIn(ctx, tx)
		if err != nil {
			return err
		}
		if err := tx.SetEgressSetting(ctx, string(p.Mode), strings.Join(p.AllowStrings(), ",")); err != nil {
			return err
		}
		return tx.WriteAudit(ctx, models.AuditRecord{Actor: actor, Action: "egress.set", Target: "workbench network",
			Before: audit(before), After: audit(p)})
	})
	if err != nil {
		return EgressStatus{}, err
	}
	_ = m.EnforceEgress(ctx) // logged and recorded in the status
	return m.EgressStatus(), nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// EgressStatus returns the state of the last enforcement.
func (m *Manager) EgressStatus() EgressStatus {
	m.egress.mu.Lock()
	defer m.egress.mu.Unlock()
	return m.egress.status
}

// EnforceEgress (re)applies the policy in force to the install's network,
// if that exists. An error wrapping runtime.ErrFirewallUnavailable means
// this host cannot enforce it; it is logged once and shown to admins, and
// workbenches still launch (the portal never claims a protection it does
// not give). Any other error means the rules could not be written.
func (m *Manager) EnforceEgress(ctx context.Context) error {
	m.egress.apply.Lock()
	defer m.egress.apply.Unlock()
	st := EgressStatus{CheckedAt: time.Now().UTC()}
	err := m.enforceEgress(ctx, &st)
	if err != nil {
		st.Problem = err.Error()
	}
	m.egress.mu.Lock()
	m.egress.status = st
	m.egress.mu.Unlock()
	switch {
	case err == nil:
		m.egress.warned = ""
	case st.Problem != m.egress.warned:
		m.egress.warned = st.Problem
		m.log.Warn("WORKBENCH EGRESS POLICY NOT ENFORCED: workbench containers may reach the host and link-local addresses", "err", err)
	}
	return err
}

func (m *Manager) enforceEgress(ctx context.Context, st *EgressStatus) error {
	p, err := m.EgressPolicy(ctx)
	if err != nil {
		return err
	}
	st.Policy = p
	bridge, err := m.rt.NetworkBridge(ctx, m.network())
	if errors.Is(err, runtime.ErrNotFound) {
		st.Pending = true
		return m.fw.Check(ctx)
	}
	if err != nil {
		return err
	}
	st.Bridge = bridge
	if err := m.fw.Apply(ctx, m.installID, bridge, p); err != nil {
		return err
	}
	st.Enforced = true
	return nil
}

// egressBeforeStart puts the rules in place before a container of the
// network is created or started (after a host reboot they are gone until
// the portal applies them). A host that cannot enforce them is logged and
// shown to admins, and the workbench still starts; rules that cannot be
// written fail the start.
func (m *Manager) egressBeforeStart(ctx context.Context) error {
	if err := m.EnforceEgress(ctx); err != nil && !errors.Is(err, runtime.ErrFirewallUnavailable) {
		return fmt.Errorf("could not apply the egress policy: %v", err)
	}
	return nil
}

// RemoveEgress deletes the install's rules (when its network is removed).
func (m *Manager) RemoveEgress(ctx context.Context) error {
	m.egress.apply.Lock()
	defer m.egress.apply.Unlock()
	return m.fw.Remove(ctx, m.installID)
}

// keepEgress is the periodic duty of Run.
func (m *Manager) keepEgress(ctx context.Context) {
	_ = m.EnforceEgress(ctx)
}

// The policy types, for the handlers (which do not reach into runtime).
type (
	EgressPolicy     = runtime.EgressPolicy
	EgressFieldError = runtime.EgressFieldError
)

// ParseEgressPolicy validates an admin's mode and allow-list.
func ParseEgressPolicy(mode, allow string) (EgressPolicy, error) {
	return runtime.ParseEgressPolicy(mode, allow)
}

// RemoveEgressRules deletes an install's rules without a running manager
// (the uninstall command).
func RemoveEgressRules(ctx context.Context, installID string, log *slog.Logger) error {
	return runtime.NewFirewall(log).Remove(ctx, installID)
}
