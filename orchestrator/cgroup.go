package orchestrator

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// procRoot is where /proc is read; a variable so tests can point the
// cgroup parser at fixtures.
var procRoot = "/proc"

// containerIDInCgroup matches a container id in a cgroup path, in the
// forms Docker and containerd write them:
//
//	cgroup v1, cgroupfs driver:  4:memory:/docker/<id>
//	cgroup v2, cgroupfs driver:  0::/docker/<id>
//	cgroup v2, systemd driver:   0::/system.slice/docker-<id>.scope
//	containerd (nerdctl, CRI):   0::/.../cri-containerd-<id>.scope
//
// Nested engines (Docker in Docker) put the container deeper
// (/docker/<outer>/docker/<inner>); the last id is the innermost, which
// is the one the engine we talk to knows.
var containerIDInCgroup = regexp.MustCompile(`(?m)(?:docker|containerd)[-/]([0-9a-f]{64})(?:\.scope)?(?:/|$)`)

// ContainerIDFromCgroup returns the container id named in the content of
// a /proc/PID/cgroup file, or "" when the process is in no container.
func ContainerIDFromCgroup(content string) string {
	id := ""
	for _, m := range containerIDInCgroup.FindAllStringSubmatch(content, -1) {
		id = m[1]
	}
	return id
}

// containerOfPID reads the container id of a host process. A process that
// has gone (it ended between NVML's answer and now) or cannot be read
// gives "".
func containerOfPID(pid uint32) string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.FormatUint(uint64(pid), 10), "cgroup"))
	if err != nil {
		return ""
	}
	return ContainerIDFromCgroup(string(b))
}
