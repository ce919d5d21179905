package handlers

import (
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// pageSize is how many rows a paged list shows at once.
const pageSize = 100

// pageParam reads ?page=N (1-based; absent means 1). A page past the end
// shows the last page; anything not a positive number is a 400.
func pageParam(c *gin.Context) (int, error) {
	s := c.Query("page")
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, &models.ValidationError{Field: "page", Message: "must be a page number (1, 2, …)"}
	}
	return n, nil
}

// pager clamps page to the list of total rows and builds the navigation:
// links are path with the request's query, page changed.
func pager(c *gin.Context, path string, page int, total int64) (templates.Pager, int) {
	pages := int((total + pageSize - 1) / pageSize)
	if pages < 1 {
		pages = 1
	}
	if page > pages {
		page = pages
	}
	link := func(n int) string {
		q := url.Values{}
		for k, v := range c.Request.URL.Query() {
			q[k] = v
		}
		if n == 1 {
			q.Del("page")
		} else {
			q.Set("page", strconv.Itoa(n))
		}
		if len(q) == 0 {
			return path
		}
		return path + "?" + q.Encode()
	}
	p := templates.Pager{Page: page, Pages: pages, Total: total}
	if page > 1 {
		p.PrevURL = link(page - 1)
	}
	if page < pages {
		p.NextURL = link(page + 1)
	}
	return p, (page - 1) * pageSize
}

// pageOf reads the ?page= the request asks for through load (offset and
// limit in, one page and the whole list's size out) and builds its pager
// links on path. A page past the end of the list shows the last page.
func pageOf[T any](c *gin.Context, path string, load func(offset, limit int) ([]T, int64, error)) ([]T, templates.Pager, error) {
	page, err := pageParam(c)
	if err != nil {
		return nil, templates.Pager{}, err
	}
	rows, total, err := load((page-1)*pageSize, pageSize)
	if err != nil {
		return nil, templates.Pager{}, err
	}
	if len(rows) == 0 && page > 1 && total > 0 { // past the end: the last page
		p, off := pager(c, path, page, total)
		page = p.Page
		if rows, total, err = load(off, pageSize); err != nil {
			return nil, templates.Pager{}, err
		}
	}
	p, _ := pager(c, path, page, total)
	return rows, p, nil
}
