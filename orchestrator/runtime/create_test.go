package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"
)

func validSpec() Spec {
	return Spec{
		WorkbenchID: "wb1", Owner: "alice", InstallID: "inst1", Name: "wb-wb1",
		Image: "img:1", Cmd: []string{"/fakejupyter", "--port=8888"}, User: "1000",
		Env: []string{"A=1"}, HomeVolume: "home-alice", HomePath: "/home/jovyan",
		NanoCPUs: 2e9, MemoryBytes: 1 << 30, ShmBytes: 64 << 20, PidsLimit: 512,
		GPUs: GPURequest{UUIDs: []string{"GPU-1"}}, CapAdd: []string{"CHOWN"},
		Network: "wb-net-alice", Port: 8888,
		ExtraLabels: map[string]string{"x": "y", LabelOwner: "mallory", LabelKind: "custom"},
	}
}

func TestContainerConfigHardening(t *testing.T) {
	cfg, host, netCfg, err := containerConfig(validSpec())
	if err != nil {
		t.Fatal(err)
	}
	if host.Privileged {
		t.Error("privileged")
	}
	if !slices.Equal(host.CapDrop, []string{"ALL"}) || !slices.Equal(host.CapAdd, []string{"CHOWN"}) {
		t.Errorf("caps drop %v add %v", host.CapDrop, host.CapAdd)
	}
	if !slices.Equal(host.SecurityOpt, []string{"no-new-privileges=true"}) {
		t.Errorf("security opts %v (must keep default seccomp: no seccomp=unconfined)", host.SecurityOpt)
	}
	if host.NetworkMode != "wb-net-alice" || len(netCfg.EndpointsConfig) != 1 || netCfg.EndpointsConfig["wb-net-alice"] == nil {
		t.Errorf("network mode %q endpoints %v", host.NetworkMode, netCfg.EndpointsConfig)
	}
	if len(host.PortBindings) != 0 || host.PublishAllPorts || len(cfg.ExposedPorts) != 0 {
		t.Error("ports published")
	}
	r := host.Resources
	if r.NanoCPUs != 2e9 || r.Memory != 1<<30 || r.MemorySwap != 1<<30 || r.PidsLimit == nil || *r.PidsLimit != 512 || host.ShmSize != 64<<20 {
		t.Errorf("resources %+v shm %d", r, host.ShmSize)
	}
	if len(r.DeviceRequests) != 1 || r.DeviceRequests[0].Driver != "nvidia" {
		t.Errorf("device requests %+v", r.DeviceRequests)
	}
	want := mount.Mount{Type: mount.TypeVolume, Source: "home-alice", Target: "/home/jovyan"}
	if len(host.Mounts) != 1 || host.Mounts[0] != want || len(host.Binds) != 0 {
		t.Errorf("mounts %+v binds %v", host.Mounts, host.Binds)
	}
	for _, m := range host.Mounts {
		if strings.Contains(m.Source, "docker.sock") {
			t.Error("docker socket mounted")
		}
	}
	if cfg.Labels[LabelOwner] != "alice" || cfg.Labels[LabelID] != "wb1" || cfg.Labels[LabelInstall] != "inst1" ||
		cfg.Labels[LabelPort] != "8888" || cfg.Labels["x"] != "y" || cfg.Labels[LabelKind] != "custom" {
		t.Errorf("labels %v (identity labels must win over ExtraLabels)", cfg.Labels)
	}
	if !slices.Contains(cfg.Env, "A=1") || !slices.Contains(cfg.Env, "NVIDIA_VISIBLE_DEVICES=GPU-1") {
		t.Errorf("env %v", cfg.Env)
	}
	if cfg.Tty {
		t.Error("tty on: Logs would not demultiplex")
	}
}

func TestContainerConfigNoLimits(t *testing.T) {
	s := validSpec()
	s.PidsLimit, s.MemoryBytes, s.HomeVolume, s.HomePath = 0, 0, "", ""
	_, host, _, err := containerConfig(s)
	if err != nil {
		t.Fatal(err)
	}
	if host.PidsLimit != nil || host.MemorySwap != 0 || len(host.Mounts) != 0 {
		t.Errorf("pids %v swap %d mounts %v", host.PidsLimit, host.MemorySwap, host.Mounts)
	}
}

func TestContainerConfigRejects(t *testing.T) {
	for name, mut := range map[string]func(*Spec){
		"host network":    func(s *Spec) { s.Network = "host" },
		"default bridge":  func(s *Spec) { s.Network = "bridge" },
		"no network":      func(s *Spec) { s.Network = "" },
		"no install id":   func(s *Spec) { s.InstallID = "" },
		"no owner":        func(s *Spec) { s.Owner = "" },
		"no port":         func(s *Spec) { s.Port = 0 },
		"volume w/o path": func(s *Spec) { s.HomePath = "" },
	} {
		s := validSpec()
		mut(&s)
		if _, _, _, err := containerConfig(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestEndpoint(t *testing.T) {
	d := &Docker{}
	info := ContainerInfo{IPs: map[string]string{"n1": "172.20.0.2"}, Labels: map[string]string{LabelPort: "8888"}}
	if h, p := d.Endpoint(info, "n1"); h != "172.20.0.2" || p != 8888 {
		t.Errorf("Endpoint = %s:%d", h, p)
	}
	if h, p := d.Endpoint(info, "other"); h != "" || p != 0 {
		t.Errorf("Endpoint on other network = %s:%d", h, p)
	}
}
