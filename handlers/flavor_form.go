package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
)

func (h *Handler) flavorNewForm(c *gin.Context) {
	h.renderFlavorForm(c, http.StatusOK, templates.FlavorForm{CPUCores: "4", MemoryGiB: "16", ShmMiB: "1024", GPUCount: "0", Enabled: true})
}

func (h *Handler) flavorEditForm(c *gin.Context) {
	id, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	f, err := h.store.FlavorByID(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.renderFlavorForm(c, http.StatusOK, flavorForm(f))
}

func (h *Handler) renderFlavorForm(c *gin.Context, status int, form templates.FlavorForm) {
	models, err := h.pool.Models(c.Request.Context())
	if err != nil {
		h.log.Warn("list GPU models", "err", err)
	}
	form.Models = models
	if fls, err := h.store.ListFlavors(c.Request.Context(), false); err == nil {
		for _, f := range fls {
			if f.GPUCount == 0 && f.ID != form.ID {
				form.TwinChoices = append(form.TwinChoices, templates.TwinChoice{ID: strconv.FormatInt(f.ID, 10), Name: f.Name})
			}
		}
	}
	form.MaxCPUs = h.flavorCPUBound(c.Request.Context())
	form.Errors = trcErrs(c, form.Errors)
	// Titled as its heading says (it read "Flavor" on both).
	title := trc(c, "New flavor")
	if form.ID != 0 {
		title = trc(c, "Edit flavor")
	}
	h.render(c, status, templates.FlavorFormPage(h.page(c, title), form))
}

func flavorForm(f *models.Flavor) templates.FlavorForm {
	return templates.FlavorForm{ID: f.ID, Name: f.Name, GPUModel: f.GPUModel, GPUCount: strconv.Itoa(f.GPUCount),
		CPUCores: f.CPUMilli.String(), MemoryGiB: models.FormatMemoryGiB(f.MemoryMiB),
		ShmMiB: strconv.Itoa(f.ShmMiB), MaxRuntimeHours: runtimeHoursText(f.MaxRuntimeS), Enabled: f.Enabled,
		GPUIdleMinutes: strconv.FormatInt(f.GPUIdleTimeoutS/60, 10), UnitKind: f.UnitKind, MIGProfile: f.MIGProfile, CPUTwin: strconv.FormatInt(f.CPUTwinID, 10)}
}

func (h *Handler) flavorCreateForm(c *gin.Context) { h.saveFlavorForm(c, 0) }

func (h *Handler) flavorUpdateForm(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	h.saveFlavorForm(c, id)
}

func (h *Handler) saveFlavorForm(c *gin.Context, id int64) {
	form := templates.FlavorForm{ID: id, Name: c.PostForm("name"), GPUModel: c.PostForm("gpu_model"),
		GPUCount: c.PostForm("gpu_count"), CPUCores: c.PostForm("cpu_cores"), MemoryGiB: c.PostForm("memory_gib"),
		ShmMiB: c.PostForm("shm_mib"), MaxRuntimeHours: c.PostForm("max_runtime_hours"), Enabled: c.PostForm("enabled") == "true",
		GPUIdleMinutes: c.PostForm("gpu_idle_timeout_minutes"), UnitKind: c.PostForm("unit_kind"), MIGProfile: c.PostForm("mig_profile"), CPUTwin: c.PostForm("cpu_twin_id")}
	f, err := parseFlavorForm(form)
	if err == nil {
		err = h.saveFlavor(c, f)
	}
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		form.Errors = fieldErrors(err)
		h.renderFlavorForm(c, http.StatusBadRequest, form)
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Flavor %s saved.", f.Name))
	h.seeOther(c, "/catalog")
}

// parseFlavorForm converts the form's text fields, naming the field at fault.
func parseFlavorForm(form templates.FlavorForm) (*models.Flavor, error) {
	f := &models.Flavor{ID: form.ID, Name: form.Name, GPUModel: form.GPUModel, Enabled: form.Enabled,
		UnitKind: form.UnitKind, MIGProfile: form.MIGProfile}
	var err error
	if f.GPUCount, err = atoiField("gpu_count", form.GPUCount, 0); err != nil {
		return nil, err
	}
	if f.MemoryMiB, err = models.ParseMemoryGiB(form.MemoryGiB); err != nil {
		return nil, err
	}
	if f.ShmMiB, err = atoiField("shm_mib", form.ShmMiB, 0); err != nil {
		return nil, err
	}
	if f.MaxRuntimeS, err = parseRuntimeHours(form.MaxRuntimeHours); err != nil {
		return nil, err
	}
	idleMin, err := atoiField("gpu_idle_timeout_minutes", form.GPUIdleMinutes, 0)
	if err != nil {
		return nil, err
	}
	// Bounded before the product, which wrapped around for a huge number;
	// anything above the rule's 43200 is refused with the rule.
	f.GPUIdleTimeoutS = int64(min(max(idleMin, -1), 1<<31)) * 60
	twin, err := atoiField("cpu_twin_id", form.CPUTwin, 0)
	if err != nil {
		return nil, err
	}
	f.CPUTwinID = int64(twin)
	f.CPUMilli, err = models.ParseMillicores(form.CPUCores)
	if err != nil {
		return nil, &models.ValidationError{Field: "cpu_cores", Message: err.Error()}
	}
	return f, nil
}

// atoiField parses a whole number; blank gives def, or an error when def < 0.
func atoiField(field, s string, def int) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" && def >= 0 {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) {
		// A whole number beyond int: past any field's range, which the
		// field's rule names ("must be a whole number, not …" was untrue).
		if strings.HasPrefix(s, "-") {
			return math.MinInt, nil
		}
		return math.MaxInt, nil
	}
	if err != nil {
		return 0, &models.ValidationError{Field: field, Message: fmt.Sprintf("must be a whole number, not %q", s)}
	}
	return n, nil
}

func (h *Handler) saveFlavor(c *gin.Context, f *models.Flavor) error {
	ctx := c.Request.Context()
	if err := h.checkFlavorFits(ctx, f); err != nil {
		return err
	}
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		if f.ID == 0 {
			err := tx.CreateFlavor(ctx, f)
			return auditRec("flavor.create", f.Name, nil, f), err
		}
		before, err := tx.FlavorByID(ctx, f.ID)
		if err != nil {
			return models.AuditRecord{}, err
		}
		err = tx.UpdateFlavor(ctx, f)
		return auditRec("flavor.update", f.Name, before, f), err
	})
}

func (h *Handler) apiFlavors(c *gin.Context) {
	fs, err := h.store.ListFlavors(c.Request.Context(), !currentUser(c).IsAdmin())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, mapList(fs, apiFlavor))
}

type flavorBody struct {
	Name     string `json:"name"`
	GPUModel string `json:"gpu_model"`
	GPUCount int    `json:"gpu_count"`
	// UnitKind says what gpu_count counts: "gpu" (whole GPUs, the
	// default), "mig" (instances of mig_profile) or "slice" (1 slice of a
	// shared GPU).
	UnitKind   string            `json:"unit_kind"`
	MIGProfile string            `json:"mig_profile"`
	CPUCores   models.Millicores `json:"cpu_cores"`
	// MemoryGiB takes decimals down to one MiB (0.5 = 512 MiB); MemoryMiB,
	// when given, says the same in whole MiB and wins.
	MemoryGiB json.Number `json:"memory_gib"`
	MemoryMiB *int64      `json:"memory_mib"`
	ShmMiB    *int        `json:"shm_mib"`
	// MaxRuntimeSeconds stops workbenches of the flavor after that long; 0 = no limit.
	MaxRuntimeSeconds int64 `json:"max_runtime_seconds"`
	// GPUIdleTimeoutSeconds stops a workbench whose GPUs stayed idle that long; 0 = off.
	GPUIdleTimeoutSeconds int64 `json:"gpu_idle_timeout_seconds"`
	Enabled               *bool `json:"enabled"`
	// CPUTwinID names the flavor's CPU-only twin (0 or absent = none).
	CPUTwinID int64 `json:"cpu_twin_id"`
}

func (h *Handler) apiFlavorCreate(c *gin.Context) { h.apiSaveFlavor(c, 0, http.StatusCreated) }

func (h *Handler) apiFlavorUpdate(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	h.apiSaveFlavor(c, id, http.StatusOK)
}

func (h *Handler) apiSaveFlavor(c *gin.Context, id int64, status int) {
	var b flavorBody
	if !h.bindJSON(c, &b) {
		return
	}
	if id != 0 && b.Enabled == nil {
		h.fail(c, errPutEnabled)
		return
	}
	if b.GPUModel != "" && b.GPUCount == 0 {
		// Stored as a CPU-only flavor with the model dropped, before.
		h.fail(c, &models.ValidationError{Field: "gpu_count", Message: "is 0 with a gpu_model: give the number of GPUs (1 or more), or leave gpu_model out for a CPU-only flavor"})
		return
	}
	mib, err := flavorBodyMemory(b)
	if err != nil {
		h.fail(c, err)
		return
	}
	f := &models.Flavor{ID: id, Name: b.Name, GPUModel: b.GPUModel, GPUCount: b.GPUCount, UnitKind: b.UnitKind, MIGProfile: b.MIGProfile, CPUMilli: b.CPUCores,
		MemoryMiB: mib, ShmMiB: defaultShmMiB(mib), MaxRuntimeS: b.MaxRuntimeSeconds, Enabled: b.Enabled == nil || *b.Enabled,
		GPUIdleTimeoutS: b.GPUIdleTimeoutSeconds, CPUTwinID: b.CPUTwinID}
	if b.ShmMiB != nil {
		f.ShmMiB = *b.ShmMiB
	}
	if err := h.saveFlavor(c, f); err != nil {
		h.fail(c, apiFlavorFields(err))
		return
	}
	c.JSON(status, apiFlavor(f))
}

// apiFlavorFields names a refusal's fields as the API body does: it sends
// seconds where the form asks hours and minutes (a bad max_runtime_seconds
// was refused as invalid_max_runtime_hours, a field the body has not).
func apiFlavorFields(err error) error {
	for _, ve := range models.FieldErrors(err) {
		switch ve.Field {
		case "max_runtime_hours":
			ve.Field, ve.Message = "max_runtime_seconds", "must be between 0 (no limit) and 31536000 (365 days)"
		case "gpu_idle_timeout_minutes":
			ve.Field, ve.Message = "gpu_idle_timeout_seconds", "must be between 0 (off) and 2592000 (30 days)"
		}
	}
	return err
}

// defaultShmMiB is /dev/shm of a flavor whose request does not say: 1 GiB
// (PyTorch's DataLoader workers share tensors through it), at most half
// the flavor's memory — a 512 MiB flavor was refused for an shm_mib the
// request never sent.
func defaultShmMiB(memoryMiB int64) int {
	return int(min(1024, memoryMiB/2))
}

// flavorBodyMemory is the memory a flavor body asks for, in MiB.
func flavorBodyMemory(b flavorBody) (int64, error) {
	if b.MemoryMiB != nil && b.MemoryGiB != "" {
		// One of them was silently ignored ({"memory_gib":1,"memory_mib":2048}
		// made 2 GiB): the body says two things, so neither is guessed.
		return 0, &models.ValidationError{Field: "memory_mib", Message: "give memory_gib or memory_mib, not both"}
	}
	if b.MemoryMiB != nil {
		return *b.MemoryMiB, nil
	}
	if b.MemoryGiB == "" {
		return 0, &models.ValidationError{Field: "memory_gib", Message: "is required (or give memory_mib)"}
	}
	return models.ParseMemoryGiB(b.MemoryGiB.String())
}

// runtimeHoursText shows a maximum runtime in hours with the decimals it
// needs ("1.5", "0.0667" for 240 s), so that saving the form unchanged
// keeps it: whole hours turned 5400 s into 3600 and 240 s into 0 (none).
func runtimeHoursText(secs int64) string {
	return pricing.FormatNumber(big.NewRat(secs, 3600), 4)
}

// parseRuntimeHours reads the form's hours (decimals allowed) as whole
// seconds; four decimals are within a second, so runtimeHoursText's text
// reads back as the seconds it came from.
func parseRuntimeHours(text string) (int64, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0, nil
	}
	secs, err := pricing.ParseScaled(text, 3600)
	if err != nil || secs < 0 {
		return 0, &models.ValidationError{Field: "max_runtime_hours", Message: "must be a number of hours, 0 or more (decimals allowed)"}
	}
	if secs > 10_000*3600 {
		return 0, &models.ValidationError{Field: "max_runtime_hours", Message: "must be at most 10000 hours"}
	}
	return secs, nil
}
