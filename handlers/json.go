package handlers

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
)

// maxJSONBody bounds API request bodies; nothing the API takes is larger.
const maxJSONBody = 1 << 20

// bindJSON decodes the request body into v, answering 400 with a readable
// message when it is not valid JSON of the expected shape.
func (h *Handler) bindJSON(c *gin.Context, v any) bool {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxJSONBody)
	if err := c.ShouldBindJSON(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.fail(c, errTooLarge)
			return false
		}
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", "the request body is not valid JSON for this endpoint: "+err.Error()))
		return false
	}
	return true
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
