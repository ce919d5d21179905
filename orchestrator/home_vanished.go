package orchestrator

import (
	"context"
	"strings"
	"time"

	"workbench/models"
)

// A home volume removed behind the portal's back (`docker volume rm`, a
// `docker volume prune` on a host where nothing was running) took its
// owner's files, and the next start made an empty one without a word: the
// owner found an empty home and nobody knew why. Two places notice it, and
// whichever is first tells the owner and the log (the storage interval's
// close decides which): storage metering, which finds a volume it measured
// gone, and a start that had to create a volume metering had seen.

// homeRemovalBegins marks volume as being removed by the portal itself (a
// home reset, the delete of a user's last workbench, a failed first
// launch) until the returned func is called, after its storage interval is
// closed: metering that looks in between must not take it for a removal
// behind the portal's back.
func (m *Manager) homeRemovalBegins(volume string) (done func()) {
	m.removingHomes.Store(volume, struct{}{})
	return func() { m.removingHomes.Delete(volume) }
}

func (m *Manager) portalRemovingHome(volume string) bool {
	_, ok := m.removingHomes.Load(volume)
	return ok
}

// homeVanished forgets userID's home volume, gone though nobody in the
// portal removed it (its storage interval ends at its last sighting), and
// — if the portal knew of it and this call is the first to find it gone —
// tells its owner and logs a warning. wb is the workbench whose start
// found it (nil from metering).
func (m *Manager) homeVanished(ctx context.Context, userID int64, username, volume string, wb *models.Workbench) {
	if !m.ownsHomeVolume(volume) {
		m.originalsHomeClosed(ctx, username, volume)
		return
	}
	known, lastSeen, err := m.store.ForgetHome(ctx, userID, volume)
	if err != nil {
		m.log.Warn("storage metering: close", "volume", volume, "err", err)
		return
	}
	if !known {
		return // told already (metering and a start both looked), or never made
	}
	if m.knownBeforeNewIdentity(ctx, lastSeen) {
		// The mark of a home made was the original install's: this copy
		// makes its owner a home of its own, and the original's files
		// stay where they were.
		m.log.Info("home volume made by this copy of the install (started with --new-identity): the original's stays with the original",
			"owner", username, "volume", volume)
		return
	}
	m.log.Warn("home volume removed outside the portal: its files are gone", "owner", username, "volume", volume,
		"last_seen", lastSeen.UTC().Format(time.RFC3339), "found_by", map[bool]string{true: "start", false: "storage metering"}[wb != nil])
	at := lastSeen.UTC().Format("2006-01-02 15:04")
	if wb != nil {
		m.tellUser(ctx, userID, wb, EventHomeLost, reasonf("Your home volume was removed outside the portal (it was last seen at %s UTC): workbench %s started with an empty home. Files saved there before are gone; ask your administrator whether a backup has them.", at, wb.Name), "/workbenches/"+wb.ID)
		return
	}
	m.tellUser(ctx, userID, nil, EventHomeLost, reasonf("Your home volume was removed outside the portal (it was last seen at %s UTC): files saved there are gone, and your next workbench starts with an empty home. Ask your administrator whether a backup has them.", at), "/settings/home")
}

// A copy of an install started with --new-identity (a restored backup
// beside the original) names its home volumes with its own install id:
// its records of the original's volumes (storage intervals under the
// original's id, an owner's mark of a home made) are the original's. The
// copy never sees those volumes again, but they are not gone — the
// original keeps them and their files — so nobody is told their files
// are lost: the copy forgets them with a line in its log.

// ownsHomeVolume reports whether volume is one of this install's home
// volumes (named with its install id).
func (m *Manager) ownsHomeVolume(volume string) bool {
	return strings.HasPrefix(volume, m.homeVolume(""))
}

// originalsHomeClosed ends the storage interval of a home volume of the
// install this one was copied from, at its last sighting, telling nobody.
func (m *Manager) originalsHomeClosed(ctx context.Context, username, volume string) {
	ended, lastSeen, err := m.store.EndStorageAtLastSighting(ctx, volume)
	if err != nil {
		m.log.Warn("storage metering: close", "volume", volume, "err", err)
		return
	}
	if ended {
		m.log.Info("storage metering: home volume of the original install closed in this copy (started with --new-identity): its files stay with the original",
			"owner", username, "volume", volume, "last_seen", lastSeen.UTC().Format(time.RFC3339))
	}
}

// knownBeforeNewIdentity reports whether what the portal knew of a home
// volume dates from before this data got a new install id: the original
// install's knowledge, not this copy's.
func (m *Manager) knownBeforeNewIdentity(ctx context.Context, lastSeen time.Time) bool {
	copied, err := m.store.NewIdentityAt(ctx)
	if err != nil {
		m.log.Warn("storage metering: read when the install id changed", "err", err)
		return false
	}
	return !copied.IsZero() && !lastSeen.After(copied)
}

// homeMadeAnew is called when the start of workbench id had to create its
// owner's home volume: if the portal had made one (or metering had seen
// one) and not removed it, it was removed outside the portal. The new one
// is marked made, so its loss is found too, also before metering first
// measures it. It returns the owner's id (0 if the record cannot be read).
func (m *Manager) homeMadeAnew(ctx context.Context, id, volume string) (ownerID int64) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		m.log.Warn("home volume made: read the workbench", "id", id, "err", err)
		return 0
	}
	username := ""
	if u, err := m.store.UserByID(ctx, wb.OwnerID); err == nil {
		username = u.Username
	}
	m.homeVanished(ctx, wb.OwnerID, username, volume, wb)
	if err := m.store.MarkHomeMade(ctx, wb.OwnerID, m.now()); err != nil {
		m.log.Warn("note the home volume made", "volume", volume, "err", err)
	}
	return wb.OwnerID
}

// removeFreshHome removes a home volume a failed first launch made (never
// left unprepared: the next launch would take it as set up), and forgets
// it: its loss is no loss to tell about.
func (m *Manager) removeFreshHome(ctx context.Context, ownerID int64, volume string) {
	defer m.homeRemovalBegins(volume)()
	if err := m.rt.RemoveVolume(ctx, volume); err != nil {
		m.log.Warn("remove the home volume of a failed launch", "volume", volume, "err", err)
		return
	}
	m.homeRemoved(ctx, ownerID, volume)
}
