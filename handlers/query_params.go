package handlers

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// onlyQueryParams refuses a request carrying a query parameter the endpoint
// does not read, or one it reads given twice: /usage.csv?from=x used to
// answer 200 with this month's lines, and the caller never learned that
// from was ignored.
func onlyQueryParams(c *gin.Context, allowed ...string) error {
	unknown, twice := strayParams(c.Request.URL.Query(), allowed, nil)
	switch {
	case unknown != "":
		return &models.ValidationError{Field: unknown, Code: "unknown_parameter", Message: "is not a parameter of this endpoint (it takes: " + strings.Join(allowed, ", ") + ")"}
	case twice != "":
		return &models.ValidationError{Field: twice, Message: givenTwice}
	}
	return nil
}

// strayParams names, in q, the first (sorted) parameter not in allowed,
// else the first given more than once that is not one of lists (read as a
// list). /admin/billing.csv?month=2026-11&month=2026-10 answered the first
// month without saying which.
func strayParams(q url.Values, allowed, lists []string) (unknown, twice string) {
	keys := slices.Sorted(maps.Keys(q))
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return k, ""
		}
	}
	for _, k := range keys {
		if len(q[k]) > 1 && !slices.Contains(lists, k) {
			return "", k
		}
	}
	return "", ""
}
