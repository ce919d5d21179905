package simulate

import (
	"strings"
	"testing"
)

// One shared GPU in one slice is worded "1 GPU × 1 slice", not "1 GPUs ×
// 1 slices".
func TestWriteTableCountsInTheSingular(t *testing.T) {
	var out strings.Builder
	r := &Result{Config: Config{GPUs: 2, Model: "H100", SharedGPUs: 1, SlicesPerGPU: 1}}
	if err := WriteTable(&out, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); !strings.Contains(first, "sharing: 1 GPU × 1 slice;") {
		t.Fatalf("header %q", first)
	}
}
