package handlers

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// adminUserRenameForm: GET /admin/users/:id/rename, the rename form with
// what a rename changes for the user, read before the admin confirms.
func (h *Handler) adminUserRenameForm(c *gin.Context) {
	u, ok := h.liveUserParam(c)
	if !ok {
		return
	}
	h.renderUserRename(c, http.StatusOK, u, u.Username, nil)
}

func (h *Handler) renderUserRename(c *gin.Context, status int, u *models.User, typed string, errs templates.FormErrors) {
	v := templates.UserRenameView{ID: u.ID, Username: u.Username, SSO: u.SSO(), Name: typed, Errors: errs}
	h.render(c, status, templates.UserRenamePage(h.page(c, trc(c, "Rename %s", u.Username)), v))
}

// adminUserRename: POST /admin/users/:id/rename (username). A refused name
// is said on the form, as typed.
func (h *Handler) adminUserRename(c *gin.Context) {
	u, ok := h.liveUserParam(c)
	if !ok {
		return
	}
	old, name := u.Username, c.PostForm("username")
	renamed, err := h.renameUser(c, u, name)
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		status := http.StatusBadRequest
		if ve.Taken {
			status = http.StatusConflict
		}
		h.renderUserRename(c, status, u, name, templates.FormErrors{"username": trcMsg(c, ve.Message)})
		return
	case err != nil:
		h.fail(c, err)
		return
	case !renamed:
		h.flash(c, trc(c, "%s already has that name; nothing changed.", old))
	default:
		h.flash(c, trc(c, "%s is now %s and signs in with the new name; they were told in their notifications.", old, u.Username))
	}
	h.seeOther(c, "/admin/users")
}

// apiUserRename: PUT /api/v1/admin/users/:id/username {"username": "…"};
// answers the user as GET /api/v1/admin/users lists them.
func (h *Handler) apiUserRename(c *gin.Context) {
	u, ok := h.liveUserParam(c)
	if !ok {
		return
	}
	var body struct {
		Username *string `json:"username"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	if body.Username == nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_username", "username: is required (the account's new name)"))
		return
	}
	if _, err := h.renameUser(c, u, *body.Username); err != nil {
		h.fail(c, err)
		return
	}
	h.answerUser(c, u.ID)
}

// renameUser renames u (audited as user.rename; u is told) and updates u.
// Failed logins counted against the old name are forgotten: they must not
// hold back a new account given that name.
func (h *Handler) renameUser(c *gin.Context, u *models.User, name string) (bool, error) {
	old := u.Username
	renamed, err := h.wbs.RenameUser(c.Request.Context(), currentUser(c).Username, u, name)
	if renamed {
		h.throttle.ClearAccount(old)
	}
	return renamed, err
}

// liveUserParam is userParam for a change to an account: a deleted
// account's tombstone (kept for its bills) is not found.
func (h *Handler) liveUserParam(c *gin.Context) (*models.User, bool) {
	u, ok := h.userParam(c)
	if ok && u.Deleted() {
		h.fail(c, errNotFound)
		return nil, false
	}
	return u, ok
}

// liveUserNamed is the live account named username: a deleted account's
// tombstone is not found (it joins no group, books nothing and gets no
// quota; its bills and usage are still read by its name).
func (h *Handler) liveUserNamed(ctx context.Context, username string) (*models.User, error) {
	u, err := h.store.UserByUsername(ctx, username)
	if err == nil && u.Deleted() {
		return nil, models.ErrNotFound
	}
	return u, err
}
