package handlers

import (
	"context"
	"net/http"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// page builds the layout's view model for the current request.
func (h *Handler) page(c *gin.Context, title string) templates.Page {
	p := h.pageFor(c.Request.Context(), c.Request, currentUser(c), title)
	if p.User != nil {
		p.Flash = h.sessions.PopString(c.Request.Context(), flashKey)
		p.FlashError = h.sessions.PopString(c.Request.Context(), flashKindKey) == "error"
	}
	return p
}

// pageFor is the layout's data for r, read by u (nil: signed out), in
// ctx's language: the top bar (who, the unread count), the banner. Every
// page has it: those of the gin router through page, and the portal's
// own pages under /wb/ (not running, not found), served outside it,
// directly; the not-running page had been given the banner alone and
// showed the bell without its count. They take no flash: the session
// there is read, not saved, and a flash popped would be lost.
func (h *Handler) pageFor(ctx context.Context, r *http.Request, u *models.User, title string) templates.Page {
	p := templates.Page{Title: title, Path: r.URL.Path, Here: r.URL.RequestURI(), Version: h.cfg.Version}
	if u != nil {
		p.User = &templates.NavUser{Username: u.Username, Name: seededText(ctx, u.Name()), IsAdmin: u.IsAdmin()}
		p.PathMode = h.cfg.NotebookDomain == ""
		p.Unread = h.unreadCount(r, u.ID)
	}
	p.Banner = h.banner(ctx, p.User)
	return p
}

// banner is the layout's line across every portal page for user (nil:
// signed out) about the deployment: GPUs simulated, no GPU backend (to an
// administrator), egress policy not enforced (to an administrator). The
// pages outside the gin router (not found, not running) show it too.
func (h *Handler) banner(ctx context.Context, user *templates.NavUser) string {
	var b string
	switch {
	case user == nil:
		return "" // nothing about the deployment before login
	case h.pool.Simulated():
		b = i18n.T(ctx, "GPUs are simulated (%s): workbenches get no real GPU.", h.pool.Backend())
	case h.pool.Backend() == "none" && user.IsAdmin:
		b = i18n.Reason(ctx, h.pool.Status())
	}
	if user.IsAdmin && h.wbs.EgressStatus().Problem != "" {
		if b != "" {
			b += " "
		}
		b += i18n.T(ctx, "Workbench egress policy NOT enforced: containers can reach this host and link-local addresses (Admin → Egress).")
	}
	return b
}

// unreadCount is the top bar's count of the user's unread notifications; 0
// when it cannot be read (the page is still worth showing), with a warning
// unless the reader left (issue 15: a client that goes away is no warning).
func (h *Handler) unreadCount(r *http.Request, userID int64) int64 {
	n, err := h.store.UnreadNotifications(r.Context(), userID)
	if err != nil && !proxy.ClientGone(r, err) {
		h.log.Warn("count unread notifications", "err", err)
	}
	return n
}

// render writes a templ component with the request's context.
func (h *Handler) render(c *gin.Context, status int, comp templ.Component) {
	c.Status(status)
	c.Header("Content-Type", "text/html; charset=utf-8")
	if err := comp.Render(c.Request.Context(), c.Writer); err != nil {
		if proxy.ClientGone(c.Request, err) {
			h.log.Debug("render abandoned by the client", "path", c.Request.URL.Path, "err", err)
			return
		}
		h.log.Error("render failed", "path", c.Request.URL.Path, "err", err)
	}
}

// seeOther redirects after a form post (POST/redirect/GET). An error the
// form put in the session for the next page (flashError) lives in the
// database: while that cannot be written (a full disk), the session is
// not saved and the next page came without a word, as if the form had
// worked. So with an error pending the session is saved here first, and
// if that fails the error is answered at once, on an error page, instead
// of the redirect. (A success message lost that way costs nothing: the
// next page shows what was done.)
func (h *Handler) seeOther(c *gin.Context, to string) {
	if msg := c.GetString(pendingErrorKey); msg != "" {
		ctx := c.Request.Context()
		if _, _, err := h.sessions.Commit(ctx); err != nil {
			status := http.StatusInternalServerError
			if models.Unwritable(err) {
				status = http.StatusServiceUnavailable
			}
			h.log.Info("form error answered on a page: the session cannot be saved", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
			// Said by this page: not a second time, as its flash.
			h.sessions.Remove(ctx, flashKey)
			h.sessions.Remove(ctx, flashKindKey)
			h.render(c, status, templates.ErrorPage(h.page(c, i18n.T(ctx, "Error")), status, msg))
			c.Abort()
			return
		}
	}
	c.Redirect(http.StatusSeeOther, to)
}
