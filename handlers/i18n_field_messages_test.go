package handlers

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"

	"workbench/templates/i18n"
)

// fieldFormats finds the formats of every models.invalid(field, format,
// …) call — the validation messages the models word in English for a form
// field — as "format" → "file:line".
func fieldFormats(t *testing.T, files map[string][]byte) map[string]string {
	t.Helper()
	formats := map[string]string{}
	fset := token.NewFileSet()
	for n, src := range files {
		f, err := parser.ParseFile(fset, n, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || callName(call.Fun) != "invalid" || len(call.Args) < 2 {
				return true
			}
			if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					pos := fset.Position(call.Pos())
					formats[s] = fmt.Sprintf("%s:%d", pos.Filename, pos.Line)
				}
			}
			return true
		})
	}
	return formats
}

// sampleMessage prints format with a stand-in value per verb, as a model
// would print it.
func sampleMessage(format string) string {
	var args []any
	for _, v := range reasonVerbs(format) {
		switch v {
		case 'd':
			args = append(args, 7)
		case 'c':
			args = append(args, '"')
		default:
			args = append(args, "x1")
		}
	}
	return fmt.Sprintf(format, args...)
}

// reasonVerbs lists the verb letters of format's printf verbs.
func reasonVerbs(format string) []byte {
	var out []byte
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+# 0123456789.[]", format[j]) >= 0 {
			j++
		}
		if j < len(format) && format[j] != '%' {
			out = append(out, format[j])
		}
		i = j
	}
	return out
}

// TestFieldMessagesTranslated fails naming file:line when a validation
// message of the models reaches a Chinese reader's form in English: every
// format given to models.invalid must be translated by one of the ways the
// pages translate field errors (fieldMessage, the admin forms' and the
// calculator's patterns, the reasons catalog). "%v" alone only forwards
// another error and is skipped.
func TestFieldMessagesTranslated(t *testing.T) {
	files := map[string][]byte{}
	goSources(t, "../models", files)
	formats := fieldFormats(t, files)
	if len(formats) < 60 {
		t.Fatalf("found only %d field formats: the scan is broken", len(formats))
	}
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	var missing []string
	for f, where := range formats {
		if f == "%v" {
			continue
		}
		msg := sampleMessage(f)
		translated := fieldMessage(zh, msg) != msg ||
			msgPatternT(zh, msg, adminMessages, adminMessageRes) != msg ||
			msgPatternT(zh, msg, calcErrMessages, calcErrMessageRes) != msg
		if !translated {
			missing = append(missing, fmt.Sprintf("%s: %q (e.g. %q) has no zh-CN text", where, f, msg))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error(m)
	}
}
