package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// healthz answers 200 when the database answers, else 503. It says only
// ok or not ok: it is unauthenticated, so the error (which can name paths
// and internals) goes to the log, not to the caller.
func (h *Handler) healthz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		h.log.Error("healthz: database does not answer", "err", err)
		c.JSON(http.StatusServiceUnavailable, APIHealth{Status: "unavailable"})
		return
	}
	c.JSON(http.StatusOK, APIHealth{Status: "ok"})
}
