-- +goose Up
-- Where the Open button of a workbench goes (JupyterHub's default_url), and
-- the results of an admin's "Test image" dry launches.
ALTER TABLE images ADD COLUMN open_path TEXT NOT NULL DEFAULT '/lab';

CREATE TABLE image_tests (
    id          INTEGER PRIMARY KEY,
    image_id    INTEGER NOT NULL REFERENCES images(id),
    state       TEXT NOT NULL,              -- running, passed, failed
    step        TEXT NOT NULL DEFAULT '',   -- the check running or that failed
    message     TEXT NOT NULL DEFAULT '',   -- one plain sentence
    details     TEXT NOT NULL DEFAULT '',   -- raw errors and output
    started_by  TEXT NOT NULL DEFAULT '',
    started_at  DATETIME NOT NULL,
    finished_at DATETIME
);
CREATE INDEX image_tests_image ON image_tests(image_id, id);

-- +goose Down
DROP TABLE image_tests;
ALTER TABLE images DROP COLUMN open_path;
