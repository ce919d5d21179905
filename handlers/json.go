package handlers

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// maxJSONBody bounds API request bodies; nothing the API takes is larger.
const maxJSONBody = 1 << 20

// bindJSON decodes the request body into v, answering 400 with a readable
// message when it is not valid JSON of the expected shape. A field the
// endpoint does not know is refused (unknown_field) rather than ignored: a
// misspelt "idle_minutes" would otherwise launch with the default idle
// timeout and say nothing.
func (h *Handler) bindJSON(c *gin.Context, v any) bool {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxJSONBody)
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return true
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.fail(c, errTooLarge)
	case errors.Is(err, io.EOF):
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", "the request body is empty: this endpoint takes a JSON object"))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for it; the text is its API.
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		h.fail(c, newError(http.StatusBadRequest, "unknown_field", "this endpoint has no field "+field+": check its spelling"))
	default:
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", "the request body is not valid JSON for this endpoint: "+err.Error()))
	}
	return false
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
