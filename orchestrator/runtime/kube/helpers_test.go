package kube_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func resourceQ(s string) resource.Quantity { return resource.MustParse(s) }

func formatMiB(mib int64) string { return strconv.FormatInt(mib, 10) + "Mi" }

func yamlJSON(doc map[string]any) ([]byte, error) { return json.Marshal(doc) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
