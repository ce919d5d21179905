-- +goose Up
-- "Notify me when a GPU frees": a user's watch on a GPU model, fired once
-- (notified_at set in the same transaction that writes the notification).
CREATE TABLE gpu_watches (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    gpu_model   TEXT NOT NULL,
    created_at  DATETIME NOT NULL,
    notified_at DATETIME
);
CREATE INDEX gpu_watches_pending ON gpu_watches(notified_at);
-- In-app notifications, newest first on the user's notification list.
CREATE TABLE notifications (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    message    TEXT NOT NULL,
    link       TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    read_at    DATETIME
);
CREATE INDEX notifications_user ON notifications(user_id, id);

-- +goose Down
DROP TABLE notifications;
DROP TABLE gpu_watches;
