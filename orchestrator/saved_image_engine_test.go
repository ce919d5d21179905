package orchestrator

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// putFile writes one file into a container's filesystem (docker cp), as
// `pip install` into the image's own directories would.
func putFile(t *testing.T, cli *client.Client, cid, path, body string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i := 1; i < len(dirs); i++ {
		_ = tw.WriteHeader(&tar.Header{Name: strings.Join(dirs[:i], "/") + "/", Typeflag: tar.TypeDir, Mode: 0o755, Uid: 1000, Gid: 100})
	}
	_ = tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(path, "/"), Mode: 0o644, Size: int64(len(body)), Uid: 1000, Gid: 100})
	_, _ = tw.Write([]byte(body))
	_ = tw.Close()
	if err := cli.CopyToContainer(context.Background(), cid, "/", &buf, container.CopyToContainerOptions{}); err != nil {
		t.Fatalf("copy %s into the container: %v", path, err)
	}
}

// getFile reads one file from a container (docker cp); ok is false when
// it does not exist.
func getFile(t *testing.T, cli *client.Client, cid, path string) (string, bool) {
	t.Helper()
	rc, _, err := cli.CopyFromContainer(context.Background(), cid, path)
	if client.IsErrNotFound(err) {
		return "", false
	} else if err != nil {
		t.Fatalf("copy %s from the container: %v", path, err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	if _, err := tr.Next(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	b, _ := io.ReadAll(tr)
	return string(b), true
}

// removeSavedImages removes the images a test manager saved (by label).
func removeSavedImages(cli *client.Client, installID string) {
	ctx := context.Background()
	f := filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+installID), filters.Arg("label", runtime.LabelKind+"="+runtime.KindSavedImage))
	imgs, _ := cli.ImageList(ctx, image.ListOptions{Filters: f})
	for _, i := range imgs {
		_, _ = cli.ImageRemove(ctx, i.ID, image.RemoveOptions{Force: true, PruneChildren: true})
	}
}

// Save as image, round trip on the real engine: a file written outside the
// home survives into a new workbench launched from the saved image; the
// home (a volume) is not in the image; the image keeps the catalog entry's
// start command and user and carries no Jupyter token; it is private to
// its owner, versioned, sized, counted against the quota, and deletable
// once no workbench uses it.
func TestEngineSaveAsImageRoundTrip(t *testing.T) {
	r := newLifecycleRig(t, nil)
	t.Cleanup(func() { removeSavedImages(r.cli, r.m.installID) })
	ctx := context.Background()
	wb := r.launchRunning(t, "setup")
	putFile(t, r.cli, wb.ContainerID, "/opt/env/tool.txt", "installed outside home")
	if code, body := homeFile(t, wb, "secret.txt", "home only"); code != 204 {
		t.Fatalf("write home file: %d %s", code, body)
	}

	// Running: refused until the owner confirms.
	var es *ErrState
	if _, err := r.m.SaveImage(ctx, wb.ID, r.owner, SaveImageRequest{Name: "torch-env"}); !errors.As(err, &es) {
		t.Fatalf("save a running workbench without confirming: %v, want a state error", err)
	}
	img, err := r.m.SaveImage(ctx, wb.ID, r.owner, SaveImageRequest{Name: "torch-env", RunningOK: true})
	if err != nil {
		t.Fatalf("save as image: %v", err)
	}
	src, _ := r.store.ImageByNameOrID(ctx, "fake")
	if !img.Saved() || img.OwnerID != r.owner.ID || img.Version != 1 || img.SizeBytes <= 0 || img.Name != "torch-env v1 (alice)" {
		t.Errorf("saved image %+v", img)
	}
	if img.StartCommand != src.StartCommand || img.RunAsUser != src.RunAsUser || img.HomePath != src.HomePath {
		t.Errorf("saved image start %q as %q, want the catalog entry's %q as %q", img.StartCommand, img.RunAsUser, src.StartCommand, src.RunAsUser)
	}
	info, err := r.cli.ImageInspect(ctx, img.Image)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Labels[runtime.LabelInstall] != r.m.installID || info.Config.Labels[runtime.LabelKind] != runtime.KindSavedImage {
		t.Errorf("saved image labels %v", info.Config.Labels)
	}
	// A save cut short after its commit (the portal killed) leaves an image
	// the engine lists by its labels; the next process removes it, and
	// keeps the catalogued one.
	leftover := r.m.savedImageRef(r.owner.ID, "cut-short", 1)
	if _, err := r.m.rt.Commit(ctx, wb.ContainerID, runtime.CommitSpec{Ref: leftover, BaseImage: src.Image, Labels: map[string]string{
		runtime.LabelKind: runtime.KindSavedImage, runtime.LabelInstall: r.m.installID, runtime.LabelSavedFrom: wb.ID}}); err != nil {
		t.Fatal(err)
	}
	listed, err := r.m.rt.SavedImages(ctx, r.m.installID)
	if err != nil || !slices.ContainsFunc(listed, func(i runtime.ImageInfo) bool { return i.Ref == leftover && i.Labels[runtime.LabelSavedFrom] == wb.ID }) {
		t.Fatalf("the engine's saved images %+v (%v) do not list %s from %s", listed, err, leftover, wb.ID)
	}
	r.m.removeUnfinishedSaves(ctx)
	if _, err := r.cli.ImageInspect(ctx, leftover); err == nil {
		t.Errorf("the image of a save cut short (%s) is still on the engine", leftover)
	}
	if _, err := r.cli.ImageInspect(ctx, img.Image); err != nil {
		t.Errorf("the catalogued saved image %s is gone: %v", img.Image, err)
	}
	cfgText := strings.Join(append(append([]string{}, info.Config.Env...), info.Config.Cmd...), " ")
	if strings.Contains(cfgText, wb.Token) {
		t.Errorf("the saving workbench's token is in the image's config: %s", cfgText)
	}
	// Nothing of the saving workbench stays in a config that may be shared:
	// not its id, nor its notice's path, GPUs or flavor.
	for _, kv := range info.Config.Env {
		if k, v, _ := strings.Cut(kv, "="); (k == PreemptFileEnv || k == "WORKBENCH_ID") && v != "" {
			t.Errorf("the saved image keeps %s", kv)
		}
	}
	for k, v := range info.Config.Labels {
		if v != "" && (k == runtime.LabelID || k == runtime.LabelPort || k == labelGPUs || k == labelFlavor) {
			t.Errorf("the saved image keeps the label %s=%s", k, v)
		}
	}
	if strings.Contains(cfgText, wb.ID) {
		t.Errorf("the saving workbench's id is in the image's config: %s", cfgText)
	}
	if state := r.waitState(t, wb.ID, models.StateRunning); state.State != models.StateRunning {
		t.Errorf("workbench after a running save: %s", state.State)
	}

	// The home is a volume: not in the image.
	bare, err := r.cli.ContainerCreate(ctx, &container.Config{Image: img.Image, Labels: map[string]string{runtime.LabelInstall: r.m.installID}}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := getFile(t, r.cli, bare.ID, "/home/jovyan/secret.txt"); ok {
		t.Errorf("the home file is in the saved image")
	}
	if got, ok := getFile(t, r.cli, bare.ID, "/opt/env/tool.txt"); !ok || got != "installed outside home" {
		t.Errorf("/opt/env/tool.txt in the image: %q %v", got, ok)
	}
	_ = r.cli.ContainerRemove(ctx, bare.ID, container.RemoveOptions{Force: true})

	// Another user cannot launch it; its owner can, and the file is there.
	bob, err := r.store.CreateUser(ctx, models.NewUser{Username: "bob", Password: "bob-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	var ve *models.ValidationError
	if _, err := r.m.Launch(ctx, bob, LaunchRequest{Name: "steal", Image: img.Name, Flavor: "CPU small"}); !errors.As(err, &ve) {
		t.Errorf("bob launched alice's saved image: %v", err)
	}
	again, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "from-saved", Image: img.Name, Flavor: "CPU small"})
	if err != nil {
		t.Fatalf("launch the saved image: %v", err)
	}
	again = r.waitState(t, again.ID, models.StateRunning)
	if got, ok := getFile(t, r.cli, again.ContainerID, "/opt/env/tool.txt"); !ok || got != "installed outside home" {
		t.Errorf("file outside home in the workbench from the saved image: %q %v", got, ok)
	}

	// Stopped save: version 2; then the quota refuses a third.
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.assertFullyStopped(t, wb.ID)
	v2, err := r.m.SaveImage(ctx, wb.ID, r.owner, SaveImageRequest{Name: "torch-env"})
	if err != nil || v2.Version != 2 {
		t.Fatalf("second save: %v %+v", err, v2)
	}
	used, _ := r.store.SavedImageBytes(ctx, r.owner.ID)
	if used != img.SizeBytes+v2.SizeBytes {
		t.Errorf("quota use %d, want %d", used, img.SizeBytes+v2.SizeBytes)
	}
	r.m.opt.SavedImageQuotaBytes = used
	var re *RefusedError
	if _, err := r.m.SaveImage(ctx, wb.ID, r.owner, SaveImageRequest{Name: "torch-env"}); !errors.As(err, &re) || re.Code != "quota_exceeded" {
		t.Errorf("save over the quota: %v", err)
	}

	// Delete: refused while a workbench uses v1; v2 goes, from the engine too.
	if err := r.m.DeleteSavedImage(ctx, img); !errors.As(err, &es) {
		t.Errorf("delete an image in use: %v", err)
	}
	if err := r.m.DeleteSavedImage(ctx, v2); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cli.ImageInspect(ctx, v2.Image); !client.IsErrNotFound(err) {
		t.Errorf("deleted image still on the engine (%v)", err)
	}
	if err := r.m.Stop(ctx, again.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.assertFullyStopped(t, again.ID)
}
