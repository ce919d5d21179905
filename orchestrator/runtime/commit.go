package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
)

// LabelSavedFrom marks an image saved from a workbench (its id), and
// KindSavedImage is its LabelKind: cleanup finds them by these labels.
const (
	LabelSavedFrom = "workbench.saved-from"
	// LabelSavedBy (the owner's user id), LabelSavedName, LabelSavedVersion
	// and LabelSavedBase (the catalog image it was saved from) let a
	// portal whose database does not know the image (restored from a
	// backup taken before the save) enter it in the catalog again.
	LabelSavedBy      = "workbench.saved-by"
	LabelSavedName    = "workbench.saved-name"
	LabelSavedVersion = "workbench.saved-version"
	LabelSavedBase    = "workbench.saved-base"
	KindSavedImage    = "saved-image"
)

// CommitSpec is a container's filesystem saved as an image ("save as
// image"). Volumes (the user's home) are never part of a commit.
type CommitSpec struct {
	Ref string // repository:tag of the new image
	// BaseImage is the catalog image the container was made from: the new
	// image takes its command, entrypoint, environment, user and working
	// directory, not the container's (which carry the workbench's Jupyter
	// token and id).
	BaseImage string
	Labels    map[string]string
	// Pause freezes a running container while its filesystem is read, so
	// files are not captured half-written.
	Pause bool
}

// SavedImage is what a commit made: Size is the whole image, Added what
// it adds over its base image (the base's layers are shared on the engine).
type SavedImage struct {
	ID    string
	Size  int64
	Added int64
}

// secretEnv are the environment variables the portal gives a container;
// they are blanked in a saved image (else a colleague, or the catalog,
// would get the saving workbench's Jupyter token).
var secretEnv = []string{"JUPYTER_TOKEN", "WORKBENCH_ID", EnvSimulatedGPUs, EnvNVIDIAVisible}

// Commit saves a container's filesystem as the image spec.Ref.
func (d *Docker) Commit(ctx context.Context, containerID string, spec CommitSpec) (SavedImage, error) {
	base, err := d.cli.ImageInspect(ctx, spec.BaseImage)
	if err != nil {
		return SavedImage{}, engineErr("inspect image "+spec.BaseImage, err)
	}
	cfg := &container.Config{Labels: map[string]string{}}
	if base.Config != nil {
		cfg.Cmd, cfg.Entrypoint, cfg.User, cfg.WorkingDir = base.Config.Cmd, base.Config.Entrypoint, base.Config.User, base.Config.WorkingDir
		cfg.Env = append(cfg.Env, base.Config.Env...)
		for k, v := range base.Config.Labels {
			cfg.Labels[k] = v
		}
	}
	// What the portal gave this container beyond its image — its
	// variables (the Jupyter token, the workbench's id, its preemption
	// notice's path, its GPUs) and its workbench.* labels (id, GPUs,
	// flavor, port) — is blanked: the engine would otherwise copy into the
	// image every variable and label the config does not name, and a saved
	// image may be shared with a group.
	ctr, err := d.cli.ContainerInspect(ctx, containerID)
	if err != nil {
		return SavedImage{}, engineErr("inspect container "+containerID, err)
	}
	var given []string
	if ctr.Config != nil {
		given = ctr.Config.Env
		for k := range ctr.Config.Labels {
			if _, kept := cfg.Labels[k]; !kept && strings.HasPrefix(k, "workbench.") {
				cfg.Labels[k] = ""
			}
		}
	}
	cfg.Env = blankEnv(cfg.Env, given)
	if len(cfg.Cmd) == 0 {
		// The engine fills an empty Cmd from the container's, which holds
		// the expanded start command with its token; the portal always
		// gives a command at create, so this one is never run.
		cfg.Cmd = []string{"/start-from-the-workbench-portal"}
	}
	for k, v := range spec.Labels {
		cfg.Labels[k] = v
	}
	res, err := d.cli.ContainerCommit(ctx, containerID, container.CommitOptions{
		Reference: spec.Ref, Comment: "saved from a workbench", Author: "workbench", Pause: spec.Pause, Config: cfg})
	if err != nil {
		return SavedImage{}, engineErr("commit", err)
	}
	info, err := d.cli.ImageInspect(ctx, res.ID)
	if err != nil {
		return SavedImage{ID: res.ID}, engineErr("inspect saved image", err)
	}
	return SavedImage{ID: res.ID, Size: info.Size, Added: max(0, info.Size-base.Size)}, nil
}

// blankEnv keeps the image's env but sets every portal-given variable to
// empty: the secret ones always, and any other the container was given
// (given) that the image does not set — except HOME, which is only a
// path. The engine merges the container's variables into a commit's config
// for every name the config does not mention.
func blankEnv(env, given []string) []string {
	out := make([]string, 0, len(env)+len(secretEnv))
	have := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretEnv, k) {
			out = append(out, kv)
			have[k] = true
		}
	}
	for _, k := range secretEnv {
		out = append(out, k+"=")
		have[k] = true
	}
	for _, kv := range given {
		k, _, _ := strings.Cut(kv, "=")
		if !have[k] && k != "HOME" {
			out = append(out, k+"=")
			have[k] = true
		}
	}
	return out
}

// RemoveImage removes a saved image; one already gone is not an error.
func (d *Docker) RemoveImage(ctx context.Context, ref string) error {
	_, err := d.cli.ImageRemove(ctx, ref, image.RemoveOptions{PruneChildren: true})
	if err = engineErr("remove image "+ref, err); errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// SavedImages lists this install's saved images, one entry per name.
func (d *Docker) SavedImages(ctx context.Context, installID string) ([]ImageInfo, error) {
	list, err := d.cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", LabelKind+"="+KindSavedImage), filters.Arg("label", LabelInstall+"="+installID))})
	if err != nil {
		return nil, engineErr("list saved images", err)
	}
	var out []ImageInfo
	for _, im := range list {
		for _, ref := range im.RepoTags {
			if ref != "<none>:<none>" {
				out = append(out, ImageInfo{Ref: ref, Labels: im.Labels, Created: time.Unix(im.Created, 0).UTC()})
			}
		}
	}
	return out, nil
}
