package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// maxRequestBody bounds every request body the portal reads (forms and
// JSON alike); nothing it accepts comes near it.
const maxRequestBody = maxJSONBody

// errTooLarge is the answer to a body over the limit: 413, not 400.
var errTooLarge = newError(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is larger than the 1 MiB the portal accepts")

// limitBody answers 413 at once for a body that says it is too large, and
// caps the rest, so a form or JSON decode stops reading at the limit
// (bindJSON turns that into 413 as well).
func (h *Handler) limitBody(c *gin.Context) {
	if c.Request.Method == http.MethodPost && imageLoadPaths[c.Request.URL.Path] {
		c.Next() // an image archive: its handler sets its own limit
		return
	}
	if c.Request.ContentLength > maxRequestBody {
		c.Header("Connection", "close")
		h.fail(c, errTooLarge)
		return
	}
	if c.Request.Body != nil && c.Request.Body != http.NoBody {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxRequestBody)
		// A form sent without a length (chunked) is read here, so that going
		// over the limit is a 413 too and not a form that seems empty. Not
		// on the JSON API, which reads its body as JSON whatever the type
		// says: `curl -d '{…}'` labels it a form, and parsing it here left
		// the endpoint an empty body.
		if strings.HasPrefix(c.ContentType(), "application/x-www-form-urlencoded") && !isAPI(c) {
			var tooLarge *http.MaxBytesError
			if err := c.Request.ParseForm(); errors.As(err, &tooLarge) {
				c.Header("Connection", "close")
				h.fail(c, errTooLarge)
				return
			}
		}
	}
	c.Next()
}
