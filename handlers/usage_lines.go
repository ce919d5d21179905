package handlers

import (
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// apiUsageLines: GET /api/v1/usage/lines?month=YYYY-MM (default this
// month, UTC) — the month's ledger lines, the statement /usage pages and
// /usage.csv exports, for a script reconciling a bill: by id, a page at a
// time (?limit=&cursor=, api_paging.go). Whose lines as GET /api/v1/usage
// (usageUserID: an admin's are everyone's, or ?user=NAME's), so the lines
// of a walk add up to its total_micros for the same month and user. A
// list of its own beside the summary: the summary's items are groups, in
// order of amount, and a page of lines would repeat it on every page.
func (h *Handler) apiUsageLines(c *gin.Context) {
	month, err := parseMonth(c.Query("month"), time.Now())
	if err != nil {
		h.fail(c, err)
		return
	}
	limit, after, ok := h.apiPageParams(c, "usage_lines")
	if !ok {
		return
	}
	afterID, err := idCursor(after)
	if err != nil {
		h.fail(c, err)
		return
	}
	userID, ok := h.usageUserID(c)
	if !ok {
		return
	}
	lines, err := h.store.StatementLinesAfter(c.Request.Context(), userID, month, afterID, limit+1)
	if err != nil {
		h.fail(c, err)
		return
	}
	writeAPIPage(c, "usage_lines", lines, limit, func(l *models.StatementLine) string { return idCursorOf(l.ID) },
		func(l *models.StatementLine) APIUsageLine {
			return APIUsageLine{APILedgerLine: apiLedgerLine(&l.LedgerEntry), User: l.Username, Workbench: l.WorkbenchName,
				ReversedBy: l.ReversedBy, Currency: h.cfg.Currency}
		})
}
