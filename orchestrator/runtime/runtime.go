// Package runtime is the portal's only door to the container engine: it
// creates, starts, stops and watches JupyterLab workbench containers (SPEC §5)
// and hides the Docker SDK from the lifecycle manager.
package runtime

import (
	"context"
	"errors"
	"io"
	"time"
)

// Labels put on every object the portal creates. They live under the portal's
// own namespace so that two portals sharing one engine never touch each
// other's containers: everything is filtered by LabelInstall.
const (
	LabelID      = "workbench.id"
	LabelOwner   = "workbench.owner"
	LabelInstall = "workbench.install"
	LabelKind    = "workbench.kind"
	// LabelPort records the Jupyter port inside the container, so Endpoint
	// can find it again for adopted containers after a portal restart.
	LabelPort = "workbench.port"
)

// KindWorkbench is the LabelKind value Create sets unless Spec.ExtraLabels
// overrides it.
const KindWorkbench = "workbench"

var (
	// ErrNotFound means the container (or other object) does not exist
	// (any more).
	ErrNotFound = errors.New("runtime: not found")
	// ErrEngineUnavailable means the container engine could not be reached.
	ErrEngineUnavailable = errors.New("runtime: container engine unavailable")
	// ErrConflict means an object with that name already exists (for
	// example a container left behind by a crash between Create and saving
	// its id).
	ErrConflict = errors.New("runtime: conflict")
)

// GPURequest says which GPUs a container gets.
type GPURequest struct {
	UUIDs []string
	// Simulated means the GPUs come from the simulated pool: no device
	// request is made, the UUIDs are only passed in the environment.
	Simulated bool
}

// Spec is everything needed to create one workbench container. Cmd is
// already expanded (port, base URL and token filled in).
type Spec struct {
	WorkbenchID string
	Owner       string
	InstallID   string
	Name        string // container name
	Image       string
	Cmd         []string
	User        string
	Env         []string
	HomeVolume  string
	HomePath    string
	// HomeNoCopy mounts the home volume without the engine's copy of the
	// image's files into it. Set for a volume that already holds a home:
	// the copy only happens into an empty volume, and then also resets
	// the owner of its root to the image's, undoing PrepareHome.
	HomeNoCopy  bool
	NanoCPUs    int64
	MemoryBytes int64
	ShmBytes    int64
	PidsLimit   int64
	GPUs        GPURequest
	CapAdd      []string
	Network     string
	Port        int // Jupyter's port inside the container
	ExtraLabels map[string]string
}

// ContainerInfo is what the lifecycle manager needs to know about a
// container, engine-neutral.
type ContainerInfo struct {
	ID         string
	Name       string
	Image      string
	Labels     map[string]string
	State      string // running, exited, created, ...
	Running    bool
	Paused     bool // frozen by `docker pause` (Running stays true): accepts connections, answers nothing
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int
	OOMKilled  bool
	Error      string
	Created    time.Time
	IPs        map[string]string // network name → IP
	Env        []string
}

// StatePending is the ContainerInfo.State of a container its engine has
// accepted but not started yet: a Kubernetes Pod waiting for a node that
// fits (Error holds the scheduler's reason) or for its image.
const StatePending = "pending"

// Event is a container lifecycle event for one of this install's containers.
type Event struct {
	ContainerID string
	WorkbenchID string // LabelID of the container, "" if absent
	Action      string // ActionStart, ActionDie, ActionDestroy, ActionPause or ActionUnpause
	ExitCode    int    // only meaningful for ActionDie
	Labels      map[string]string
	Time        time.Time
}

// Event actions delivered by Runtime.Events.
const (
	ActionStart   = "start"
	ActionDie     = "die"
	ActionDestroy = "destroy"
	// ActionPause and ActionUnpause: `docker pause` and `docker unpause`
	// (the container stays running for the engine).
	ActionPause   = "pause"
	ActionUnpause = "unpause"
)

// Actions of the engine's event history read by StopAsked (not delivered
// by Runtime.Events): a signal sent to the container, and a stop asked.
const (
	ActionKill = "kill"
	ActionStop = "stop"
)

// Runtime is the container engine as the lifecycle manager sees it.
type Runtime interface {
	Ping(ctx context.Context) error
	// HasNVIDIA reports whether the engine can hand real NVIDIA GPUs to
	// containers (NVIDIA runtime registered or NVIDIA CDI devices found).
	HasNVIDIA(ctx context.Context) (bool, error)
	// EnsureImage returns at once when ref is present locally, else pulls
	// it, reporting progress (0–100) as it goes.
	EnsureImage(ctx context.Context, ref string, progress func(pct int, status string)) error
	// PullImage is EnsureImage reporting downloaded and total bytes.
	PullImage(ctx context.Context, ref string, progress func(PullProgress)) error
	// ImageSize reports whether ref is present locally and its size.
	ImageSize(ctx context.Context, ref string) (present bool, size int64, err error)
	// LoadImage loads a `docker save` archive and returns the names loaded.
	LoadImage(ctx context.Context, archive io.Reader) ([]string, error)
	// EnsureVolume creates the volume unless it exists and reports
	// whether it created it.
	EnsureVolume(ctx context.Context, name string, labels map[string]string) (created bool, err error)
	// PrepareHome gives a created (not started) container's home
	// directory to the user it runs as (see Docker.PrepareHome).
	PrepareHome(ctx context.Context, containerID, homePath, user string) error
	// WriteHomeFile writes content to homePath/rel in a container (running
	// or not), owned by user, creating rel's one parent directory: the
	// preemption notice (~/.workbench/preempt-at).
	WriteHomeFile(ctx context.Context, containerID, homePath, user, rel string, content []byte) error
	// ResolveUser gives the uid and gid a run-as user stands for in a
	// created container's image.
	ResolveUser(ctx context.Context, containerID, user string) (uid, gid int, err error)
	// ProcessUser reports the uid and gid a running container's first
	// process has.
	ProcessUser(ctx context.Context, containerID string) (uid, gid int, err error)
	// HomeOwner reports the owner and mode of a container's home directory.
	HomeOwner(ctx context.Context, containerID, homePath string) (uid, gid int, mode int64, err error)
	// VolumeSizes measures this install's volumes (for storage billing).
	VolumeSizes(ctx context.Context, installID string) ([]VolumeUsage, error)
	// RemoveVolume deletes a volume; a missing volume is not an error.
	RemoveVolume(ctx context.Context, name string) error
	// CreateVolume creates a volume or returns the existing one of that
	// name untouched (its labels are the first creator's).
	CreateVolume(ctx context.Context, name string, labels map[string]string) (VolumeInfo, error)
	// InspectVolume returns ErrNotFound when the volume does not exist.
	InspectVolume(ctx context.Context, name string) (VolumeInfo, error)
	// EnsureNetwork makes the install's one bridge network (inter-container
	// traffic disabled).
	EnsureNetwork(ctx context.Context, name string, labels map[string]string) error
	// ConnectNetwork puts a container, running or not, on network name
	// (which EnsureNetwork made), first dropping an attachment of that
	// name left from a network removed behind the portal's back (`docker
	// network rm`, even when made again: its old id no longer exists and
	// the engine refuses to start the container). A container already on
	// it is left alone. errors.ErrUnsupported where the engine has no
	// such networks (Kubernetes: a policy, never "left").
	ConnectNetwork(ctx context.Context, containerID, name string) error
	// NetworkBridge returns the host interface of a bridge network (where
	// the egress policy is enforced); ErrNotFound when there is none.
	NetworkBridge(ctx context.Context, name string) (string, error)
	Create(ctx context.Context, spec Spec) (containerID string, err error)
	Start(ctx context.Context, id string) error
	// Stop sends SIGTERM and kills after grace; stopping a stopped
	// container is not an error.
	Stop(ctx context.Context, id string, grace time.Duration) error
	// Remove force-removes a container; a missing container is not an
	// error.
	Remove(ctx context.Context, id string) error
	// Inspect returns ErrNotFound when the container is gone.
	Inspect(ctx context.Context, id string) (ContainerInfo, error)
	// List returns every container (running or not) labelled with
	// LabelInstall=installID.
	List(ctx context.Context, installID string) ([]ContainerInfo, error)
	// Logs returns stdout and stderr as plain text; tail <= 0 means all.
	Logs(ctx context.Context, id string, tail int, follow bool) (io.ReadCloser, error)
	// Events streams start/die/destroy (and pause/unpause) events of this install's containers
	// until ctx ends or the stream fails (then one error is sent and both
	// channels are closed).
	Events(ctx context.Context, installID string) (<-chan Event, <-chan error)
	// LastExit finds in the engine's event history the latest die event,
	// from a second before since on, of the container of workbench workbenchID: the
	// exit time of a container that is gone. found is false when the
	// engine no longer has it.
	LastExit(ctx context.Context, installID, workbenchID string, since time.Time) (at time.Time, found bool, err error)
	// StopAsked reports whether the engine's event history holds a kill
	// or stop asked of the container of workbench workbenchID between from
	// and to, on the engine's clock (a container's StartedAt and
	// FinishedAt): someone stopped it
	// (`docker stop`, `docker kill`, the engine's own shutdown), it did
	// not exit on its own. False where the engine keeps no such history.
	StopAsked(ctx context.Context, installID, workbenchID string, from, to time.Time) (bool, error)
	// Endpoint is where the portal reaches Jupyter: the container's IP on
	// network and its Jupyter port. host is "" when the container has no
	// address there (not running, or not on that network).
	Endpoint(info ContainerInfo, network string) (host string, port int)
	// Commit saves a container's filesystem (never its volumes) as an
	// image; RemoveImage removes such an image (commit.go).
	Commit(ctx context.Context, containerID string, spec CommitSpec) (SavedImage, error)
	RemoveImage(ctx context.Context, ref string) error
	// SavedImages lists the images this install saved (LabelKind
	// KindSavedImage, LabelInstall installID), catalogued or not: the
	// leftovers of saves cut short are found with it.
	SavedImages(ctx context.Context, installID string) ([]ImageInfo, error)
}

// ImageInfo is an image on the engine: one of its names and its labels.
type ImageInfo struct {
	Ref    string
	Labels map[string]string
	// Created is when the engine made the image (whole seconds on Docker).
	Created time.Time
}
