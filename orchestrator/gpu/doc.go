// Package gpu is the portal's GPU inventory: which GPUs (and MIG
// instances) the host has, whether they are healthy, and how busy they are.
//
// It follows the shape of NVIDIA's go-nvlib and k8s-device-plugin: one
// implementation on top of nvml.Interface serves both the real driver and
// go-nvml's official mock servers (dgxa100, dgxh100, dgxh200), so the code
// that runs in CI and on laptops is the code that runs on a GPU server.
// When no driver is present the null backend answers with zero GPUs and a
// Status line saying why; "auto" never silently turns into a simulated pool
// (SPEC §5: simulated GPUs must never be mixed into a real deployment).
package gpu
