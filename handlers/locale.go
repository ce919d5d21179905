package handlers

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/text/language"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// LangCookie keeps the language chosen with the header's switch for a
// visitor who is not signed in (the login page) and across sign-outs.
const LangCookie = "wb_lang"

// requestLocale picks the language of a request: the signed-in user's saved
// choice, else the wb_lang cookie, else Accept-Language, else English.
func requestLocale(r *http.Request, u *models.User) language.Tag {
	pref := ""
	if u != nil {
		pref = u.Locale
	}
	if pref == "" {
		if ck, err := r.Cookie(LangCookie); err == nil {
			pref = ck.Value
		}
	}
	return i18n.Negotiate(pref, r.Header.Get("Accept-Language"))
}

// chooseLocale is middleware (after loadUser) that puts the request's
// language, and the signed-in user's time zone, into its context, where
// i18n.T and the templates find them, and
// says it in Content-Language. The answer depends on the cookie and on
// Accept-Language, so caches must keep them apart.
func (h *Handler) chooseLocale(c *gin.Context) {
	u := currentUser(c)
	tag := requestLocale(c.Request, u)
	ctx := i18n.WithLocale(c.Request.Context(), tag)
	if u != nil && u.TimeZone != "" {
		// Saved after ParseTimeZone; a zone the binary no longer knows
		// reads UTC only.
		if _, loc, err := models.ParseTimeZone(u.TimeZone); err == nil {
			ctx = templates.WithTimeZone(ctx, loc)
		}
	}
	c.Request = c.Request.WithContext(ctx)
	c.Header("Content-Language", i18n.Get(tag).Lang())
	c.Writer.Header().Add("Vary", "Accept-Language, Cookie")
	c.Next()
}

// setLanguage is the header's language switch (POST /language, lang and
// back — not "next", which the login form uses for where to go after
// signing in): it saves the choice for a signed-in user, always sets the cookie
// (so the login page after a sign-out keeps the language), and returns to
// back, a path on this site (safeNext). Cross-origin posts are refused before this
// runs (CrossOriginProtection), as for every state change.
func (h *Handler) setLanguage(c *gin.Context) {
	next := safeNext(c.PostForm("back"))
	tag := i18n.Negotiate(c.PostForm("lang"), "")
	lang := i18n.Get(tag).Lang()
	if c.PostForm("lang") != lang {
		// Only the tags the switch offers; anything else is a bad request
		// rather than a silent English.
		h.fail(c, newError(http.StatusBadRequest, "bad_language", "unsupported language"))
		return
	}
	if u := currentUser(c); u != nil && !c.GetBool(ctxBearerKey) {
		if err := h.store.SetUserLocale(c.Request.Context(), u.ID, lang); err != nil {
			h.fail(c, err)
			return
		}
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: LangCookie, Value: lang, Path: "/", MaxAge: int((365 * 24 * time.Hour).Seconds()),
		HttpOnly: true, Secure: strings.HasPrefix(h.cfg.PublicURL, "https://"), SameSite: http.SameSiteLaxMode})
	h.seeOther(c, next)
}

// ProxyLocale is the proxy's Options.Locale: the request's context in the
// reader's language (their language cookie, else Accept-Language; the
// proxy does not load the saved preference).
func (h *Handler) ProxyLocale(r *http.Request) context.Context {
	return i18n.WithLocale(r.Context(), requestLocale(r, nil))
}
