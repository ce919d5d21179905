package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// adminGroupLead: POST /admin/groups/:id/members/lead (username, lead=
// true|false) — makes a member a lead of the group (who reads its
// statement at /groups/:id/billing) or not. Audited as group.lead.
func (h *Handler) adminGroupLead(c *gin.Context) {
	g, ok := h.groupParam(c)
	if !ok {
		return
	}
	username := strings.TrimSpace(c.PostForm("username"))
	lead := c.PostForm("lead") == "true"
	if username == "" {
		// Nothing typed: not a user of no name ("There is no user \"\"").
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Member: templates.MemberForm{GroupID: g.ID,
			Error: trc(c, "Enter a username: pick one from the list.")}})
		return
	}
	u, err := h.liveUserNamed(c.Request.Context(), username)
	if errors.Is(err, models.ErrNotFound) {
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Member: templates.MemberForm{GroupID: g.ID, Username: username,
			Error: trc(c, "There is no user %q: pick a username from the list.", username)}})
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	err = h.setGroupLead(c, g, u, lead)
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Member: templates.MemberForm{GroupID: g.ID, Username: username,
			Error: trc(c, "%s is not in %s: add them first.", u.Username, g.Name)}})
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	if lead {
		h.flash(c, trc(c, "%s now leads %s and reads its statement.", u.Username, g.Name))
	} else {
		h.flash(c, trc(c, "%s no longer leads %s.", u.Username, g.Name))
	}
	h.seeOther(c, "/admin/groups")
}

// setGroupLead makes u a lead of g or not, audited as group.lead; a user
// not in the group gets a ValidationError.
func (h *Handler) setGroupLead(c *gin.Context, g *models.Group, u *models.User, lead bool) error {
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("group.lead", g.Name, nil, map[string]any{"username": u.Username, "lead": lead}),
			tx.SetGroupLead(c.Request.Context(), g.ID, u.ID, lead)
	})
}

// apiGroupLead: PUT|DELETE /api/v1/admin/groups/:id/members/:username/lead
// — a member becomes a lead of the group, or stops being one; the answer
// is the group with its members and leads.
func (h *Handler) apiGroupLead(c *gin.Context) {
	g, ok := h.groupParam(c)
	if !ok {
		return
	}
	u, err := h.liveUserNamed(c.Request.Context(), c.Param("username"))
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := h.setGroupLead(c, g, u, c.Request.Method == http.MethodPut); err != nil {
		h.fail(c, err)
		return
	}
	h.answerGroup(c, g.ID)
}
