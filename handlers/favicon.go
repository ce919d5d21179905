package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// favicon: GET /favicon.ico. Browsers ask for it on pages that name no icon
// of their own — an app on a workbench's extra port, the proxy's short
// error pages — and with the /wb/ page as Referer, which the notebook
// guard would refuse (and log) as a request made by a notebook. It is
// registered before the guard and leads to the portal's logo.
func (h *Handler) favicon(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=86400")
	c.Redirect(http.StatusMovedPermanently, "/static/img/logo.svg")
}
