package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

func (h *Handler) adminUsers(c *gin.Context) {
	h.renderUsers(c, http.StatusOK, templates.NewUserForm{})
}

func (h *Handler) renderUsers(c *gin.Context, status int, form templates.NewUserForm) {
	ctx := c.Request.Context()
	search := c.Query("q")
	users, pages, err := pageOf(c, "/admin/users", func(offset, limit int) ([]models.User, int64, error) {
		return h.store.UserPage(ctx, search, true, offset, limit)
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	groups, err := h.store.ListGroups(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	memberOf := map[string][]string{}
	for _, g := range groups {
		for _, m := range g.Members {
			memberOf[m] = append(memberOf[m], g.Name)
		}
	}
	storage, err := h.storageOfUsers(ctx, users)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.UsersView{Form: form, Self: currentUser(c).Username, Search: search, Pages: pages}
	for _, g := range groups { // the add-user form's checkboxes
		v.Groups = append(v.Groups, templates.GroupRow{ID: g.ID, Name: g.Name})
	}
	for _, u := range users {
		row := templates.UserRow{ID: u.ID, Username: u.Username, DisplayName: seededText(c.Request.Context(), u.DisplayName),
			Email: u.Email, Role: u.Role, Disabled: u.Disabled, SSO: u.SSO(), Deleted: u.Deleted(), Groups: memberOf[u.Username]}
		row.Storage = storage[u.ID].view()
		if !row.Deleted { // a tombstone's name was never typed at the login
			row.LoginFailures, row.LoginLockedFor, row.LoginDelayedFor = h.loginLockState(c.Request.Context(), u.Username)
		}
		v.Users = append(v.Users, row)
	}
	h.render(c, status, templates.AdminUsersPage(h.page(c, trc(c, "Users")), v))
}

func (h *Handler) adminUserCreate(c *gin.Context) {
	n := models.NewUser{Username: c.PostForm("username"), DisplayName: c.PostForm("display_name"),
		Email: c.PostForm("email"), Role: c.PostForm("role"), Password: c.PostForm("password")}
	// The groups ticked: the same call as the API's "groups", so a group
	// deleted since the page was loaded refuses the form and creates
	// nothing, rather than an account outside its class.
	groups := c.PostFormArray("groups")
	u, gs, err := h.createUser(c, n, groups...)
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		h.renderUsers(c, http.StatusBadRequest, templates.NewUserForm{Username: n.Username, DisplayName: n.DisplayName,
			Email: n.Email, Role: n.Role, Groups: groups, Errors: templates.FormErrors{ve.Field: trcMsg(c, ve.Message)}})
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	switch len(gs) {
	case 0:
		h.flash(c, trc(c, "User %s added.", u.Username))
	case 1:
		h.flash(c, trc(c, "User %s added to the group %s.", u.Username, gs[0]))
	default:
		h.flash(c, trc(c, "User %s added to the groups %s.", u.Username, strings.Join(gs, ", ")))
	}
	h.seeOther(c, "/admin/users")
}

func (h *Handler) adminUserDisable(c *gin.Context) {
	u, ok := h.userParam(c)
	if !ok {
		return
	}
	disabled, ok := h.formSwitch(c, "disabled")
	if !ok {
		return
	}
	// Their sessions end and their work stops: asked without JavaScript too.
	if disabled && !u.Disabled && !h.askedFirst(c, templates.ConfirmView{
		Question: trc(c, "Disable %s? Their sessions and API tokens end and their running workbenches stop (homes are kept).", u.Username),
		Yes:      trc(c, "Disable"), Back: "/admin/users"}) {
		return
	}
	released, err := h.setUserDisabled(c, u, disabled)
	if err != nil {
		h.fail(c, err)
		return
	}
	if disabled {
		msg := trc(c, "%s is disabled and can no longer log in; their sessions and API tokens ended and their workbenches are stopping (homes are kept).", u.Username)
		switch {
		case released == 1:
			msg += " " + trc(c, "Their GPU booking was released.")
		case released > 1:
			msg += " " + trc(c, "Their %d GPU bookings were released.", released)
		}
		h.flash(c, msg)
	} else {
		h.flash(c, trc(c, "%s is enabled again.", u.Username))
	}
	h.seeOther(c, "/admin/users")
}

// apiUserDisabled: PUT /api/v1/admin/users/:id/disabled {"disabled": bool},
// what the users page's Disable and Enable buttons do; answers the user.
func (h *Handler) apiUserDisabled(c *gin.Context) {
	u, ok := h.userParam(c)
	if !ok {
		return
	}
	var body struct {
		Disabled *bool `json:"disabled"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	if body.Disabled == nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_disabled", "disabled: must be true or false"))
		return
	}
	if _, err := h.setUserDisabled(c, u, *body.Disabled); err != nil {
		h.fail(c, err)
		return
	}
	h.answerUser(c, u.ID)
}

// setUserDisabled disables or enables u (audited as user.set_disabled).
// Disabling ends everything at once: sessions, tokens, open notebooks
// (WebSockets included), running workbenches and GPU bookings, whose count
// it returns. Homes are kept.
func (h *Handler) setUserDisabled(c *gin.Context, u *models.User, disabled bool) (released int64, err error) {
	if u.ID == currentUser(c).ID {
		return 0, newError(http.StatusConflict, "self_disable", "you cannot disable your own account")
	}
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("user.set_disabled", u.Username, map[string]bool{"disabled": u.Disabled}, map[string]bool{"disabled": disabled}),
			tx.SetUserDisabled(c.Request.Context(), u.ID, disabled)
	})
	if err != nil || !disabled {
		return 0, err
	}
	if _, err := h.revokeUser(c, u, "the account was disabled"); err != nil {
		return 0, err
	}
	h.stopWorkbenchesOf(u, models.Reasonf("stopped: the account %s was disabled by an administrator (%s)", u.Username, currentUser(c).Username))
	// Their bookings would hold units nobody can use.
	return h.wbs.ReleaseReservationsOf(c.Request.Context(), currentUser(c).Username, u, "the account was disabled")
}

// answerUser answers the user id as GET /api/v1/admin/users lists them,
// read again after a change.
func (h *Handler) answerUser(c *gin.Context, id int64) {
	u, err := h.store.UserByID(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.answerUserWith(c, http.StatusOK, u)
}

// answerUserWith answers u as GET /api/v1/admin/users lists it, with its
// home storage.
func (h *Handler) answerUserWith(c *gin.Context, status int, u *models.User) {
	out, err := h.apiUsersWithStorage(c.Request.Context(), []models.User{*u})
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(status, out[0])
}

func (h *Handler) adminUserPassword(c *gin.Context) {
	u, ok := h.userParam(c)
	if !ok {
		return
	}
	// The hash is made inside the transaction (SetPassword): an admin's
	// reset is rare, and the row must not outlive a refused password.
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("user.reset_password", u.Username, nil, nil), tx.SetPassword(c.Request.Context(), u.ID, c.PostForm("password"))
	})
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		h.flashError(c, trc(c, "Password not changed: %s. Choose another one and save again.", trcMsg(c, ve.Message)))
		h.seeOther(c, "/admin/users")
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	// A reset means the old password may be known to someone else: every
	// session and API token made with it ends now.
	if _, err := h.revokeUser(c, u, "the password was reset"); err != nil {
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Password of %s reset; their sessions and API tokens ended.", u.Username))
	h.seeOther(c, "/admin/users")
}

// userParam loads the user named by the :id route parameter.
func (h *Handler) userParam(c *gin.Context) (*models.User, bool) {
	return byIDParam(h, c, h.store.UserByID)
}

// byIDParam loads what the :id route parameter names with load; an id
// that is not a number is a 404, as one that names nothing.
func byIDParam[T any](h *Handler, c *gin.Context, load func(context.Context, int64) (T, error)) (T, bool) {
	var zero T
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return zero, false
	}
	v, err := load(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return zero, false
	}
	return v, true
}

// userAudit is what the audit log records of a user (never the hash).
func userAudit(u *models.User) map[string]any {
	return map[string]any{"username": u.Username, "role": u.Role, "email": u.Email, "disabled": u.Disabled}
}

// createUser creates the account with its audit row (user.create), and
// makes it a member of groups (existing ones, by name), each audited as
// group.add_member as the groups page's add is: all in one transaction, so
// an unknown group creates nothing. It returns the names of the groups
// joined, as stored, each once.
func (h *Handler) createUser(c *gin.Context, n models.NewUser, groups ...string) (*models.User, []string, error) {
	// Hashed before the transaction: not while holding the write lock.
	n, err := h.store.HashNewUser(c.Request.Context(), n)
	if err != nil {
		return nil, nil, err
	}
	var u *models.User
	var joined []string
	err = h.wbs.AuditedAll(c.Request.Context(), currentUser(c).Username, func(tx *models.Store) ([]models.AuditRecord, error) {
		var gs []*models.Group
		var err error
		if u, gs, err = tx.CreateUserInGroups(c.Request.Context(), n, groups); err != nil {
			return nil, err
		}
		recs := []models.AuditRecord{auditRec("user.create", u.Username, nil, userAudit(u))}
		for _, g := range gs {
			recs = append(recs, auditRec("group.add_member", g.Name, nil, map[string]string{"username": u.Username}))
			joined = append(joined, g.Name)
		}
		return recs, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return u, joined, nil
}

// apiUsers: GET /api/v1/admin/users?limit=&cursor=, by id, a page at a
// time (api_paging.go): a lab has hundreds of accounts.
func (h *Handler) apiUsers(c *gin.Context) {
	limit, after, ok := h.apiPageParams(c, "users")
	if !ok {
		return
	}
	afterID, err := idCursor(after)
	if err != nil {
		h.fail(c, err)
		return
	}
	users, err := h.store.UsersAfter(c.Request.Context(), afterID, limit+1)
	if err != nil {
		h.fail(c, err)
		return
	}
	listed, err := h.apiUsersWithStorage(c.Request.Context(), users[:min(len(users), limit)])
	if err != nil {
		h.fail(c, err)
		return
	}
	byID := make(map[int64]APIUser, len(listed))
	for _, a := range listed {
		byID[a.ID] = a
	}
	writeAPIPage(c, "users", users, limit, func(u *models.User) string { return idCursorOf(u.ID) },
		func(u *models.User) APIUser { return byID[u.ID] })
}

// apiUserCreate: POST /api/v1/admin/users {username, display_name, email,
// role, password, groups}; groups names existing groups the user joins
// (unknown_group, and nothing created, for one that does not exist).
func (h *Handler) apiUserCreate(c *gin.Context) {
	var body struct {
		Username    string   `json:"username"`
		DisplayName string   `json:"display_name"`
		Email       string   `json:"email"`
		Role        string   `json:"role"`
		Password    string   `json:"password"`
		Groups      []string `json:"groups"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	u, _, err := h.createUser(c, models.NewUser{Username: body.Username, DisplayName: body.DisplayName,
		Email: body.Email, Role: body.Role, Password: body.Password}, body.Groups...)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.answerUserWith(c, http.StatusCreated, u)
}
