package templates

import (
	"context"
	"testing"

	"workbench/templates/i18n"
)

// A notice's link is named for where it goes: a renamed account's notice
// links to the list of one's workbenches and read "View workbench", as if
// one workbench were meant.
func TestNotificationLinkLabelSaysWhereItGoes(t *testing.T) {
	en := context.Background()
	zh := i18n.WithLocale(en, i18n.Chinese)
	for _, c := range []struct{ link, en, zh string }{
		{"/workbenches/abc123", "View workbench", "查看工作台"},
		{"/settings/home", "View home volume", "查看主目录卷"},
		{"/", "View your workbenches", "查看你的工作台"},
	} {
		n := NotificationRow{Link: c.link}
		if got := n.linkLabel(en); got != c.en {
			t.Errorf("%s: %q, want %q", c.link, got, c.en)
		}
		if got := n.linkLabel(zh); got != c.zh {
			t.Errorf("%s in Chinese: %q, want %q", c.link, got, c.zh)
		}
	}
}
