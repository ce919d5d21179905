package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

var (
	// errSelfDelete: an admin cannot delete their own account (as they
	// cannot disable it or change its role): another admin can.
	errSelfDelete = newError(http.StatusConflict, "self_delete", "you cannot delete your own account; another admin can")
	errLastAdmin  = newError(http.StatusConflict, "last_admin", models.ErrLastAdmin.Error())
)

// adminUserDeleteForm: GET /admin/users/:id/delete, the confirmation: what
// goes, what stays, and the username to type.
func (h *Handler) adminUserDeleteForm(c *gin.Context) {
	u, ok := h.liveUserParam(c)
	if !ok {
		return
	}
	h.renderUserDelete(c, http.StatusOK, u, nil)
}

func (h *Handler) renderUserDelete(c *gin.Context, status int, u *models.User, errs templates.FormErrors) {
	ctx := c.Request.Context()
	home, err := h.wbs.Home(ctx, u)
	if err != nil {
		h.fail(c, err)
		return
	}
	d, err := h.store.DeletionPreview(ctx, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.UserDeleteView{ID: u.ID, Username: u.Username, Tombstone: models.DeletedUserKey(u.Username, u.ID), Volume: home.Volume,
		Busy: home.Busy, Bookings: d.Bookings, Tokens: d.Tokens, SSHKeys: d.SSHKeys, Groups: d.Groups, Errors: errs}
	for _, wb := range home.Workbenches {
		v.Workbenches = append(v.Workbenches, wb.Name)
	}
	switch err := h.deletable(c, u); {
	case errors.Is(err, errSelfDelete):
		v.Refused = trc(c, "You cannot delete your own account; another administrator can.")
	case errors.Is(err, errLastAdmin):
		v.Refused = trc(c, "%s is the last administrator who can sign in: make another user an administrator first.", u.Username)
	case err != nil:
		h.fail(c, err)
		return
	}
	h.render(c, status, templates.UserDeletePage(h.page(c, trc(c, "Delete the account %s", u.Username)), v))
}

// adminUserDelete: POST /admin/users/:id/delete (confirm = the username).
// A wrong confirmation shows the page again and deletes nothing.
func (h *Handler) adminUserDelete(c *gin.Context) {
	u, ok := h.liveUserParam(c)
	if !ok {
		return
	}
	if strings.TrimSpace(c.PostForm("confirm")) != u.Username {
		h.renderUserDelete(c, http.StatusBadRequest, u, templates.FormErrors{"confirm": trc(c, "type %s exactly to confirm; nothing was deleted", u.Username)})
		return
	}
	old := u.Username
	erased, err := h.deleteUser(c, u)
	switch {
	case errors.Is(err, errSelfDelete), errors.Is(err, errLastAdmin):
		h.renderUserDelete(c, http.StatusConflict, u, nil)
		return
	case err != nil:
		h.fail(c, err)
		return
	case erased != nil:
		h.flashError(c, trc(c, "The account %s is deleted; its workbenches and home volume could not be removed yet (%s). The portal removes them by itself when it can.", old, h.refusalT(c, erased)))
	default:
		h.flash(c, trc(c, "The account %s is deleted with its workbenches and home volume; its bills are kept under %s.", old, models.DeletedUserKey(old, u.ID)))
	}
	h.seeOther(c, "/admin/users")
}

// apiUserDelete: DELETE /api/v1/admin/users/:id?confirm=<username>. It
// answers the tombstone as GET /api/v1/admin/users lists it, with
// erase_pending true while its workbenches or home volume are still to go
// (the engine down: the portal finishes it by itself).
func (h *Handler) apiUserDelete(c *gin.Context) {
	u, ok := h.liveUserParam(c)
	if !ok {
		return
	}
	if c.Query("confirm") != u.Username {
		h.fail(c, newError(http.StatusBadRequest, "invalid_confirm", "confirm: must be the account's username, "+u.Username+" (nothing was deleted)"))
		return
	}
	if _, err := h.deleteUser(c, u); err != nil {
		h.fail(c, err)
		return
	}
	h.answerUser(c, u.ID)
}

// deletable refuses to delete u for the signed-in admin: the last
// administrator who can sign in (said first: the sole admin trying their
// own account learns why no one could), or their own account.
func (h *Handler) deletable(c *gin.Context, u *models.User) error {
	last, err := h.store.IsLastAdmin(c.Request.Context(), u.ID)
	if err != nil {
		return err
	}
	if last {
		return errLastAdmin
	}
	if u.ID == currentUser(c).ID {
		return errSelfDelete
	}
	return nil
}

// deleteUser deletes u's account (audited as user.delete), ends every
// access it still has, and removes its workbenches and home volume. err is
// a refusal or a failure of the deletion itself; erased is what kept the
// engine's part from finishing now (the account is deleted all the same,
// and the portal's reconciliation finishes that part).
func (h *Handler) deleteUser(c *gin.Context, u *models.User) (erased error, err error) {
	if err := h.deletable(c, u); err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	old := u.Username
	if _, err := h.wbs.DeleteUser(ctx, currentUser(c).Username, u); err != nil {
		if errors.Is(err, models.ErrLastAdmin) {
			return nil, errLastAdmin
		}
		return nil, err
	}
	// The sessions ended with the commit (the account is disabled, in a new
	// auth epoch); what is open now is closed.
	h.endLiveAccess(c, u.ID, "the account was deleted")
	h.throttle.ClearAccount(old)
	if err := h.wbs.EraseUser(ctx, u.ID); err != nil {
		h.log.Warn("deleted account not erased yet", "id", u.ID, "err", err)
		return err, nil
	}
	return nil, nil
}
