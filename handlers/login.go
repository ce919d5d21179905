package handlers

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

func (h *Handler) loginForm(c *gin.Context) {
	if currentUser(c) != nil {
		seeOther(c, safeNext(c.Query("next")))
		return
	}
	h.render(c, http.StatusOK, templates.LoginPage(h.page(c, "Log in"), templates.LoginForm{Next: safeNext(c.Query("next"))}))
}

// login checks the form, throttles failures per username and per address,
// and rotates the session token so a planted session id is useless.
func (h *Handler) login(c *gin.Context) {
	username := strings.ToLower(strings.TrimSpace(c.PostForm("username")))
	password := c.PostForm("password")
	next := safeNext(c.PostForm("next"))
	form := templates.LoginForm{Username: username, Next: next}
	addr := c.ClientIP()

	if ok, wait := h.throttle.Allowed(username, addr); !ok {
		form.Error = fmt.Sprintf("Too many failed attempts. Try again in %d minutes.", int(math.Ceil(wait.Minutes())))
		h.log.Warn("login throttled", "username", username, "addr", addr)
		h.render(c, http.StatusTooManyRequests, templates.LoginPage(h.page(c, "Log in"), form))
		return
	}
	u, err := h.store.Authenticate(c.Request.Context(), username, password)
	if errors.Is(err, models.ErrBadCredentials) {
		h.throttle.Failed(username, addr)
		h.log.Info("login failed", "username", username, "addr", addr)
		form.Error = "Invalid username or password."
		h.render(c, http.StatusUnauthorized, templates.LoginPage(h.page(c, "Log in"), form))
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.throttle.Succeeded(username)
	ctx := c.Request.Context()
	if err := h.sessions.RenewToken(ctx); err != nil {
		h.fail(c, err)
		return
	}
	h.sessions.Put(ctx, sessionUserKey, u.ID)
	h.sessions.Put(ctx, sessionEpochKey, u.AuthEpoch)
	h.log.Info("login", "username", u.Username, "addr", addr)
	seeOther(c, next)
}

func (h *Handler) logout(c *gin.Context) {
	if ck, err := c.Request.Cookie(h.sessions.Cookie.Name); err == nil {
		h.proxyAuth.forget(ck.Value) // the notebook proxy stops trusting it now
		h.endNotebookAccess(c, models.HashSecret(ck.Value))
	}
	if err := h.sessions.Destroy(c.Request.Context()); err != nil {
		h.fail(c, err)
		return
	}
	// In path mode notebooks share this origin: "storage" unregisters any
	// service worker a notebook registered and clears what it stored.
	c.Header("Clear-Site-Data", `"storage"`)
	seeOther(c, "/login")
}
