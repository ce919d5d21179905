package handlers

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// The groups API (what /admin/groups does, for scripts that set up a lab):
//
//	GET    /api/v1/admin/groups                         the groups with their members
//	POST   /api/v1/admin/groups {name, description}     a new group (201)
//	PUT    /api/v1/admin/groups/{id} {name, description} rename, describe
//	DELETE /api/v1/admin/groups/{id}                    delete, with its quota, cap, priority default
//	PUT    /api/v1/admin/groups/{id}/members/{username} add a member (idempotent)
//	DELETE /api/v1/admin/groups/{id}/members/{username} remove one (idempotent)
//
// Every change is audited as on the page; a membership change that changes
// nothing answers the group as it is and is not audited.

func (h *Handler) apiGroups(c *gin.Context) {
	gs, err := h.store.ListGroups(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, list(gs))
}

func (h *Handler) apiGroupCreate(c *gin.Context) {
	var body struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	var g *models.Group
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if g, err = tx.CreateGroup(c.Request.Context(), body.Name, body.Description); err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("group.create", g.Name, nil, map[string]string{"name": g.Name, "description": g.Description}), nil
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, g)
}

// apiGroupUpdate: PUT /api/v1/admin/groups/{id} {name, description}: either
// or both (a field left out is kept).
func (h *Handler) apiGroupUpdate(c *gin.Context) {
	g, ok := h.groupParam(c)
	if !ok {
		return
	}
	var body struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	if body.Name == nil && body.Description == nil {
		h.fail(c, &models.ValidationError{Field: "name", Message: "give a name, a description or both"})
		return
	}
	if body.Name != nil {
		if _, err := h.renameGroup(c, g, *body.Name); err != nil {
			h.fail(c, err)
			return
		}
	}
	if d := body.Description; d != nil && strings.TrimSpace(*d) != g.Description {
		err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
			return auditRec("group.describe", g.Name, map[string]string{"description": g.Description}, map[string]string{"description": strings.TrimSpace(*d)}),
				tx.SetGroupDescription(c.Request.Context(), g.ID, *d)
		})
		if err != nil {
			h.fail(c, err)
			return
		}
	}
	h.answerGroup(c, g.ID)
}

func (h *Handler) apiGroupDelete(c *gin.Context) {
	g, ok := h.groupParam(c)
	if !ok {
		return
	}
	if err := h.deleteGroup(c, g.ID); err != nil {
		h.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *Handler) apiGroupAddMember(c *gin.Context)    { h.apiMembership(c, true) }
func (h *Handler) apiGroupRemoveMember(c *gin.Context) { h.apiMembership(c, false) }

func (h *Handler) apiMembership(c *gin.Context, add bool) {
	g, ok := h.groupParam(c)
	if !ok {
		return
	}
	u, err := h.liveUserNamed(c.Request.Context(), c.Param("username"))
	if err != nil {
		h.fail(c, err)
		return
	}
	if _, err := h.setMembership(c, g, u, add); err != nil {
		h.fail(c, err)
		return
	}
	h.answerGroup(c, g.ID)
}

// answerGroup answers group id with its members, read after a change.
func (h *Handler) answerGroup(c *gin.Context, id int64) {
	g, err := h.store.GroupWithMembers(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, g)
}
