package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// Corrections (SPEC §6 rule 13): an admin appends a credit or reverses
// specific ledger lines, always with a reason. The store appends the lines
// and their audit entries in one transaction; nothing is edited.

// apiLedgerCredit: POST /api/v1/admin/ledger/credits {user, amount_micros,
// reason, workbench_id?} — a credit dated now on the user's ledger.
func (h *Handler) apiLedgerCredit(c *gin.Context) {
	var body struct {
		User         string `json:"user"`
		AmountMicros int64  `json:"amount_micros"`
		Reason       string `json:"reason"`
		WorkbenchID  string `json:"workbench_id"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	u, err := h.store.UserByUsername(c.Request.Context(), strings.TrimSpace(body.User))
	if errors.Is(err, models.ErrNotFound) {
		h.fail(c, &models.ValidationError{Field: "user", Message: "no such user"})
		return
	} else if err != nil {
		h.fail(c, err)
		return
	}
	// A client that retries after a lost answer sends the same
	// Idempotency-Key and gets the credit it made, not a second one.
	e, repeated, err := h.store.CreditOnce(c.Request.Context(), c.GetHeader("Idempotency-Key"), u.ID, body.AmountMicros, body.WorkbenchID, body.Reason, currentUser(c).Username)
	if err != nil {
		h.fail(c, err)
		return
	}
	status := http.StatusCreated
	if repeated {
		status = http.StatusOK
	}
	c.JSON(status, apiLedgerLine(e))
}

// apiLedgerReverse: POST /api/v1/admin/ledger/reversals {ids: [...],
// reason} — one reversing line per id, all or none.
func (h *Handler) apiLedgerReverse(c *gin.Context) {
	var body struct {
		IDs    []int64 `json:"ids"`
		Reason string  `json:"reason"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	lines, err := h.store.ReverseLines(c.Request.Context(), body.IDs, body.Reason, currentUser(c).Username)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, mapList(lines, apiLedgerLine))
}

// adminCreditForm: POST /admin/billing/credit — the billing page's form.
// creditFormReused says a credit form was sent a second time with other
// values (the browser's Back, then a change).
const creditFormReused = "this form already made a credit before it was changed; nothing more was credited. To make this one too, issue it again"

func (h *Handler) adminCreditForm(c *gin.Context) {
	form := templates.CorrectionForm{User: strings.TrimSpace(c.PostForm("user")), Amount: strings.TrimSpace(c.PostForm("amount")),
		CreditReason: c.PostForm("reason"), Key: c.PostForm("key"), Errors: templates.FormErrors{}}
	ctx := c.Request.Context()
	amount, err := parseCurrencyAmount("amount", form.Amount, h.cfg.Currency, creditAmount)
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		form.Errors["amount"] = ve.Message
	} else if err == nil && (amount <= 0 || amount > models.MaxCreditMicros) {
		// The form's words for the model's rule (which names micro-units
		// too, for the API): the same as for -5 and 99999999999999.
		form.Errors["amount"] = creditAmount.negative
	}
	u, err := h.store.UserByUsername(ctx, form.User)
	if errors.Is(err, models.ErrNotFound) {
		form.Errors["user"] = "no such user"
	} else if err != nil {
		h.fail(c, err)
		return
	}
	if len(form.Errors) == 0 {
		// The form's key makes a second submission of the same page (a
		// double click without JavaScript, a resubmitted page) land on
		// the credit the first one made.
		_, _, err = h.store.CreditOnce(ctx, form.Key, u.ID, amount, "", form.CreditReason, currentUser(c).Username)
		if errors.As(err, &ve) {
			field, msg := ve.Field, ve.Message
			switch field {
			case "reason":
				field = "credit_reason"
			case "idempotency_key":
				// The page was sent before (its credit was made) and then
				// changed: a new key, so that sending it again is a new
				// credit. The answer was a 400 with no message anywhere.
				field, msg, form.Key = "amount", creditFormReused, ""
			}
			form.Errors[field] = msg
		} else if err != nil {
			h.fail(c, err)
			return
		}
	}
	if len(form.Errors) > 0 {
		h.renderBilling(c, http.StatusBadRequest, form)
		return
	}
	c.Redirect(http.StatusSeeOther, "/admin/billing?done=credit")
}

// adminReverseForm: POST /admin/billing/reverse — the billing page's form.
func (h *Handler) adminReverseForm(c *gin.Context) {
	form := templates.CorrectionForm{IDs: strings.TrimSpace(c.PostForm("ids")), ReverseReason: c.PostForm("reason"), Errors: templates.FormErrors{}}
	ids, err := parseIDList(form.IDs)
	if err != nil {
		form.Errors["ids"] = err.Error()
	} else {
		_, err = h.store.ReverseLines(c.Request.Context(), ids, form.ReverseReason, currentUser(c).Username)
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			field := ve.Field
			if field == "reason" {
				field = "reverse_reason"
			}
			form.Errors[field] = ve.Message
		} else if err != nil {
			h.fail(c, err)
			return
		}
	}
	if len(form.Errors) > 0 {
		h.renderBilling(c, http.StatusBadRequest, form)
		return
	}
	c.Redirect(http.StatusSeeOther, "/admin/billing?done=reverse")
}

// parseIDList reads "12, 13 14" into ids.
func parseIDList(s string) ([]int64, error) {
	var ids []int64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := strconv.ParseInt(strings.TrimPrefix(f, "#"), 10, 64)
		if err != nil || id <= 0 {
			return nil, errors.New("enter ledger line ids such as 12, 13")
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, errors.New("enter at least one ledger line id")
	}
	return ids, nil
}
