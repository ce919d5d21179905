package handlers

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// refuseTo answers a form's refusal: msg (the caller's words around err)
// flashed on back, then 303 there. A flash lives in the session, which is
// kept in the database: while that cannot be written (err is its refusal,
// or a stop not recorded yet) the flash was lost and back came again
// without a word — a Start, a Delete or an extra port of a workbench whose
// stop is not recorded yet did nothing, silently. Such a refusal is
// answered at once instead, as an error page (503) saying msg.
func (h *Handler) refuseTo(c *gin.Context, err error, msg, back string) {
	if !flashLost(err) {
		h.flashError(c, msg)
		h.seeOther(c, back)
		return
	}
	h.log.Info("request refused: the database cannot be written", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
	ctx := c.Request.Context()
	h.render(c, http.StatusServiceUnavailable, templates.ErrorPage(h.page(c, i18n.T(ctx, "Error")), http.StatusServiceUnavailable, msg))
	c.Abort()
}

// flashLost reports whether err says the database cannot be written now,
// so that a flash put in the session cannot be kept either.
func flashLost(err error) bool {
	var spe *orchestrator.StopPendingError
	var ure *orchestrator.UnrecordedStopError
	return models.Unwritable(err) || errors.As(err, &spe) || errors.As(err, &ure)
}
