package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// apiMe: GET /api/v1/me.
func (h *Handler) apiMe(c *gin.Context) {
	u := currentUser(c)
	groups, err := h.store.UserGroups(c.Request.Context(), u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"id": u.ID, "username": u.Username, "display_name": u.DisplayName, "email": u.Email,
		"role": u.Role, "groups": nonNil(groups), "currency": h.cfg.Currency})
}

// apiGPUs: GET /api/v1/gpus — the pool with the SPEC §8 shape.
func (h *Handler) apiGPUs(c *gin.Context) {
	gpus, err := h.pool.List(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": nonNil(gpus), "simulated": h.pool.Simulated(), "backend": h.pool.Backend(), "status": h.pool.Status()})
}
