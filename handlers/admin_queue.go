package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// adminQueue: GET /admin/queue, the queue with Cancel and the priority
// classes.
func (h *Handler) adminQueue(c *gin.Context) {
	h.renderAdminQueue(c, http.StatusOK, templates.AdminQueueView{Form: templates.ClassRow{Rank: "50"}})
}

func (h *Handler) renderAdminQueue(c *gin.Context, status int, v templates.AdminQueueView) {
	ctx := c.Request.Context()
	var err error
	if v.Rows, err = h.queueRows(ctx, currentUser(c)); err != nil {
		h.fail(c, err)
		return
	}
	classes, err := h.store.PriorityClasses(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, pc := range classes {
		v.Classes = append(v.Classes, templates.ClassRow{Name: pc.Name, Rank: strconv.Itoa(pc.Rank), Preemptible: pc.Preemptible,
			Default: pc.IsDefault, Description: seededText(ctx, pc.Description)})
	}
	if err := h.priorityDefaultsView(c, &v); err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, status, templates.AdminQueuePage(h.page(c, trc(c, "Queue")), v))
}

// adminPriorityClassSave: POST /admin/priority-classes, the form on the
// queue page (admin, sudo; audited). A bad field is shown back with the
// input kept.
func (h *Handler) adminPriorityClassSave(c *gin.Context) {
	form := templates.ClassRow{Name: strings.TrimSpace(c.PostForm("name")), Rank: strings.TrimSpace(c.PostForm("rank")),
		Preemptible: c.PostForm("preemptible") == "on", Default: c.PostForm("is_default") == "on", Description: strings.TrimSpace(c.PostForm("description"))}
	v := templates.AdminQueueView{Form: form, Errors: templates.FormErrors{}}
	rank, err := strconv.Atoi(form.Rank)
	if err != nil {
		v.Errors["rank"] = trc(c, "a whole number between 0 and 1000")
		h.renderAdminQueue(c, http.StatusBadRequest, v)
		return
	}
	pc := models.PriorityClass{Name: form.Name, Rank: rank, Preemptible: form.Preemptible, IsDefault: form.Default, Description: form.Description}
	var ve *models.ValidationError
	if err := h.savePriorityClass(c, &pc); errors.As(err, &ve) {
		v.Errors[ve.Field] = trcMsg(c, ve.Message)
		h.renderAdminQueue(c, http.StatusBadRequest, v)
		return
	} else if err != nil {
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Saved the priority class %s.", pc.Name))
	h.seeOther(c, "/admin/queue")
}

// adminQueueCancel: an administrator takes a request out of the queue; the
// owner reads who did it (recorded in the audit log).
func (h *Handler) adminQueueCancel(c *gin.Context) {
	ctx := c.Request.Context()
	wb, err := h.store.WorkbenchByID(ctx, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	if wb.State != models.StateQueued {
		h.fail(c, newError(http.StatusConflict, "not_queued", "the workbench is "+wb.State+", no longer in the queue"))
		return
	}
	h.record(c, "queue.cancel", wb.ID, map[string]string{"state": wb.State}, map[string]string{"state": models.StateStopped})
	if err := h.wbs.StopByAdmin(ctx, wb.ID, models.Reasonf("removed from the queue by an administrator (%s)", currentUser(c).Username)); err != nil {
		h.fail(c, err)
		return
	}
	if isAPI(c) {
		c.Status(http.StatusNoContent)
		return
	}
	h.flash(c, trc(c, "Removed %s from the queue.", wb.Name))
	h.seeOther(c, "/admin/queue")
}

// apiQueue: GET /api/v1/queue, the queue in order (owners' names for
// administrators and for one's own requests).
func (h *Handler) apiQueue(c *gin.Context) {
	rows, err := h.queueRows(c.Request.Context(), currentUser(c))
	if err != nil {
		h.fail(c, err)
		return
	}
	type item struct {
		ID          string `json:"id,omitempty"`
		Name        string `json:"name"`
		Owner       string `json:"owner"`
		Flavor      string `json:"flavor"`
		Priority    string `json:"priority"`
		Preemptible bool   `json:"preemptible"`
		Position    int    `json:"queue_position"`
		Reason      string `json:"queue_reason"`
		// Times, as in a workbench's JSON: null when unknown (it was the
		// page's text, "unknown" or "in 2 h", in the reader's language).
		EstimatedStart *time.Time `json:"estimated_start"`
		// Why estimated_start is null, where the queue knows, in words
		// and as a code (as a workbench's JSON); absent otherwise.
		EstimatedStartReason     string     `json:"estimated_start_reason,omitempty"`
		EstimatedStartReasonCode string     `json:"estimated_start_reason_code,omitempty"`
		QueuedAt                 *time.Time `json:"queued_at"`
	}
	out := make([]item, 0, len(rows))
	for _, r := range rows {
		it := item{Name: r.Name, Owner: r.Owner, Flavor: r.Flavor, Priority: r.Priority, Preemptible: r.Preemptible,
			Position: r.Position, Reason: r.Reason, EstimatedStart: r.EstimatedAt, EstimatedStartReason: r.EstimateWhy,
			EstimatedStartReasonCode: r.EstimateWhyCode, QueuedAt: r.Queued}
		if r.Mine {
			it.ID = r.ID
		}
		out = append(out, it)
	}
	c.JSON(http.StatusOK, gin.H{"items": out})
}

// apiPriorityClasses: GET /api/v1/priority-classes.
func (h *Handler) apiPriorityClasses(c *gin.Context) {
	list, err := h.store.PriorityClasses(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": nonNil(list)})
}

// apiPriorityClassPut: PUT /api/v1/admin/priority-classes/{name}
// {rank, preemptible, description, is_default} (admin, sudo). A field left
// out keeps the class's value (a new class needs its rank): a body of
// {"rank": 100} read the rest as false and empty, and so unmarked the
// default class and wiped its description.
func (h *Handler) apiPriorityClassPut(c *gin.Context) {
	var body struct {
		Rank        *int    `json:"rank"`
		Preemptible *bool   `json:"preemptible"`
		Description *string `json:"description"`
		IsDefault   *bool   `json:"is_default"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	pc := models.PriorityClass{Name: c.Param("name")}
	if old, err := h.store.PriorityClassFor(c.Request.Context(), pc.Name); err == nil && pc.Name != "" {
		pc = *old
	} else if body.Rank == nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_rank", "rank: a new class needs a rank (0–1000; higher is placed first)"))
		return
	}
	if body.Rank != nil {
		pc.Rank = *body.Rank
	}
	if body.Preemptible != nil {
		pc.Preemptible = *body.Preemptible
	}
	if body.Description != nil {
		pc.Description = *body.Description
	}
	if body.IsDefault != nil {
		pc.IsDefault = *body.IsDefault
	}
	if err := h.savePriorityClass(c, &pc); err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, pc)
}

// apiPriceTiers: GET /api/v1/admin/price-tiers, every discount version.
func (h *Handler) apiPriceTiers(c *gin.Context) {
	list, err := h.store.PriceTierHistory(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": nonNil(list)})
}

// apiPriceTierAdd: POST /api/v1/admin/price-tiers {tier, discount_percent,
// effective_from} adds a discount version (now or later, never earlier).
// Its body has only the fields a caller sets: id, is_default, created_by
// and created_at (the stored row's) were taken and silently overwritten.
func (h *Handler) apiPriceTierAdd(c *gin.Context) {
	var body struct {
		Tier            string    `json:"tier"`
		DiscountPercent int64     `json:"discount_percent"`
		EffectiveFrom   time.Time `json:"effective_from"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	t := models.PriceTier{Tier: body.Tier, DiscountPct: body.DiscountPercent, EffectiveFrom: body.EffectiveFrom}
	err := h.addPriceTier(c, &t)
	if errors.Is(err, errTierUnchanged) {
		c.JSON(http.StatusOK, t) // the version in force: nothing added
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, t)
}

// savePriorityClass stores pc with its audit row (before and after).
func (h *Handler) savePriorityClass(c *gin.Context, pc *models.PriorityClass) error {
	ctx := c.Request.Context()
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		before, _ := tx.PriorityClassFor(ctx, pc.Name)
		err := tx.SavePriorityClass(ctx, pc)
		return auditRec("priority_class.save", pc.Name, before, *pc), err
	})
}
