package handlers

import (
	"github.com/gin-gonic/gin"

	"workbench/models"
)

// Audit rows are written by the orchestrator, never here (internal/archtest
// TestHandlersWriteNoAuditRows): a change to the database and its row
// commit together in Manager.Audited (or in a service of its own, such as
// SetQuota or Pool.SetDrained); an action that is not a database change
// (a sign-in, sudo, engine work such as a pull) is recorded by
// Manager.Record once it has happened.

// audited makes change and its audit row in one transaction, as the
// signed-in user. change must use only tx.
func (h *Handler) audited(c *gin.Context, change func(tx *models.Store) (models.AuditRecord, error)) error {
	return h.wbs.Audited(c.Request.Context(), currentUser(c).Username, change)
}

// record has the action (already done, not a database change) recorded as
// the signed-in user; a failure to record is logged, not shown.
func (h *Handler) record(c *gin.Context, action, target string, before, after any) {
	h.recordAs(c, currentUser(c).Username, action, target, before, after)
}

// recordAs is record for an actor that is not (yet) the request's user.
func (h *Handler) recordAs(c *gin.Context, actor, action, target string, before, after any) {
	rec := models.AuditRecord{Actor: actor, Action: action, Target: target, Before: before, After: after}
	if err := h.wbs.Record(c.Request.Context(), rec); models.Unwritable(err) {
		// Kept in memory and written, with its time, once the database
		// can be written (models.AuditHappened).
		h.log.Warn("audit row kept until the database can be written", "action", action, "target", target, "err", err)
	} else if err != nil {
		h.log.Error("audit write failed", "action", action, "target", target, "err", err)
	}
}

// auditRec is the audit row of a change.
func auditRec(action, target string, before, after any) models.AuditRecord {
	return models.AuditRecord{Action: action, Target: target, Before: before, After: after}
}
