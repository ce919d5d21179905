package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// homeResetTarget is whose home a reset route is about: the current user's
// own (/settings/home) or, for admins, anyone's (/admin/users/{id}/home).
func (h *Handler) homeResetTarget(c *gin.Context) (*models.User, bool) {
	if c.Param("id") == "" {
		return currentUser(c), true
	}
	return h.liveUserParam(c)
}

func homeResetPaths(self bool, u *models.User) (action, back string) {
	if self {
		return "/settings/home/reset", "/"
	}
	return "/admin/users/" + strconv.FormatInt(u.ID, 10) + "/home/reset", "/admin/users"
}

// homeResetForm: GET /settings/home and GET /admin/users/{id}/home.
func (h *Handler) homeResetForm(c *gin.Context) {
	u, ok := h.homeResetTarget(c)
	if !ok {
		return
	}
	h.renderHomeReset(c, http.StatusOK, u, nil)
}

func (h *Handler) renderHomeReset(c *gin.Context, status int, u *models.User, errs templates.FormErrors) {
	info, err := h.wbs.Home(c.Request.Context(), u)
	if err != nil {
		h.fail(c, err)
		return
	}
	self := u.ID == currentUser(c).ID && c.Param("id") == ""
	v := templates.HomeResetView{Username: u.Username, Self: self, Volume: info.Volume, Busy: info.Busy, NotRecorded: info.NotRecorded, Errors: errs}
	v.Action, v.Back = homeResetPaths(self, u)
	for _, wb := range info.Workbenches {
		v.Workbenches = append(v.Workbenches, wb.Name)
	}
	h.render(c, status, templates.HomeResetPage(h.page(c, i18n.T(c.Request.Context(), "Reset home volume")), v))
}

// homeReset: POST /settings/home/reset and POST /admin/users/{id}/home/reset.
// The confirmation is the user name typed out; the reset is audited.
func (h *Handler) homeReset(c *gin.Context) {
	u, ok := h.homeResetTarget(c)
	if !ok {
		return
	}
	if strings.TrimSpace(c.PostForm("confirm")) != u.Username {
		h.renderHomeReset(c, http.StatusBadRequest, u, templates.FormErrors{"confirm": i18n.T(c.Request.Context(), "type %s exactly to confirm; nothing was deleted", u.Username)})
		return
	}
	self := c.Param("id") == ""
	_, back := homeResetPaths(self, u)
	if err := h.wbs.ResetHome(c.Request.Context(), u); err != nil {
		if spe := (*orchestrator.StopPendingError)(nil); errors.As(err, &spe) {
			// A stop not recorded yet (a page loaded before it offered
			// the form): the page again, whose note says why and offers
			// no form until the record; a flash could not be kept.
			h.renderHomeReset(c, http.StatusServiceUnavailable, u, nil)
			return
		}
		h.refuseTo(c, i18n.T(c.Request.Context(), "The home volume was not reset: %s.", h.refusalClause(c, err)),
			c.Request.URL.Path[:len(c.Request.URL.Path)-len("/reset")])
		return
	}
	h.record(c, "home.reset", u.Username, nil, nil)
	msg := i18n.T(c.Request.Context(), "Your home volume was reset: its files are deleted, and the next start gets an empty home.")
	if !self {
		msg = i18n.T(c.Request.Context(), "The home volume of %s was reset: its files are deleted, and the next start gets an empty home.", u.Username)
	}
	h.flash(c, msg)
	h.seeOther(c, back)
}
