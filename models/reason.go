package models

import "fmt"

// Reasonf words a text people read (a refusal, a quota message, a stop or
// queue reason) below the handlers: in English, as the logs, the database
// and the JSON API keep it. format is a catalog key of the reasons area
// (templates/i18n/locales/zh-CN/reasons.json): a page recognises the text
// by it and shows it in the reader's language (i18n.Reason), and a test
// (handlers/i18n_reasons_test.go) fails when a format passed here has no
// zh-CN translation. format must be a literal; a value that is itself a
// reason is passed as an argument (%s), never concatenated.
func Reasonf(format string, args ...any) string {
	return fmt.Sprintf(format, args...)
}
