// Package orchestrator turns the portal's records into running hardware: the
// GPU pool (inventory + admin state + allocations) and, in sub-packages, GPU
// discovery (gpu), the container runtime (runtime) and test images.
// Dependencies flow one way: handlers → orchestrator → models.
package orchestrator
