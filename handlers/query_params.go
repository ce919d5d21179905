package handlers

import (
	"slices"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// onlyQueryParams refuses a request carrying a query parameter the endpoint
// does not read: /usage.csv?from=x used to answer 200 with this month's
// lines, and the caller never learned that from was ignored.
func onlyQueryParams(c *gin.Context, allowed ...string) error {
	var unknown []string
	for k := range c.Request.URL.Query() {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return &models.ValidationError{Field: unknown[0], Message: "is not a parameter of this endpoint (it takes: " + strings.Join(allowed, ", ") + ")"}
}
