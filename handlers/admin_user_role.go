package handlers

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// errSelfRole: an admin cannot change their own role. Besides stopping an
// admin from locking themselves out by a slip, it keeps at least one admin
// (the one acting) in every change made through the portal.
var errSelfRole = newError(http.StatusConflict, "self_role", "you cannot change your own role; another admin can")

// adminUserRole: POST /admin/users/:id/role (role=admin|user), the "Make
// admin" and "Remove admin" buttons of the users page.
func (h *Handler) adminUserRole(c *gin.Context) {
	u, ok := h.userParam(c)
	if !ok {
		return
	}
	// Every user, quota, price and workbench becomes theirs to change:
	// asked without JavaScript too.
	if c.PostForm("role") == models.RoleAdmin && u.Role != models.RoleAdmin && !h.askedFirst(c, templates.ConfirmView{
		Question: trc(c, "Make %s an administrator? They can then change every user, quota, price and workbench.", u.Username),
		Yes:      trc(c, "Make admin"), Back: "/admin/users"}) {
		return
	}
	changed, err := h.setUserRole(c, u, c.PostForm("role"))
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		h.flashError(c, trc(c, "Role not changed: %s.", trcMsg(c, ve.Message)))
	case errors.Is(err, errSelfRole):
		h.flashError(c, trc(c, "Role not changed: you cannot change your own role; another admin can."))
	case err != nil:
		h.fail(c, err)
		return
	case !changed:
		h.flash(c, trc(c, "%s already has that role; nothing changed.", u.Username))
	case u.Role == models.RoleAdmin:
		h.flash(c, trc(c, "%s is now an administrator.", u.Username))
	default:
		h.flash(c, trc(c, "%s is no longer an administrator; their admin pages closed at once.", u.Username))
	}
	h.seeOther(c, "/admin/users")
}

// apiUserRole: PUT /api/v1/admin/users/:id/role {"role": "admin"|"user"};
// answers the user as GET /api/v1/admin/users lists them.
func (h *Handler) apiUserRole(c *gin.Context) {
	u, ok := h.userParam(c)
	if !ok {
		return
	}
	var body struct {
		Role string `json:"role"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	if _, err := h.setUserRole(c, u, body.Role); err != nil {
		h.fail(c, err)
		return
	}
	h.answerUser(c, u.ID)
}

// setUserRole gives u the role (audited as user.set_role) and updates u;
// changed is false when u had it already (nothing written, nothing
// audited). The role is read on every request, so a removed admin loses
// the admin pages and API at their next click.
func (h *Handler) setUserRole(c *gin.Context, u *models.User, role string) (changed bool, err error) {
	if u.ID == currentUser(c).ID {
		return false, errSelfRole
	}
	if role == u.Role {
		return false, nil
	}
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("user.set_role", u.Username, map[string]string{"role": u.Role}, map[string]string{"role": role}),
			tx.SetUserRole(c.Request.Context(), u.ID, role)
	})
	if err != nil {
		return false, err
	}
	u.Role = role
	return true, nil
}
