package handlers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates/i18n"
)

// workbenchPortAdd: the owner declares one more extra HTTP port on their
// workbench (e.g. 6006 for TensorBoard), reached at /wb/{id}/port/{n}/
// with the same owner-only, CSRF and header rules as the image's ports.
func (h *Handler) workbenchPortAdd(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	port, err := strconv.Atoi(strings.TrimSpace(c.PostForm("port")))
	if err != nil {
		h.flashError(c, i18n.T(c.Request.Context(), "Could not add the port: give a port number, like 6006"))
		h.seeOther(c, "/workbenches/"+wb.ID)
		return
	}
	if slices.Contains(wb.ExtraPorts, port) {
		h.flash(c, i18n.T(c.Request.Context(), "Port %d is already declared; nothing changed.", port))
		h.seeOther(c, "/workbenches/"+wb.ID)
		return
	}
	h.savePorts(c, wb, append(slices.Clone(wb.ExtraPorts), port))
}

// workbenchPortRemove: the owner removes a port they declared.
func (h *Handler) workbenchPortRemove(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	port, _ := strconv.Atoi(c.Param("port"))
	h.savePorts(c, wb, slices.DeleteFunc(slices.Clone(wb.ExtraPorts), func(p int) bool { return p == port }))
}

// apiWorkbenchPorts: PUT /api/v1/workbenches/{id}/ports {"ports": [6006]}
// replaces the owner's declared ports.
func (h *Handler) apiWorkbenchPorts(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	var b struct {
		Ports *[]int `json:"ports"`
	}
	if !h.bindJSON(c, &b) {
		return
	}
	// A body without "ports" is a mistake, not "no ports": it cleared
	// every declared port. [] removes them all on purpose.
	if b.Ports == nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_ports", `send {"ports": [6006, …]} ([] removes every declared port)`))
		return
	}
	h.savePorts(c, wb, *b.Ports)
}

func (h *Handler) savePorts(c *gin.Context, wb *models.Workbench, ports []int) {
	var saved []int
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		saved, err = tx.SetWorkbenchPorts(c.Request.Context(), wb.ID, ports)
		return auditRec("workbench.ports", wb.ID, wb.ExtraPorts, saved), err
	})
	if err != nil {
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.refuseTo(c, i18n.T(c.Request.Context(), "Could not change the ports: %s.", h.refusalClause(c, err)), "/workbenches/"+wb.ID)
		return
	}
	if isAPI(c) {
		c.JSON(http.StatusOK, gin.H{"id": wb.ID, "extra_ports": saved})
		return
	}
	h.seeOther(c, "/workbenches/"+wb.ID)
}
