package orchestrator

import (
	"context"
	"errors"
	"sync"
)

// Kinds of money errors counted in /metrics (workbench_money_errors_total).
const (
	moneyErrBilling      = "billing"       // an interval could not be priced or recorded
	moneyErrEnforcement  = "enforcement"   // a user's monthly limits could not be checked
	moneyErrOpenInterval = "open_interval" // metering could not start: the workbench was stopped
)

// moneyErrors counts what went wrong with billing so that it is never
// silent: each is logged, counted for /metrics and, where a workbench was
// stopped for it, written to the audit log admins read.
type moneyErrors struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (e *moneyErrors) add(kind string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int64{}
	}
	e.counts[kind]++
}

// MoneyErrors returns how many billing, enforcement and metering errors
// this process has seen, by kind (every kind present, zero included).
func (m *Manager) MoneyErrors() map[string]int64 {
	m.moneyErrs.mu.Lock()
	defer m.moneyErrs.mu.Unlock()
	out := map[string]int64{moneyErrBilling: 0, moneyErrEnforcement: 0, moneyErrOpenInterval: 0}
	for k, v := range m.moneyErrs.counts {
		out[k] = v
	}
	return out
}

// moneyError logs and counts err; audit also records it for admins.
//
// A pass the portal's shutdown cut short (its context ended, and that is
// the error) is not a money error: billing and enforcement read what they
// work on from the store, so the next pass after the restart does it
// again, and counting it would raise workbench_money_errors_total at every
// restart. What is audited (a workbench was stopped for it) always counts.
func (m *Manager) moneyError(ctx context.Context, kind, target string, err error, audit bool) {
	if !audit && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		m.log.Debug("money: pass cut short by shutdown", "kind", kind, "target", target)
		return
	}
	m.moneyErrs.add(kind)
	m.log.Error("money: "+kind, "target", target, "err", err)
	if audit {
		if aerr := m.store.Audit(context.WithoutCancel(ctx), "system", "billing.error."+kind, target, nil, map[string]string{"error": err.Error()}); aerr != nil {
			m.log.Error("money: audit", "err", aerr)
		}
	}
}
