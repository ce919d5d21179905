package templates

import (
	"context"
	"testing"

	"workbench/templates/i18n"
)

// TestJoinNamesInTheReadersLanguage: the home-reset page's list of
// workbench names joins in the reader's language ("a, b and c"; "a、b和c"),
// not with an English "and" on a Chinese page.
func TestJoinNamesInTheReadersLanguage(t *testing.T) {
	names := []string{"qzh", "ext2", "realj"}
	en := i18n.WithLocale(context.Background(), i18n.English)
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	if got := joinNames(en, names); got != "qzh, ext2 and realj" {
		t.Errorf("English: %q", got)
	}
	if got := joinNames(zh, names); got != "qzh、ext2和realj" {
		t.Errorf("Chinese: %q", got)
	}
	if got := joinNames(zh, names[:1]); got != "qzh" {
		t.Errorf("one name: %q", got)
	}
}
