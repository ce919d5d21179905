package handlers

import (
	"slices"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// onlyQueryParams refuses a request carrying a query parameter the endpoint
// does not read, or one it reads given twice: /usage.csv?from=x used to answer 200 with this month's
// lines, and the caller never learned that from was ignored.
func onlyQueryParams(c *gin.Context, allowed ...string) error {
	var unknown, twice []string
	for k, vs := range c.Request.URL.Query() {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		} else if len(vs) > 1 {
			twice = append(twice, k)
		}
	}
	if len(unknown) == 0 && len(twice) > 0 {
		// /admin/billing.csv?month=2026-11&month=2026-10 answered the
		// first month without saying which.
		sort.Strings(twice)
		return &models.ValidationError{Field: twice[0], Message: givenTwice}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return &models.ValidationError{Field: unknown[0], Message: "is not a parameter of this endpoint (it takes: " + strings.Join(allowed, ", ") + ")"}
}
