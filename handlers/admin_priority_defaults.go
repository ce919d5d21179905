package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// Default priority classes per group and flavor (issue 12 §3), set on the
// admin queue page or by the API (admin, sudo; audited).

// adminPriorityDefaultSave: POST /admin/priority-defaults {target
// ("group:ID" or "flavor:ID"), class ("" clears)}.
func (h *Handler) adminPriorityDefaultSave(c *gin.Context) {
	scope, idText, _ := strings.Cut(c.PostForm("target"), ":")
	id, _ := strconv.ParseInt(idText, 10, 64)
	class := strings.TrimSpace(c.PostForm("class"))
	if _, err := h.savePriorityDefault(c, scope, id, class); err != nil {
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			v := templates.AdminQueueView{Form: templates.ClassRow{Rank: "50"}, Errors: templates.FormErrors{"default_" + ve.Field: trcMsg(c, ve.Message)}}
			h.renderAdminQueue(c, http.StatusBadRequest, v)
			return
		}
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Saved the default priority class."))
	h.seeOther(c, "/admin/queue")
}

// apiPriorityDefaultPut: PUT /api/v1/admin/priority-defaults/{group|flavor}/{id}
// {class} ("" clears).
func (h *Handler) apiPriorityDefaultPut(c *gin.Context) {
	var body struct {
		Class string `json:"class"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, &models.ValidationError{Field: "id", Message: "not a number"})
		return
	}
	saved, err := h.savePriorityDefault(c, apiScope(c.Param("scope")), id, body.Class)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, saved)
}

// apiPriorityDefaults: GET /api/v1/admin/priority-defaults.
func (h *Handler) apiPriorityDefaults(c *gin.Context) {
	list, err := h.store.PriorityDefaults(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": nonNil(list)})
}

func (h *Handler) savePriorityDefault(c *gin.Context, scope string, id int64, class string) (models.PriorityDefault, error) {
	ctx := c.Request.Context()
	var saved models.PriorityDefault
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		before := ""
		if list, err := tx.PriorityDefaults(ctx); err == nil {
			for _, d := range list {
				if d.Scope == scope && d.RefID == id {
					before = d.Class
				}
			}
		}
		var err error
		saved, err = tx.SetPriorityDefault(ctx, scope, id, class)
		return auditRec("priority_default.save", scope+":"+strconv.FormatInt(id, 10), map[string]string{"class": before}, map[string]string{"class": class}), err
	})
	return saved, err
}

// priorityDefaultsView fills the defaults table and the form's choices.
func (h *Handler) priorityDefaultsView(c *gin.Context, v *templates.AdminQueueView) error {
	ctx := c.Request.Context()
	groups, err := h.store.ListGroups(ctx)
	if err != nil {
		return err
	}
	flavors, err := h.store.ListFlavors(ctx, false)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, g := range groups {
		key := models.PriorityScopeGroup + ":" + strconv.FormatInt(g.ID, 10)
		names[key] = trc(c, "group %s", g.Name)
		v.DefaultTargets = append(v.DefaultTargets, templates.TargetOption{Value: key, Label: names[key]})
	}
	for _, f := range flavors {
		key := models.PriorityScopeFlavor + ":" + strconv.FormatInt(f.ID, 10)
		names[key] = trc(c, "flavor %s", f.Name)
		v.DefaultTargets = append(v.DefaultTargets, templates.TargetOption{Value: key, Label: names[key]})
	}
	list, err := h.store.PriorityDefaults(ctx)
	if err != nil {
		return err
	}
	for _, d := range list {
		key := d.Scope + ":" + strconv.FormatInt(d.RefID, 10)
		v.Defaults = append(v.Defaults, templates.PriorityDefaultRow{Target: names[key], Class: d.Class})
	}
	return nil
}
