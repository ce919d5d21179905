package handlers

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// PUT /images/:id and /flavors/:id replace the whole entry: a field left
// out is emptied (a script that sent {"enabled": false} to disable an
// image wiped its description and tags, or was refused for a missing
// name). PATCH changes only the fields it sends: the body is decoded onto
// the entry as stored, then saved through the same checks and audit.

// errPutEnabled refuses a PUT without "enabled": a replacement that left
// it out re-enabled a disabled entry (a POST's default), and emptying it
// would disable an enabled one; neither is what the script said.
var errPutEnabled = &models.ValidationError{Field: "enabled", Message: "a PUT replaces the whole entry: send enabled (true or false) too, or change only some fields with PATCH"}

// apiImagePatch: PATCH /api/v1/images/:id {only the fields that change}.
func (h *Handler) apiImagePatch(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	img, err := h.store.ImageByID(c.Request.Context(), id)
	if err != nil || img.Saved() { // saved images are their owners' (My images)
		h.fail(c, errNotFound)
		return
	}
	enabled := img.Enabled
	body := imageBody{Name: img.Name, Image: img.Image, Description: img.Description, Tags: img.Tags,
		StartCommand: img.StartCommand, RunAsUser: img.RunAsUser, HomePath: img.HomePath, OpenPath: img.OpenPath,
		ExtraPorts: img.ExtraPorts, Enabled: &enabled}
	if !h.bindJSON(c, &body) {
		return
	}
	next := body.image(id)
	if _, err := h.saveImage(c, next); err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiImage(next))
}

// apiFlavorPatch: PATCH /api/v1/flavors/:id {only the fields that change}.
// Memory given in either unit replaces the stored one.
func (h *Handler) apiFlavorPatch(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	f, err := h.store.FlavorByID(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	enabled, shm := f.Enabled, f.ShmMiB
	body := flavorBody{Name: f.Name, GPUModel: f.GPUModel, GPUCount: f.GPUCount, UnitKind: f.UnitKind, MIGProfile: f.MIGProfile,
		CPUCores: f.CPUMilli, ShmMiB: &shm, MaxRuntimeSeconds: f.MaxRuntimeS, GPUIdleTimeoutSeconds: f.GPUIdleTimeoutS,
		Enabled: &enabled, CPUTwinID: f.CPUTwinID}
	if !h.bindJSON(c, &body) {
		return
	}
	mib, err := patchedMemory(body, f.MemoryMiB)
	if err != nil {
		h.fail(c, err)
		return
	}
	next := &models.Flavor{ID: id, Name: body.Name, GPUModel: body.GPUModel, GPUCount: body.GPUCount, UnitKind: body.UnitKind,
		MIGProfile: body.MIGProfile, CPUMilli: body.CPUCores, MemoryMiB: mib, ShmMiB: *body.ShmMiB, MaxRuntimeS: body.MaxRuntimeSeconds,
		Enabled: body.Enabled == nil || *body.Enabled, GPUIdleTimeoutS: body.GPUIdleTimeoutSeconds, CPUTwinID: body.CPUTwinID}
	if err := h.saveFlavor(c, next); err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiFlavor(next))
}

// patchedMemory is the memory a PATCH sets: what it gives (memory_mib, or
// memory_gib), else what is stored.
func patchedMemory(b flavorBody, stored int64) (int64, error) {
	if b.MemoryMiB == nil && b.MemoryGiB == "" {
		return stored, nil
	}
	return flavorBodyMemory(b)
}
