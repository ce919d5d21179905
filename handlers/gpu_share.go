package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// gpuShareForm shares a GPU in N slices (0: whole again) from the GPU
// page; admin and sudo (the admin group), CSRF-checked like every form,
// audited by the pool. A refusal (a bad number, a GPU in use whole, a
// slice still held) shows the page again with that GPU's form open, the
// values kept and the reason in it.
func (h *Handler) gpuShareForm(c *gin.Context) {
	posted := templates.ShareForm{Slices: strings.TrimSpace(c.PostForm("slices")), MPSMemoryMiB: strings.TrimSpace(c.PostForm("mps_memory_mib")),
		MPSThreadPct: strings.TrimSpace(c.PostForm("mps_thread_percent")), Errors: templates.FormErrors{}}
	set, err := sharedSetting(c)
	if err == nil {
		err = h.pool.SetShared(c.Request.Context(), c.Param("uuid"), set, currentUser(c).Username)
	}
	if err != nil {
		e := h.classify(err)
		if e.Status >= 500 || e.Status == http.StatusNotFound {
			h.fail(c, err)
			return
		}
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			posted.Errors[ve.Field] = fieldMessage(c.Request.Context(), ve.Message)
		} else {
			posted.Errors["_"] = i18n.T(c.Request.Context(), "Not shared: %s.", h.refusalClause(c, err))
		}
		h.renderGPUPage(c, e.Status, gpuPageForms{shareUUID: c.Param("uuid"), share: &posted})
		return
	}
	h.wbs.CapacityChanged()
	if set.Slices > 0 {
		h.flash(c, trc(c, "GPU shared in %s (%s).", trc(c, "%d slices", set.Slices), trc(c, sharedLabel)))
	} else {
		h.flash(c, trc(c, "GPU no longer shared: it is handed out whole again."))
	}
	h.seeOther(c, "/gpus")
}

// sharedSetting reads the share form's numbers.
func sharedSetting(c *gin.Context) (models.SharedSetting, error) {
	var set models.SharedSetting
	var err error
	if set.Slices, err = formInt(c, "slices"); err != nil {
		return set, err
	}
	if set.MPSThreadPercent, err = formInt(c, "mps_thread_percent"); err != nil {
		return set, err
	}
	mem, err := formInt(c, "mps_memory_mib")
	set.MPSMemoryMiB = int64(mem)
	return set, err
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
	h.wbs.CapacityChanged()
	h.apiGPUs(c)
}
