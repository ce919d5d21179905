package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// DefaultSavedImageQuotaBytes is the saved-image storage of one user when
// the operator sets none.
const DefaultSavedImageQuotaBytes = 50 << 30

// SaveImageRequest is "save as image": a name (versions are counted per
// name and owner) and, for a running workbench, the owner's confirmation
// that it is paused while its filesystem is read.
type SaveImageRequest struct {
	Name      string
	RunningOK bool
}

var saveNameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,39}$`)

// SaveImage snapshots a workbench's container filesystem as a private
// image of its owner (docker commit): the home directory is a volume and
// is never part of it. The new image keeps the catalog entry's start
// command, user, home path, open path and extra ports, so it launches like
// the entry it came from. It is refused when the owner's saved images
// already fill their quota, and removed again when it would overflow it.
//
// The commit runs to its end in the manager whatever happens to ctx.
func (m *Manager) SaveImage(ctx context.Context, id string, owner *models.User, req SaveImageRequest) (*models.Image, error) {
	req.Name = strings.TrimSpace(req.Name)
	if !saveNameRe.MatchString(req.Name) {
		return nil, &models.ValidationError{Field: "name", Message: reasonf("use 1–40 Latin letters, digits, '.', '_' or '-'")}
	}
	// A stop not recorded yet is recorded first: the record says running
	// (a page loaded before the stop still offers saving it so), and the
	// commit came before a record the database then refused.
	if err := m.settleFirst(ctx, id); err != nil {
		return nil, err
	}
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case wb.State == models.StateRunning && !req.RunningOK:
		return nil, &ErrState{Message: reasonf("the workbench is running: saving pauses it while its files are read, and files being written may be caught half-way; confirm, or stop it first")}
	case wb.State != models.StateRunning && wb.State != models.StateStopped:
		return nil, &ErrState{Message: reasonf("the workbench is %s; only a stopped or running workbench can be saved; wait until it is running or stopped, then save it", wb.State)}
	case wb.ContainerID == "":
		return nil, &ErrState{Message: reasonf("the workbench has no container to save (start it once)")}
	}
	src, err := m.store.ImageByID(ctx, wb.ImageID)
	if err != nil {
		return nil, err
	}
	if err := m.checkSaveName(ctx, owner, req.Name); err != nil {
		return nil, err
	}
	used, err := m.store.SavedImageBytes(ctx, owner.ID)
	if err != nil {
		return nil, err
	}
	quota := m.opt.SavedImageQuotaBytes
	if quota > 0 && used >= quota {
		return nil, &RefusedError{Code: "quota_exceeded", Limit: "saved_image_bytes",
			Message: reasonf("your saved images take %s of your %s: delete one first", gib(used), gib(quota))}
	}
	return detachedValue(ctx, m, func(ctx context.Context) (*models.Image, error) {
		return m.saveImage(ctx, wb, src, owner, req.Name, quota)
	})
}

func (m *Manager) saveImage(ctx context.Context, wb *models.Workbench, src *models.Image, owner *models.User, name string, quota int64) (*models.Image, error) {
	// One save at a time per owner: two at once (a double click) picked
	// the same version, committed to the same engine name, and the one the
	// catalog refused removed the image the other's entry points at.
	mu, _ := m.imageSaves.LoadOrStore(owner.ID, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	// What the saves before this one added counts.
	used, err := m.store.SavedImageBytes(ctx, owner.ID)
	if err != nil {
		return nil, err
	}
	if quota > 0 && used >= quota {
		return nil, &RefusedError{Code: "quota_exceeded", Limit: "saved_image_bytes",
			Message: reasonf("your saved images take %s of your %s: delete one first", gib(used), gib(quota))}
	}
	version, err := m.store.NextImageVersion(ctx, owner.ID, name)
	if err != nil {
		return nil, err
	}
	ref := m.savedImageRef(owner.ID, name, version)
	// The commit tags ref, and a failed save removes it: it must be a
	// name no catalog entry (nor a deleted one's leftover) has, or the save
	// would replace, then delete, another saved image's files.
	for {
		taken, err := m.store.ImageRefInUse(ctx, ref)
		if err != nil {
			return nil, err
		}
		present, _, err := m.rt.ImageSize(ctx, ref)
		if err != nil {
			return nil, err
		}
		if !taken && !present {
			break
		}
		version++
		ref = m.savedImageRef(owner.ID, name, version)
	}
	m.savingRefs.Store(ref, true)
	defer m.savingRefs.Delete(ref)
	pause := wb.State == models.StateRunning
	if pause {
		// The commit pauses it: not a pause outside the portal.
		defer m.pauseOwn(wb.ID)()
	}
	saved, err := m.rt.Commit(ctx, wb.ContainerID, runtime.CommitSpec{
		Ref: ref, BaseImage: src.Image, Pause: pause,
		Labels: map[string]string{runtime.LabelKind: runtime.KindSavedImage, runtime.LabelInstall: m.installID,
			runtime.LabelOwner: owner.HomeName(), runtime.LabelSavedFrom: wb.ID,
			runtime.LabelSavedBy: strconv.FormatInt(owner.ID, 10), runtime.LabelSavedName: name,
			runtime.LabelSavedVersion: strconv.Itoa(version), runtime.LabelSavedBase: strconv.FormatInt(src.ID, 10)},
	})
	// The new image, or its removal below, changes what the cards show.
	defer m.forgetImages()
	if err != nil {
		return nil, fmt.Errorf("could not save the image: %w", err)
	}
	// The quota counts what the image adds over its base: the catalog
	// image's layers are on the engine anyway and shared.
	if quota > 0 && used+saved.Added > quota {
		_ = m.rt.RemoveImage(ctx, ref)
		return nil, &RefusedError{Code: "quota_exceeded", Limit: "saved_image_bytes",
			Message: reasonf("the image would take %s, and with your other saved images (%s) that is over your %s: delete one, or remove files outside your home", gib(saved.Added), gib(used), gib(quota))}
	}
	img := savedImageRecord(owner, wb, src, name, version, ref, saved.Added, m.now())
	if err := m.store.CreateImage(ctx, img); err != nil {
		_ = m.rt.RemoveImage(ctx, ref)
		return nil, err
	}
	m.log.Info("image saved", "workbench", wb.ID, "image", img.Name, "ref", ref, "bytes", saved.Size, "added", saved.Added)
	return img, nil
}

// savedImageRecord is the catalog entry of a saved image: it launches like
// src, the entry it came from.
func savedImageRecord(owner *models.User, wb *models.Workbench, src *models.Image, name string, version int, ref string, added int64, at time.Time) *models.Image {
	return &models.Image{Name: fmt.Sprintf("%s v%d (%s)", name, version, displayUser(owner.Username)), Image: ref,
		Description: reasonf("Saved by %s from workbench %s on %s; based on %s.", owner.Username, wb.Name, at.Format(time.DateOnly), src.Name),
		Tags:        src.Tags, StartCommand: src.StartCommand, RunAsUser: src.RunAsUser, HomePath: src.HomePath, OpenPath: src.OpenPath,
		ExtraPorts: src.ExtraPorts, Enabled: true, OwnerID: owner.ID, BaseName: name, Version: version, SizeBytes: added, SavedFrom: wb.ID}
}

// removeUnfinishedSaves removes the images that saves cut short (the
// portal process ended between the commit and the catalog entry) left on
// the engine: out of the catalog, out of their owner's quota and out of
// anyone's sight. Their owner is told to save again. Saves under way in
// this process are left alone.
//
// A database restored from a backup does not know the images saved after
// the backup was taken: they are whole saves, not cut short, and are
// entered in the catalog again (recatalogSaved), never removed.
func (m *Manager) removeUnfinishedSaves(ctx context.Context) {
	imgs, err := m.rt.SavedImages(ctx, m.installID)
	if err != nil {
		m.log.Warn("list saved images", "err", err)
		return
	}
	backupAt, err := m.store.BackupTakenAt(ctx)
	if err != nil {
		m.log.Warn("list saved images: read when the backup was taken", "err", err)
		return // decide nothing: an image may be a save the restore forgot
	}
	for _, img := range imgs {
		if _, busy := m.savingRefs.Load(img.Ref); busy {
			continue
		}
		// A record, live or deleted, keeps the image: a deleted entry's
		// leftover is DeleteSavedImage's to remove.
		if taken, err := m.store.ImageRefInUse(ctx, img.Ref); err != nil || taken {
			continue
		}
		if !backupAt.IsZero() && !img.Created.Before(backupAt.Truncate(time.Second)) {
			m.recatalogSaved(ctx, img)
			continue
		}
		if err := m.rt.RemoveImage(ctx, img.Ref); err != nil {
			m.log.Warn("remove an unfinished saved image", "ref", img.Ref, "err", err)
			continue
		}
		m.log.Info("removed an unfinished saved image", "ref", img.Ref, "workbench", img.Labels[runtime.LabelSavedFrom])
		if wb, err := m.store.WorkbenchByID(ctx, img.Labels[runtime.LabelSavedFrom]); err == nil {
			m.tellOwner(ctx, wb, EventSaveCutShort, reasonf("Saving workbench %s as an image was cut short when the portal stopped; the unfinished image was removed. Save it again.", wb.Name))
		}
	}
	m.forgetImages()
}

// recatalogSaved enters in the catalog again a saved image that the
// database, restored from a backup taken before the save, does not know.
// One it cannot (an image saved by an older version, without the labels
// that name it; its owner or workbench not in this database) is kept on
// the engine and logged for the administrator, never removed: it may be
// the only copy of someone's work.
func (m *Manager) recatalogSaved(ctx context.Context, info runtime.ImageInfo) {
	keep := func(why string) {
		m.log.Warn("a saved image made after the backup this database was restored from is kept on the engine but not in the catalog: add it on /catalog by its reference, or remove it with docker image rm",
			"ref", info.Ref, "workbench", info.Labels[runtime.LabelSavedFrom], "owner", info.Labels[runtime.LabelOwner], "why", why)
	}
	uid, err1 := strconv.ParseInt(info.Labels[runtime.LabelSavedBy], 10, 64)
	version, err2 := strconv.Atoi(info.Labels[runtime.LabelSavedVersion])
	srcID, err3 := strconv.ParseInt(info.Labels[runtime.LabelSavedBase], 10, 64)
	name := info.Labels[runtime.LabelSavedName]
	if err := errors.Join(err1, err2, err3); err != nil || name == "" {
		keep("saved without the labels that name it")
		return
	}
	owner, err := m.store.UserByID(ctx, uid)
	if err != nil {
		keep(fmt.Sprintf("its owner: %v", err))
		return
	}
	wb, err := m.store.WorkbenchByID(ctx, info.Labels[runtime.LabelSavedFrom])
	if err != nil {
		keep(fmt.Sprintf("its workbench: %v", err))
		return
	}
	src, err := m.store.ImageByID(ctx, srcID)
	if err != nil {
		keep(fmt.Sprintf("the catalog image it was saved from: %v", err))
		return
	}
	var added int64
	if _, size, err := m.rt.ImageSize(ctx, info.Ref); err == nil {
		_, base, _ := m.rt.ImageSize(ctx, src.Image)
		added = max(0, size-base)
	}
	// Its version may be taken by a save made since the restore (the
	// engine's name was free of it then only if it was another name).
	if v, err := m.store.NextImageVersion(ctx, owner.ID, name); err == nil && v > version {
		version = v
	}
	img := savedImageRecord(owner, wb, src, name, version, info.Ref, added, info.Created)
	if err := m.store.CreateImage(ctx, img); err != nil {
		keep(fmt.Sprintf("enter it in the catalog: %v", err))
		return
	}
	m.log.Info("saved image made after the backup this database was restored from: back in its owner's catalog", "ref", info.Ref, "image", img.Name, "workbench", wb.ID)
	m.tellOwner(ctx, wb, EventSaveRecatalogued, reasonf("Your saved image %s (from workbench %s) was made after the backup the portal was restored from; it is back in your launch form.", img.Name, wb.Name))
}

// checkSaveName refuses a save name that differs from one of the owner's
// saved images only in case or punctuation ("tf.env" and "tf_env",
// "UPPER" and "upper"): the engine's name of an image is lower case with
// punctuation folded (refPart), so the two would be one image, and the
// catalog keeps names apart regardless of case.
func (m *Manager) checkSaveName(ctx context.Context, owner *models.User, name string) error {
	mine, err := m.store.SavedImagesOf(ctx, owner.ID)
	if err != nil {
		return err
	}
	for _, img := range mine {
		if img.BaseName != name && refPart(img.BaseName) == refPart(name) {
			return &models.ValidationError{Field: "name", Message: reasonf("your saved image %s differs from this name only in case or punctuation: save under %s to add a version of it, or choose another name", img.BaseName, img.BaseName)}
		}
	}
	return nil
}

// DeleteSavedImage removes a saved image (its record, then the engine's
// copy). Refused while a workbench still uses it.
func (m *Manager) DeleteSavedImage(ctx context.Context, img *models.Image) error {
	if !img.Saved() {
		return &ErrState{Message: reasonf("catalog images are disabled, not deleted: disable it in the catalog instead")}
	}
	if err := m.store.DeleteSavedImage(ctx, img.ID); errors.Is(err, models.ErrConflict) {
		return &ErrState{Message: reasonf("a workbench still uses this image: delete the workbench first")}
	} else if err != nil {
		return err
	}
	if !m.ownSavedRef(img.Image) {
		// A copy of the install (--new-identity) holds the original's
		// saved images in its catalog; their files are the original's,
		// which still lists and launches them: removing them here lost
		// them there.
		m.log.Info("saved image deleted from this catalog; its files belong to another install (the original of this copy) and stay on the engine", "ref", img.Image)
		m.forgetImages()
		return nil
	}
	if err := m.rt.RemoveImage(context.WithoutCancel(ctx), img.Image); err != nil {
		m.log.Warn("remove saved image", "ref", img.Image, "err", err)
	}
	m.forgetImages()
	return nil
}

// ownSavedRef reports whether ref is the engine's name of a saved image of
// this install (savedImageRef), not of the install this one was copied
// from.
func (m *Manager) ownSavedRef(ref string) bool {
	return strings.HasPrefix(ref, runtime.SavedImageRepo+refPart(m.installID)+"/")
}

// savedImageRef is the engine's name of a saved image: under the install
// (two portals on one engine never collide), per user, name and version.
func (m *Manager) savedImageRef(uid int64, name string, version int) string {
	return fmt.Sprintf("%s%s/u%d-%s:v%d", runtime.SavedImageRepo, refPart(m.installID), uid, refPart(name), version)
}

var refUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// refPart is s as a repository path component: lower case, runs of other
// characters as one '-'.
func refPart(s string) string {
	p := strings.Trim(refUnsafe.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if p == "" {
		return "x"
	}
	return p
}

var nameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// displayUser is a user name as it may appear in an image's name.
func displayUser(u string) string { return nameUnsafe.ReplaceAllString(u, "-") }

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

// detachedValue is detached for work that returns a value.
func detachedValue[T any](ctx context.Context, m *Manager, work func(ctx context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	err := m.detached(ctx, func(ctx context.Context) error {
		v, err := work(ctx)
		done <- result{v, err}
		return err
	})
	select {
	case r := <-done:
		return r.v, r.err
	default: // the caller gave up waiting; the work goes on
		var zero T
		return zero, err
	}
}
