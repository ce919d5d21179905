package handlers

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// adminGroupRename: POST /admin/groups/:id/rename (name). A refused name is
// said beside the group's own rename box, as typed.
func (h *Handler) adminGroupRename(c *gin.Context) {
	g, ok := h.groupParam(c)
	if !ok {
		return
	}
	name := c.PostForm("name")
	renamed, err := h.renameGroup(c, g, name)
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Edit: templates.GroupEdit{GroupID: g.ID, Name: name, RenameError: trcMsg(c, ve.Message)}})
		return
	case err != nil:
		h.fail(c, err)
		return
	case !renamed:
		h.flash(c, trc(c, "%s already has that name; nothing changed.", g.Name))
	default:
		h.flash(c, trc(c, "Group %s renamed to %s.", g.Name, models.CleanName(name)))
	}
	h.seeOther(c, "/admin/groups")
}

// adminGroupDelete: POST /admin/groups/:id/delete (confirm = the group's
// name): the page's "Delete group", which works without script.
func (h *Handler) adminGroupDelete(c *gin.Context) {
	g, ok := h.groupParam(c)
	if !ok {
		return
	}
	if models.CleanName(c.PostForm("confirm")) != g.Name {
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Edit: templates.GroupEdit{GroupID: g.ID,
			DeleteError: trc(c, "Type the group's name, %s, to delete it.", g.Name)}})
		return
	}
	err := h.deleteGroup(c, g.ID)
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Edit: templates.GroupEdit{GroupID: g.ID, DeleteError: trcMsg(c, ve.Message)}})
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Group %s deleted; its members keep their accounts.", g.Name))
	h.seeOther(c, "/admin/groups")
}

// groupParam loads the group named by the :id route parameter.
func (h *Handler) groupParam(c *gin.Context) (*models.Group, bool) {
	return byIDParam(h, c, h.store.GroupByID)
}

// renameGroup renames g (audited as group.rename); renamed is false when
// the name is the one it has (nothing written, nothing audited).
func (h *Handler) renameGroup(c *gin.Context, g *models.Group, name string) (renamed bool, err error) {
	if models.CleanName(name) == g.Name {
		return false, nil
	}
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("group.rename", g.Name, map[string]string{"name": g.Name}, map[string]string{"name": models.CleanName(name)}),
			tx.RenameGroup(c.Request.Context(), g.ID, name)
	})
	return err == nil, err
}

// deleteGroup deletes group id with what was set for it, audited as
// group.delete with its members (so the audit log can tell who was in it).
func (h *Handler) deleteGroup(c *gin.Context, id int64) error {
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		g, err := tx.DeleteGroup(c.Request.Context(), id)
		if err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("group.delete", g.Name, map[string]any{"name": g.Name, "description": g.Description, "members": g.Members}, nil), nil
	})
	if err == nil {
		h.wbs.QuotasChanged() // its quota no longer applies to its members
	}
	return err
}
