package kubecluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// toolNames are the programs Start runs, all in ToolsDir()/bin.
var toolNames = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kwok"}

// ToolsDir is where scripts/k8s-test-tools.sh builds the Kubernetes test
// tools: $WORKBENCH_K8S_TOOLS, or ~/.cache/workbench/k8s-tools.
func ToolsDir() string {
	if d := os.Getenv("WORKBENCH_K8S_TOOLS"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "workbench", "k8s-tools")
}

// toolPaths finds every tool in dir/bin, or says which are missing and
// how to build them.
func toolPaths(dir string) (map[string]string, error) {
	paths := map[string]string{}
	var missing []string
	for _, name := range toolNames {
		p := filepath.Join(dir, "bin", name)
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, name)
			continue
		}
		paths[name] = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("kubecluster: the Kubernetes test tools %s are missing from %s: run scripts/k8s-test-tools.sh "+
			"(make test does; it builds them once from the Go module proxy, 10 to 20 minutes, and caches them there; "+
			"WORKBENCH_K8S_TOOLS moves the cache)", strings.Join(missing, ", "), filepath.Join(dir, "bin"))
	}
	return paths, nil
}
