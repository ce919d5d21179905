package templates_test

import (
	"context"
	"strings"
	"testing"

	"workbench/templates"
	"workbench/templates/i18n"
)

// An image tagged "CUDA" without a version says CUDA is "included" in the
// reader's language (it said "CUDA yes", "CUDA 是": a boolean shown where a
// version goes); a version is printed as it is.
func TestImageFactCUDAInTheReadersLanguage(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	for _, c := range []struct {
		ctx  context.Context
		cuda string
		want string
	}{
		{zh, templates.CUDAUnversioned, "已包含"},
		{zh, "12.4", "12.4"},
		{i18n.WithLocale(context.Background(), i18n.English), templates.CUDAUnversioned, "included"},
	} {
		doc, _ := renderIn(t, c.ctx, templates.ImageFactsList(templates.ImageFacts{CUDA: c.cuda}))
		if got := strings.TrimSpace(doc.Find(testid("fact-cuda")).Text()); got != c.want {
			t.Errorf("%s CUDA fact %q reads %q, want %q", i18n.FromContext(c.ctx).Lang(), c.cuda, got, c.want)
		}
	}
}
