package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"path"
	"strings"

	"workbench/templates/i18n"
)

// errorHandler handles failures talking to Jupyter. A refused or timed-out
// dial is the normal state while a workbench is starting, so the page says
// so and refreshes itself.
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if bodyTooLarge(err) {
		// A body of unknown length went over the limit on its way.
		if ri := infoFrom(r.Context()); ri != nil && ri.capped != nil {
			p.refuseTooLarge(w, r, ri.id, ri.capped.client)
			return
		}
		p.tooLarge(w, r, "")
		return
	}
	p.upstreamError(w, r, infoFrom(r.Context()), err, ClientGone(r, err))
}

// upstreamError answers a request whose exchange with Jupyter failed
// before any of the answer was sent. gone: the client went away or
// revocation ended the exchange, so the failure is nobody's to see.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, ri *reqInfo, err error, gone bool) {
	id := ""
	if ri != nil {
		id = ri.id
	}
	if gone {
		// The client went away: nobody receives an answer, so this is no
		// 502 (and no warning); the access log records 499.
		p.log.Debug("proxy: client canceled", "workbench", id, "path", r.URL.Path)
		w.WriteHeader(StatusClientClosed)
		return
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		w.Header().Set("Retry-After", "2")
		lc := p.locale(r)
		if port := extraPort(ri); port != "" {
			// An extra port: the workbench runs, the user's app does not
			// listen (yet). Nothing is wrong with the portal.
			p.log.Debug("proxy: nothing listens on an extra port", "workbench", id, "port", port, "err", err)
			writeError(lc, w, r, http.StatusBadGateway, i18n.T(lc, "Nothing on port %s yet", port),
				i18n.T(lc, "No app in the workbench answers on port %s: start it listening on 0.0.0.0:%s (not 127.0.0.1). This page retries by itself.", port, port), true)
			return
		}
		p.log.Warn("proxy: jupyter not answering", "workbench", id, "err", err)
		writeError(lc, w, r, http.StatusBadGateway, i18n.T(lc, "Starting"),
			i18n.T(lc, "JupyterLab is not answering yet. This page retries by itself."), true)
		return
	}
	p.log.Error("proxy: upstream error", "workbench", id, "path", r.URL.Path, "err", err)
	lc := p.locale(r)
	writeError(lc, w, r, http.StatusBadGateway, i18n.T(lc, "Bad gateway"),
		i18n.T(lc, "JupyterLab did not answer properly. Try again in a moment."), false)
}

// extraPort is the port of an extra port's request (/wb/{id}/port/{n}/…),
// "" for Jupyter's own.
func extraPort(ri *reqInfo) string {
	if ri == nil || ri.target.StripPrefix == "" {
		return ""
	}
	// The port as the user declared it (the prefix's last segment), not
	// the endpoint's, which a runtime may map to another.
	return path.Base(ri.target.StripPrefix)
}

// locale is r's context in the reader's language (Options.Locale), or
// r's own (English).
func (p *Proxy) locale(r *http.Request) context.Context {
	if p.opts.Locale != nil {
		return p.opts.Locale(r)
	}
	return r.Context()
}

// writeError writes a short message: HTML for browser navigations, plain
// text for everything else (JupyterLab shows fetch error bodies in
// dialogs, where markup would be noise). title and msg come in lc's
// language.
func writeError(lc context.Context, w http.ResponseWriter, r *http.Request, status int, title, msg string, refresh bool) {
	writeErrorDetail(lc, w, r, status, title, msg, refresh, nil)
}

// writeErrorDetail is writeError with fields added to the JSON's "error"
// (a limit a script acts on, as the portal API's quota refusals add).
func writeErrorDetail(lc context.Context, w http.ResponseWriter, r *http.Request, status int, title, msg string, refresh bool, detail map[string]any) {
	h := w.Header()
	lang := i18n.FromContext(lc).Lang()
	h.Set("Content-Language", lang)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Header.Get("Authorization") != "" && !wantsHTML(r) {
		// A client with a token reads errors as JSON: a script in the
		// portal API's shape (README: any address fetched with an
		// Authorization header), a Jupyter client (an IDE) in Jupyter
		// server's own ("message", "reason").
		h.Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		e := map[string]any{"code": statusCode(status), "message": title + ": " + msg}
		for k, v := range detail {
			e[k] = v
		}
		b, _ := json.Marshal(map[string]any{
			"error":   e,
			"message": msg, "reason": title,
		})
		_, _ = w.Write(append(b, '\n'))
		return
	}
	if !wantsHTML(r) {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "%s: %s\n", title, msg)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	meta := ""
	if refresh {
		meta = `<meta http-equiv="refresh" content="3">`
	}
	fmt.Fprintf(w, "<!doctype html><html lang=\"%s\"><head><meta charset=\"utf-8\">%s<title>%s</title></head>"+
		"<body><h1>%s</h1><p>%s</p></body></html>\n",
		html.EscapeString(lang), meta, html.EscapeString(title), html.EscapeString(title), html.EscapeString(msg))
}

// statusCode is the JSON error code of a proxy refusal, by its status.
func statusCode(status int) string {
	switch status {
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusBadGateway:
		return "bad_gateway"
	case http.StatusServiceUnavailable:
		return "not_running"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusRequestEntityTooLarge:
		return "body_too_large" // as the portal API's own 413
	}
	return "internal"
}

// wantsHTML reports whether the request is a browser navigation that can
// show a page (JupyterLab's own fetches ask for JSON or anything).
func wantsHTML(r *http.Request) bool { return strings.Contains(r.Header.Get("Accept"), "text/html") }
