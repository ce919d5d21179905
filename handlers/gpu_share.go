package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// gpuShareForm shares a GPU in N slices (0: whole again) from the GPU
// page; admin and sudo (the admin group), CSRF-checked like every form,
// audited by the pool.
func (h *Handler) gpuShareForm(c *gin.Context) {
	var set models.SharedSetting
	var err error
	if set.Slices, err = formInt(c, "slices"); err == nil {
		if set.MPSThreadPercent, err = formInt(c, "mps_thread_percent"); err == nil {
			var mem int
			mem, err = formInt(c, "mps_memory_mib")
			set.MPSMemoryMiB = int64(mem)
		}
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := h.pool.SetShared(c.Request.Context(), c.Param("uuid"), set, currentUser(c).Username); err != nil {
		h.fail(c, err)
		return
	}
	if set.Slices > 0 {
		h.flash(c, trc(c, "GPU shared in %d slices (%s).", set.Slices, trc(c, sharedLabel)))
	} else {
		h.flash(c, trc(c, "GPU no longer shared: it is handed out whole again."))
	}
	seeOther(c, "/gpus")
}

// formInt reads a whole number from a form field ("" is 0).
func formInt(c *gin.Context, field string) (int, error) {
	v := strings.TrimSpace(c.PostForm(field))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &models.ValidationError{Field: field, Message: "must be a whole number"}
	}
	return n, nil
}

// apiGPUShare: PUT /api/v1/gpus/{uuid}/shared {"slices": 4,
// "mps_memory_mib": 0, "mps_thread_percent": 0}; answers the pool.
func (h *Handler) apiGPUShare(c *gin.Context) {
	var body struct {
		Slices           *int  `json:"slices"`
		MPSMemoryMiB     int64 `json:"mps_memory_mib"`
		MPSThreadPercent int   `json:"mps_thread_percent"`
	}
	if err := c.ShouldBindJSON(&body); err != nil || body.Slices == nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", `send {"slices": N} (0 = not shared), optionally "mps_memory_mib" and "mps_thread_percent"`))
		return
	}
	set := models.SharedSetting{Slices: *body.Slices, MPSMemoryMiB: body.MPSMemoryMiB, MPSThreadPercent: body.MPSThreadPercent}
	if err := h.pool.SetShared(c.Request.Context(), c.Param("uuid"), set, currentUser(c).Username); err != nil {
		h.fail(c, err)
		return
	}
	h.apiGPUs(c)
}
