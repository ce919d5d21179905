package orchestrator

import "workbench/models"

// reasonf words a text people read: see models.Reasonf. Every refusal,
// state error and stop, queue or failure reason the orchestrator writes
// goes through it (or models.Reasonf), so that pages can translate it.
func reasonf(format string, args ...any) string {
	return models.Reasonf(format, args...)
}
