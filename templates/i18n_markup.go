package templates

import (
	"context"
	"html"

	"github.com/a-h/templ"

	"workbench/templates/i18n"
)

// tMarkup translates a sentence that carries inline markup (<code>,
// <strong>) in its catalog text, so that a translation may move the marked
// words where its grammar wants them. The catalog is embedded and trusted;
// string arguments are escaped.
func tMarkup(ctx context.Context, key string, args ...any) templ.Component {
	esc := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			esc[i] = html.EscapeString(s)
		} else {
			esc[i] = a
		}
	}
	return templ.Raw(i18n.T(ctx, key, esc...))
}
