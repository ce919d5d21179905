package handlers

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
)

// egressBody is the JSON of PUT /api/v1/admin/egress.
type egressBody struct {
	Mode  string   `json:"mode"`
	Allow []string `json:"allow"`
}

// apiEgress: GET /api/v1/admin/egress — the policy and its enforcement.
func (h *Handler) apiEgress(c *gin.Context) {
	_ = h.wbs.EnforceEgress(c.Request.Context())
	c.JSON(http.StatusOK, egressStatusJSON(h.wbs.EgressStatus()))
}

// apiEgressPut: PUT /api/v1/admin/egress — replace the policy.
func (h *Handler) apiEgressPut(c *gin.Context) {
	var b egressBody
	if !h.bindJSON(c, &b) {
		return
	}
	for _, a := range b.Allow {
		if strings.ContainsAny(a, ", \n\t") || a == "" {
			h.fail(c, newError(http.StatusBadRequest, "invalid_allow", "allow: each entry is one CIDR such as 10.20.0.0/16"))
			return
		}
	}
	p, err := parseEgressInput(b.Mode, strings.Join(b.Allow, ","))
	var fe *orchestrator.EgressFieldError
	if errors.As(err, &fe) {
		h.fail(c, newError(http.StatusBadRequest, "invalid_"+fe.Field, fe.Error()))
		return
	}
	st, ok := h.saveEgress(c, p)
	if !ok {
		return
	}
	c.JSON(http.StatusOK, egressStatusJSON(st))
}

func egressStatusJSON(st orchestrator.EgressStatus) APIEgress {
	out := APIEgress{Mode: string(st.Policy.Mode), Allow: nonNil(st.Policy.AllowStrings()), Enforced: st.Enforced,
		Pending: st.Pending, Problem: st.Problem, Bridge: st.Bridge}
	if !st.CheckedAt.IsZero() {
		out.CheckedAt = st.CheckedAt.Format(time.RFC3339)
	}
	return out
}
