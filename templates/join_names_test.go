package templates

import (
	"context"
	"testing"

	"workbench/templates/i18n"
)

// TestJoinNamesInTheReadersLanguage: the home-reset page's list of
// workbench names joins in the reader's language ("a, b and c"; "a、b 和 c",
// a space between Latin names and Chinese words), not with an English
// "and" on a Chinese page.
func TestJoinNamesInTheReadersLanguage(t *testing.T) {
	names := []string{"qzh", "ext2", "realj"}
	en := i18n.WithLocale(context.Background(), i18n.English)
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	if got := joinNames(en, names); got != "qzh, ext2 and realj" {
		t.Errorf("English: %q", got)
	}
	if got := joinNames(zh, names); got != "qzh、ext2 和 realj" {
		t.Errorf("Chinese: %q", got)
	}
	if got := joinNames(zh, names[:1]); got != "qzh" {
		t.Errorf("one name: %q", got)
	}
}

// TestHomeResetLossIsOneSentence: what the reset deletes reads as one
// sentence in each language (it was put together from pieces: "…two and
// big — : notebooks…" in English, mixed dashes in Chinese).
func TestHomeResetLossIsOneSentence(t *testing.T) {
	en := i18n.WithLocale(context.Background(), i18n.English)
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	v := HomeResetView{Username: "rosa", Self: true, Volume: "wb-home-x-rosa", Workbenches: []string{"exp1", "two", "big"}}
	if got, want := homeResetLoss(en, v), "This deletes every file in your home volume (wb-home-x-rosa), the home of your workbenches exp1, two and big: notebooks, data, installed packages and settings. They cannot be recovered. The next start gets an empty home."; got != want {
		t.Errorf("English:\n got %q\nwant %q", got, want)
	}
	if got := homeResetLoss(zh, v); got != "此操作将删除你的主目录卷（wb-home-x-rosa）中的所有文件——它是你的工作台 exp1、two 和 big 的主目录：笔记本、数据、已安装的软件包和设置，删除后无法恢复。下次启动时主目录为空。" {
		t.Errorf("Chinese: %q", got)
	}
	v.Self, v.Workbenches = false, nil
	if got := homeResetLoss(en, v); got != "This deletes every file in the home volume of rosa (wb-home-x-rosa): notebooks, data, installed packages and settings. They cannot be recovered. The next start gets an empty home." {
		t.Errorf("an admin's view, no workbench: %q", got)
	}
}
