package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"
)

// noBody guards an API route that reads no body (the id in the path is all
// it takes; options are query parameters). A body it would not read is
// refused, as bindJSON refuses an unknown field: POST …/stop with
// {"force": true} made a graceful stop, and DELETE …/{id} with
// {"delete_data": true} kept the data, each answered with success. An
// empty body, or an empty object from a client that always sends one,
// passes.
func (h *Handler) noBody(c *gin.Context) {
	if c.Request.Body == nil || c.Request.Body == http.NoBody {
		c.Next()
		return
	}
	b, err := io.ReadAll(io.LimitReader(c.Request.Body, maxJSONBody+1))
	if err != nil {
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", "the request body could not be read"))
		return
	}
	body := bytes.TrimSpace(b)
	if len(body) == 0 || string(body) == "{}" {
		c.Request.Body = http.NoBody
		c.Next()
		return
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) == nil && len(fields) > 0 {
		names := make([]string, 0, len(fields))
		for k := range fields {
			names = append(names, k)
		}
		slices.Sort(names)
		h.fail(c, newError(http.StatusBadRequest, "unknown_field", "this endpoint has no field "+strconv.Quote(names[0])+
			": it takes no body (its options, such as force=true, go in the query string)"))
		return
	}
	h.fail(c, newError(http.StatusBadRequest, "invalid_body", "this endpoint takes no body (its options, such as force=true, go in the query string)"))
}
