package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// gpuDrainForm drains or undrains a GPU from the GPU page.
func (h *Handler) gpuDrainForm(c *gin.Context) {
	drained, ok := h.formSwitch(c, "drained")
	if !ok {
		return
	}
	if err := h.pool.SetDrained(c.Request.Context(), c.Param("uuid"), drained, currentUser(c).Username); err != nil {
		h.fail(c, err)
		return
	}
	h.wbs.CapacityChanged()
	if drained {
		h.flash(c, trc(c, "GPU drained: no new workbench will get it."))
	} else {
		h.flash(c, trc(c, "GPU back in service."))
	}
	h.seeOther(c, "/gpus")
}

// apiGPUDrain: PUT /api/v1/gpus/{uuid}/drain {"drained": true}.
func (h *Handler) apiGPUDrain(c *gin.Context) {
	var body struct {
		Drained *bool `json:"drained"`
	}
	if err := c.ShouldBindJSON(&body); err != nil || body.Drained == nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", `send {"drained": true|false}`))
		return
	}
	if err := h.pool.SetDrained(c.Request.Context(), c.Param("uuid"), *body.Drained, currentUser(c).Username); err != nil {
		h.fail(c, err)
		return
	}
	h.wbs.CapacityChanged()
	h.apiGPUs(c)
}
