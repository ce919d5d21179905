package gpu

import (
	"context"
	"time"
)

// Health values of Device.Health.
const (
	HealthOK        = "ok"
	HealthUnhealthy = "unhealthy"
)

// MIGInstance is one MIG partition (a GPU instance plus a compute instance)
// of a MIG-enabled GPU; its UUID is what a container's device request names.
type MIGInstance struct {
	UUID              string `json:"uuid"`
	Profile           string `json:"profile"` // e.g. "1g.10gb"
	MemoryMiB         uint64 `json:"memory_mib"`
	GPUInstanceID     int    `json:"gpu_instance_id"`
	ComputeInstanceID int    `json:"compute_instance_id"`
}

// Device is one whole GPU as NVML reports it.
type Device struct {
	Index        int           `json:"index"`
	UUID         string        `json:"uuid"`
	Model        string        `json:"model"` // NVML name, e.g. "NVIDIA H100 80GB HBM3"
	MemoryMiB    uint64        `json:"memory_mib"`
	MIGEnabled   bool          `json:"mig_enabled"`
	MIG          []MIGInstance `json:"mig_instances,omitempty"`
	Health       string        `json:"health"` // HealthOK or HealthUnhealthy
	HealthDetail string        `json:"health_detail,omitempty"`
}

// Sample is one telemetry reading of a whole GPU. A reading NVML could not
// take (an error, unsupported by the driver or the mock) is zero AND has
// its Field bit set in Unread: "0%" and "could not read" are never the same
// thing, and a GPU whose utilisation cannot be read is never idle.
type Sample struct {
	UUID           string
	At             time.Time
	UtilPercent    uint32 // SM utilisation over NVML's last sample period
	MemUtilPercent uint32 // memory-copy (bandwidth) utilisation
	MemUsedMiB     uint64
	MemFreeMiB     uint64
	TempC          uint32
	PowerMilliW    uint32
	EnergyMilliJ   uint64 // total energy since the driver loaded
	SMClockMHz     uint32
	MemClockMHz    uint32
	// ECCUncorrected is the volatile (since boot) uncorrected ECC count.
	ECCUncorrected uint64
	// LastXID is the last XID error NVML reported for the GPU since the
	// portal started (0: none seen); unread where NVML gives no events.
	LastXID uint64
	// Processes are the compute processes on the GPU (host PIDs). Their
	// SMUtilPercent is read only when FieldProcessUtil is readable.
	Processes []Process
	// MIG are the readings of the GPU's MIG instances through their MIG
	// device handles (empty on a GPU without MIG, or where NVML hands out
	// no MIG device handles).
	MIG    []MIGSample
	Unread Field
}

// Process is one compute process NVML sees on a GPU.
type Process struct {
	PID        uint32
	UsedMemMiB uint64
	// SMUtilPercent is the process's SM utilisation over NVML's last
	// sample period (GetProcessUtilization); meaningful only when the
	// sample's FieldProcessUtil is readable.
	SMUtilPercent uint32
}

// MIGSample is one reading of a MIG instance through its MIG device
// handle. NVML answers memory per instance; utilisation is usually not
// supported per instance and is then unread (Unread), never 0%.
type MIGSample struct {
	UUID           string
	GPUInstanceID  int
	UtilPercent    uint32
	MemUtilPercent uint32
	MemUsedMiB     uint64
	MemFreeMiB     uint64
	Unread         Field
}

// Readable reports whether f was read for this instance.
func (m MIGSample) Readable(f Field) bool { return m.Unread&f == 0 }

// Field names one reading of a Sample, as a bit in Sample.Unread.
type Field uint32

// Readings of a Sample.
const (
	FieldUtil Field = 1 << iota
	FieldMemUtil
	FieldMemory
	FieldTemp
	FieldPower
	FieldEnergy
	FieldSMClock
	FieldMemClock
	FieldECC
	FieldProcesses
	FieldXID
	// FieldProcessUtil: per-process SM utilisation (GetProcessUtilization).
	FieldProcessUtil
)

// FieldAll is every Field: a sample with Unread == FieldAll has no
// reading at all.
const FieldAll = FieldProcessUtil<<1 - 1

// Readable reports whether f was read in this sample.
func (s Sample) Readable(f Field) bool { return s.Unread&f == 0 }

// Stale is s as it reads once it is too old to be the GPU's current
// reading: its UUID and time, every figure zero and unread, no processes
// and no MIG instance readings.
func (s Sample) Stale() Sample {
	return Sample{UUID: s.UUID, At: s.At, Unread: FieldAll}
}

// Inventory is what the rest of the portal codes against.
type Inventory interface {
	// Devices lists the GPUs, ordered by NVML index.
	Devices(ctx context.Context) ([]Device, error)
	// Sample takes one reading per whole GPU.
	Sample(ctx context.Context) ([]Sample, error)
	// Simulated is true for mock backends; every page must say so.
	Simulated() bool
	// Backend names the backend: "nvml", "mock:dgxh100", "none".
	Backend() string
	// Status is a human line for the UI and the log.
	Status() string
	// Close releases the driver (NVML Shutdown). Safe to call twice.
	Close() error
}
