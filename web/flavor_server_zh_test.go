package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The admin flavor form's refusals by this server's size — a GPU model it
// does not have, more whole GPUs or CPU cores than it has — read in
// Chinese on the Chinese form, with the figures and names the English
// gives (they were shown in English).
func TestFlavorFormServerSizeInChinese(t *testing.T) {
	p := newPortal(t)
	c, _ := mpAdmin(t, p)
	p.postForm(c, "/language", url.Values{"lang": {"zh-CN"}, "back": {"/"}})
	const h100 = "NVIDIA H100 80GB HBM3"
	form := func(name, model, gpus, cores string) url.Values {
		return url.Values{"name": {name}, "gpu_model": {model}, "gpu_count": {gpus}, "cpu_cores": {cores},
			"memory_gib": {"8"}, "shm_mib": {"64"}, "max_runtime_hours": {"0"}, "enabled": {"true"}}
	}
	for _, tc := range []struct {
		what, field string
		form        url.Values
		want        []string
	}{
		{"an unknown GPU model", "gpu_model", form("ghost", "NVIDIA B300", "1", "1"),
			[]string{`"NVIDIA B300" 不是本服务器的 GPU 型号；已知型号：` + h100}},
		{"9 GPUs on an 8-GPU server", "gpu_count", form("nine", h100, "9", "1"),
			[]string{"本服务器有 8 块可整块分配的 " + h100, "规格不能要求 9 块"}},
		{"more CPU cores than the server has", "cpu_cores", form("huge", "", "0", "9999"),
			[]string{"本服务器有 ", " 个 CPU 核心；规格不能要求 9999 个"}},
	} {
		st, _, body := mpPost(t, p, c, "/admin/flavors", tc.form)
		got := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=error-` + tc.field + `]`).Text())
		if st != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", tc.what, st)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the Chinese form says %q, want %q in it", tc.what, got, w)
			}
		}
		if strings.Contains(got, "this server") || strings.Contains(got, "a flavor cannot") {
			t.Errorf("%s: English left on the Chinese form: %q", tc.what, got)
		}
	}
}
