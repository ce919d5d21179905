package handlers

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates/i18n"
)

// refusalClause is refusalT worded to follow a page's own words: every
// flash or form error that puts words before a refusal writes one
// sentence with one colon, the page's, and a full stop ("Could not start:
// %s.", "Not booked: %s."). The refusal's own colons read as dashes
// ("Could not start: quota exceeded — the monthly budget is used up.";
// "无法启动：超出配额——本月预算已用完。"): "Could not start: quota exceeded:
// the monthly budget is used up" stacked two, and the bookings' refusals
// were reworded as clauses for the same reason (session 50). The API's
// message stays as the models wrote it.
func (h *Handler) refusalClause(c *gin.Context, err error) string {
	ctx := c.Request.Context()
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		return msgPatternClause(ctx, ve.Message, adminMessages, adminMessageRes)
	}
	msg := h.classify(err).Message
	if k, ok := pageMessages[msg]; ok {
		return i18n.TClause(ctx, k)
	}
	return i18n.ReasonClause(ctx, msg)
}

// msgPatternClause is msgPatternT worded as refusalClause words a refusal.
func msgPatternClause(lc context.Context, msg string, keys []string, res []*regexp.Regexp) string {
	for i, re := range res {
		if m := re.FindStringSubmatch(msg); m != nil {
			args := make([]any, len(m)-1)
			for j, s := range m[1:] {
				args[j] = s
			}
			return i18n.TClause(lc, keys[i], args...)
		}
	}
	// A message the catalog words whole (its Chinese text differs), in
	// English as well.
	if key := strings.ReplaceAll(msg, "%", "%%"); i18n.Get(i18n.Chinese).T(key) != msg {
		return i18n.TClause(lc, key)
	}
	return i18n.ReasonClause(lc, msg)
}
