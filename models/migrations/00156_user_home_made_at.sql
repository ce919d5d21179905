-- +goose Up
-- When the portal made the user's home volume (NULL: none it knows of, or
-- one it removed itself). A start that has to make the volume again while
-- this is set finds it was removed behind the portal's back — also in the
-- minutes before storage metering first measured it.
ALTER TABLE users ADD COLUMN home_made_at DATETIME;

-- +goose Down
ALTER TABLE users DROP COLUMN home_made_at;
