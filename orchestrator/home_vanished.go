package orchestrator

import (
	"context"
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

// homeVanished ends the storage interval of volume, which is gone though
// nobody in the portal removed it, at its last sighting, and — if this call
// ended it — tells its owner and logs a warning. wb is the workbench whose
// start found it (nil from metering).
func (m *Manager) homeVanished(ctx context.Context, userID int64, username, volume string, wb *models.Workbench) {
	closed, lastSeen, err := m.store.CloseVolume(ctx, volume)
	if err != nil {
		m.log.Warn("storage metering: close", "volume", volume, "err", err)
		return
	}
	if !closed {
		return // told already (metering and a start both looked)
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

// homeMadeAnew is called when the start of workbench id had to create its
// owner's home volume: if metering had seen one of that name, it was
// removed outside the portal since.
func (m *Manager) homeMadeAnew(ctx context.Context, id, volume string) {
	seen, err := m.store.HasOpenVolume(ctx, volume)
	if err != nil || !seen {
		return
	}
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return
	}
	username := ""
	if u, err := m.store.UserByID(ctx, wb.OwnerID); err == nil {
		username = u.Username
	}
	m.homeVanished(ctx, wb.OwnerID, username, volume, wb)
}

// removeFreshHome removes a home volume a failed first launch made (never
// left unprepared: the next launch would take it as set up), ending its
// storage interval if metering saw it meanwhile.
func (m *Manager) removeFreshHome(ctx context.Context, volume string) {
	defer m.homeRemovalBegins(volume)()
	if err := m.rt.RemoveVolume(ctx, volume); err != nil {
		m.log.Warn("remove the home volume of a failed launch", "volume", volume, "err", err)
		return
	}
	m.homeRemoved(ctx, volume)
}
