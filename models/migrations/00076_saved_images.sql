-- +goose Up
-- Save as image (issue 17): an image saved from a workbench is a catalog
-- row owned by its user (owner_id; 0 = the admin's catalog), visible to
-- them and to the groups they share it with (shared_groups, JSON list of
-- group names), named base_name and versioned; size_bytes is counted
-- against the owner's saved-image storage quota; saved_from is the
-- workbench it was saved from.
ALTER TABLE images ADD COLUMN owner_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE images ADD COLUMN base_name TEXT NOT NULL DEFAULT '';
ALTER TABLE images ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE images ADD COLUMN size_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE images ADD COLUMN saved_from TEXT NOT NULL DEFAULT '';
ALTER TABLE images ADD COLUMN shared_groups TEXT;
CREATE INDEX images_owner ON images(owner_id);

-- +goose Down
DROP INDEX images_owner;
ALTER TABLE images DROP COLUMN shared_groups;
ALTER TABLE images DROP COLUMN saved_from;
ALTER TABLE images DROP COLUMN size_bytes;
ALTER TABLE images DROP COLUMN version;
ALTER TABLE images DROP COLUMN base_name;
ALTER TABLE images DROP COLUMN owner_id;
