package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
	"workbench/templates"
)

// adminEgress: GET /admin/egress — the egress policy and whether it is
// enforced. The rules are re-checked on the way, so the page shows the
// host as it is now.
func (h *Handler) adminEgress(c *gin.Context) {
	_ = h.wbs.EnforceEgress(c.Request.Context())
	h.renderEgress(c, http.StatusOK, nil)
}

// adminEgressSave: POST /admin/egress — store and apply a new policy.
func (h *Handler) adminEgressSave(c *gin.Context) {
	mode, allow := c.PostForm("mode"), c.PostForm("allow")
	p, err := parseEgressInput(mode, allow)
	var fe *orchestrator.EgressFieldError
	if errors.As(err, &fe) {
		h.renderEgress(c, http.StatusBadRequest, &templates.EgressView{Mode: mode, Allow: allow, Errors: templates.FormErrors{fe.Field: fe.Message}})
		return
	}
	st, ok := h.saveEgress(c, p)
	if !ok {
		return
	}
	switch {
	case st.Enforced || st.Pending && st.Problem == "":
		h.flash(c, trc(c, "Egress policy saved."))
	default:
		h.flash(c, trc(c, "Egress policy saved but NOT enforced: %s", st.Problem))
	}
	h.seeOther(c, "/admin/egress")
}

// parseEgressInput validates what an admin sent; an empty mode is an error
// here (the default applies only to an install that never chose).
func parseEgressInput(mode, allow string) (orchestrator.EgressPolicy, error) {
	if strings.TrimSpace(mode) == "" {
		return orchestrator.EgressPolicy{}, &orchestrator.EgressFieldError{Field: "mode", Message: "choose internet, none or all"}
	}
	return orchestrator.ParseEgressPolicy(mode, allow)
}

// saveEgress stores and applies p, audited; false when it failed (answered).
func (h *Handler) saveEgress(c *gin.Context, p orchestrator.EgressPolicy) (orchestrator.EgressStatus, bool) {
	st, err := h.wbs.SetEgressPolicyBy(c.Request.Context(), p, currentUser(c).Username)
	if err != nil {
		h.fail(c, err)
		return st, false
	}
	return st, true
}

func (h *Handler) renderEgress(c *gin.Context, status int, form *templates.EgressView) {
	st := h.wbs.EgressStatus()
	v := templates.EgressView{Mode: string(st.Policy.Mode), Allow: strings.Join(st.Policy.AllowStrings(), "\n")}
	if st.Policy.Mode == "" { // never enforced yet (engine down): show the setting
		if p, err := h.wbs.EgressPolicy(c.Request.Context()); err == nil {
			v.Mode, v.Allow = string(p.Mode), strings.Join(p.AllowStrings(), "\n")
		}
	}
	if form != nil {
		v.Mode, v.Allow, v.Errors = form.Mode, form.Allow, trcErrs(c, form.Errors)
	}
	v.Enforced, v.Pending, v.Problem, v.Bridge = st.Enforced, st.Pending, st.Problem, st.Bridge
	if !st.CheckedAt.IsZero() {
		v.CheckedAt = templates.WhenIn(c.Request.Context(), &st.CheckedAt) // as every date of the pages reads
	}
	h.render(c, status, templates.AdminEgressPage(h.page(c, trc(c, "Network egress")), v))
}
