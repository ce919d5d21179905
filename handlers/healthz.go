package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// healthMessageNotWritable is /healthz's text while the database cannot
// be written. No path, no SQLite error: the endpoint is unauthenticated
// (the log names both).
const healthMessageNotWritable = "the database cannot be written: the disk of the portal's data directory is full or read-only; sign-ins, launches, stops and every other change are refused until an administrator frees space there or makes it writable again (the portal's log names the database); running workbenches keep running, and the portal still serves"

// healthz answers 200 while the portal serves, 503 when its database does
// not answer. A database that answers but cannot be written (its disk full
// or read-only) is still 200 — a load balancer or a readiness probe must
// not take the only portal away from the users of the running notebooks —
// with "degraded", "database": "not_writable" and a message in the body,
// which `workbench health` reads (exit 1). Whether it can be written is
// the store's last knowledge, probed at most every models.WriteProbeEvery
// (WriteState), not a write per request. It says nothing more: it is
// unauthenticated, so errors (which can name paths and internals) go to
// the log, not to the caller.
func (h *Handler) healthz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		h.log.Error("healthz: database does not answer", "err", err)
		c.JSON(http.StatusServiceUnavailable, APIHealth{Status: "unavailable"})
		return
	}
	if w := h.store.WriteState(ctx); !w.Writable {
		c.JSON(http.StatusOK, APIHealth{Status: HealthDegraded, Database: HealthNotWritable, Message: healthMessageNotWritable})
		return
	}
	c.JSON(http.StatusOK, APIHealth{Status: "ok", Database: "writable"})
}
