package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
)

// quotaSubject resolves the :scope/:name of a quota route to a scope and id.
func (h *Handler) quotaSubject(c *gin.Context) (scope string, id int64, ok bool) {
	ctx := c.Request.Context()
	switch apiScope(c.Param("scope")) {
	case models.ScopeUser:
		u, err := h.liveUserNamed(ctx, c.Param("name"))
		if err != nil {
			h.fail(c, err)
			return "", 0, false
		}
		return models.ScopeUser, u.ID, true
	case models.ScopeGroup:
		g, err := h.store.GroupByName(ctx, c.Param("name"))
		if err != nil {
			h.fail(c, err)
			return "", 0, false
		}
		return models.ScopeGroup, g.ID, true
	default:
		h.fail(c, &models.ValidationError{Field: "scope", Message: "must be users or groups (/admin/quotas/users/{name}, /admin/quotas/groups/{name})"})
		return "", 0, false
	}
}

// apiScope reads the scope of an admin API path in the singular or the
// plural: quotas were /quotas/users/…, booking caps /reservation-caps/user/…
// and priority defaults /priority-defaults/group/…, and the other spelling
// was answered "not found". Anything else is returned as it was.
func apiScope(s string) string {
	switch s {
	case "users":
		return models.ScopeUser
	case "groups":
		return models.ScopeGroup
	case "flavors":
		return models.PriorityScopeFlavor
	}
	return s
}

// apiQuotaGet: GET /api/v1/admin/quotas/{users|groups}/{name}. For a user
// it also returns the effective quota (after groups and the default).
func (h *Handler) apiQuotaGet(c *gin.Context) {
	scope, id, ok := h.quotaSubject(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	own, set, err := h.store.Quota(ctx, scope, id)
	if err != nil {
		h.fail(c, err)
		return
	}
	out := APIQuotaSubject{Scope: scope, Name: c.Param("name"), Quota: own, Overridden: &set}
	if scope == models.ScopeUser {
		eff, err := h.store.EffectiveQuota(ctx, id)
		if err != nil {
			h.fail(c, err)
			return
		}
		out.Effective = &eff
	}
	c.JSON(http.StatusOK, out)
}

// apiQuotaPut: PUT /api/v1/admin/quotas/{users|groups}/{name} with a quota
// object; null fields inherit (groups, then the default).
func (h *Handler) apiQuotaPut(c *gin.Context) {
	scope, id, ok := h.quotaSubject(c)
	if !ok {
		return
	}
	h.putQuota(c, scope, id, c.Param("name"))
}

// apiDefaultQuota: GET|PUT /api/v1/admin/quotas/default — null = unlimited.
func (h *Handler) apiDefaultQuotaGet(c *gin.Context) {
	q, _, err := h.store.Quota(c.Request.Context(), models.ScopeDefault, 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, APIQuotaSubject{Scope: models.ScopeDefault, Quota: q})
}

func (h *Handler) apiDefaultQuotaPut(c *gin.Context) {
	h.putQuota(c, models.ScopeDefault, 0, "default")
}

func (h *Handler) putQuota(c *gin.Context, scope string, id int64, name string) {
	var l models.Limits
	if !h.bindJSON(c, &l) {
		return
	}
	if err := h.wbs.SetQuota(c.Request.Context(), orchestrator.QuotaChange{Actor: currentUser(c).Username, Scope: scope, SubjectID: id,
		Name: name, Limits: l}); err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, APIQuotaSubject{Scope: scope, Name: name, Quota: l})
}
