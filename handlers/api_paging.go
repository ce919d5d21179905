package handlers

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// The API's lists that grow with the lab come a page at a time (issue 15:
// a request's cost follows what the caller asks, not what the portal
// holds): ?limit=N items (apiPageDefault unless given, at most
// apiPageMax) from ?cursor=, the opaque next_cursor of the page before.
// Keyset paging (models/list_pages.go), not ?page=N as the HTML lists: a
// script walking the pages while rows come and go gets each row that
// stayed exactly once, and a deep page costs what the first does.
const (
	apiPageDefault = 100
	apiPageMax     = 1000
)

// errBadCursor refuses a cursor this list did not give (or garbled): the
// walk must start again from the first page.
var errBadCursor = newError(http.StatusBadRequest, "invalid_cursor",
	"cursor: not one this list gave; start again without it and pass each page's next_cursor as it comes")

// apiPageParams reads ?limit= and ?cursor= of list: the page's size and
// where it starts (the cursor's payload; "" for the first page). A bad
// value is answered (400 invalid_limit or invalid_cursor) and ok is false.
func (h *Handler) apiPageParams(c *gin.Context, list string) (limit int, after string, ok bool) {
	limit = apiPageDefault
	if s, given := c.GetQuery("limit"); given {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > apiPageMax {
			h.fail(c, newError(http.StatusBadRequest, "invalid_limit",
				"limit: a whole number of items from 1 to "+strconv.Itoa(apiPageMax)))
			return 0, "", false
		}
		limit = n
	}
	if s, given := c.GetQuery("cursor"); given {
		// An empty cursor is refused too: a script that passed an empty
		// next_cursor would otherwise read the first page forever.
		b, err := base64.RawURLEncoding.DecodeString(s)
		payload, found := strings.CutPrefix(string(b), list+":")
		if err != nil || !found || payload == "" {
			h.fail(c, errBadCursor)
			return 0, "", false
		}
		after = payload
	}
	return limit, after, true
}

// writeAPIPage answers one page of list: rows were read with limit+1, so
// one more than limit means a next page, which starts after the last row
// kept (its key, by key). Where it is goes in the body (next_cursor, next)
// and in a Link header (RFC 8288), the request's other parameters kept.
func writeAPIPage[S, T any](c *gin.Context, list string, rows []S, limit int, key func(*S) string, item func(*S) T) {
	p := APIPage[T]{Items: make([]T, 0, min(len(rows), limit))}
	for i := range rows[:min(len(rows), limit)] {
		p.Items = append(p.Items, item(&rows[i]))
	}
	if len(rows) > limit {
		cursor := base64.RawURLEncoding.EncodeToString([]byte(list + ":" + key(&rows[limit-1])))
		q := c.Request.URL.Query()
		q.Set("cursor", cursor)
		next := c.Request.URL.Path + "?" + q.Encode()
		p.NextCursor, p.Next = &cursor, &next
		c.Header("Link", "<"+next+`>; rel="next"`)
	}
	c.JSON(http.StatusOK, p)
}

// idCursor is the payload of a list paged by a positive integer id.
func idCursor(after string) (int64, error) {
	if after == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(after, 10, 64)
	if err != nil || id < 1 {
		return 0, errBadCursor
	}
	return id, nil
}

// workbenchCursor is the payload of the workbenches list: the last
// workbench's creation time and id.
func workbenchCursor(after string) (models.WorkbenchKey, error) {
	if after == "" {
		return models.WorkbenchKey{}, nil
	}
	at, id, _ := strings.Cut(after, " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || id == "" {
		return models.WorkbenchKey{}, errBadCursor
	}
	return models.WorkbenchKey{CreatedAt: t, ID: id}, nil
}

func workbenchCursorOf(wb *models.Workbench) string {
	return wb.CreatedAt.UTC().Format(time.RFC3339Nano) + " " + wb.ID
}

func idCursorOf(id int64) string { return strconv.FormatInt(id, 10) }
