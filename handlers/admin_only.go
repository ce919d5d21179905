package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// AdminOnly serves next to admins only (an admin session or an admin's API
// token), answering JSON 401/403 otherwise. The portal uses it for /metrics
// when neither a metrics token nor a metrics address is configured.
func (h *Handler) AdminOnly(next http.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		u := currentUser(c)
		switch {
		case u == nil:
			c.Header("WWW-Authenticate", `Bearer realm="workbench"`)
			c.AbortWithStatusJSON(http.StatusUnauthorized, APIError{Error: APIErrorDetail{Code: "unauthorized", Message: "log in as an admin or send an admin's API token"}})
		case !u.IsAdmin():
			c.AbortWithStatusJSON(http.StatusForbidden, APIError{Error: APIErrorDetail{Code: "forbidden", Message: "admins only"}})
		default:
			next.ServeHTTP(c.Writer, c.Request)
		}
	}
}
