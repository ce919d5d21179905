package handlers

import (
	"net/http"
	"sort"

	"github.com/gin-gonic/gin"

	"workbench/templates"
)

// confirmedField marks a form post whose question was answered: the
// page's script adds it when confirm() says yes, and the portal's own
// question page (no script ran) posts the form again with it.
const confirmedField = "confirmed"

// askedFirst reports whether an action that cannot be undone may go on:
// for an API call (its caller decided) or a form marked answered. Any
// other form post gets the question (templates.ConfirmPage) instead, and
// nothing is done: a data-confirm form posted with JavaScript off did the
// action at the click, the question the page asks with script never asked.
// Call it once the caller may act on the thing, so that the question is
// never asked about someone else's (their 404 comes first).
func (h *Handler) askedFirst(c *gin.Context, v templates.ConfirmView) bool {
	if isAPI(c) || c.PostForm(confirmedField) == "true" {
		return true
	}
	v.Action = c.Request.URL.RequestURI()
	names := make([]string, 0, len(c.Request.PostForm))
	for k := range c.Request.PostForm {
		// The password the sudo page just took is never written back
		// into a page: its window is open now, the Yes needs none.
		if k != confirmedField && k != sudoFieldName {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		for _, val := range c.Request.PostForm[k] {
			v.Fields = append(v.Fields, templates.SudoField{Name: k, Value: val})
		}
	}
	h.render(c, http.StatusOK, templates.ConfirmPage(h.page(c, v.Yes), v))
	return false
}
