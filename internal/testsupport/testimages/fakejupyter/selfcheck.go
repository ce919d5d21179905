package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// selfcheck is what the process sees from inside its container; tests use
// it to check the hardening and network isolation from the inside.
type selfcheck struct {
	CapEff       string `json:"cap_eff"`
	CapBnd       string `json:"cap_bnd"`
	NoNewPrivs   string `json:"no_new_privs"`
	Seccomp      string `json:"seccomp"`
	DockerSocket bool   `json:"docker_socket"`
	UID          int    `json:"uid"`
	GID          int    `json:"gid"`
	Home         string `json:"home"`
	Hostname     string `json:"hostname"`
	Probe        *probe `json:"probe,omitempty"`
}

type probe struct {
	Target    string `json:"target"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

func (s *server) handleSelfcheck(w http.ResponseWriter, r *http.Request) {
	st := procStatus()
	resp := selfcheck{
		CapEff:     st["CapEff"],
		CapBnd:     st["CapBnd"],
		NoNewPrivs: st["NoNewPrivs"],
		Seccomp:    st["Seccomp"],
		UID:        os.Getuid(),
		GID:        os.Getgid(),
		Home:       os.Getenv("HOME"),
	}
	resp.Hostname, _ = os.Hostname()
	for _, p := range []string{"/var/run/docker.sock", "/run/docker.sock"} {
		if _, err := os.Stat(p); err == nil {
			resp.DockerSocket = true
		}
	}
	if target := r.URL.Query().Get("probe"); target != "" {
		p := &probe{Target: target}
		c, err := net.DialTimeout("tcp", target, time.Second)
		if err != nil {
			p.Error = err.Error()
		} else {
			p.Reachable = true
			c.Close()
		}
		resp.Probe = p
	}
	writeJSON(w, http.StatusOK, resp)
}

// procStatus reads /proc/self/status into key → value.
func procStatus() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}
