-- +goose Up
-- Default priority classes per group and per flavor (issue 12 §3): a
-- launch without a class takes its flavor's default, else the highest
-- ranked default among its owner's groups, else the global default. A
-- table of its own (not columns on groups/flavors) so the forms that save
-- those rows cannot clear it.
CREATE TABLE priority_defaults (
    scope      TEXT NOT NULL CHECK (scope IN ('group', 'flavor')),
    ref_id     INTEGER NOT NULL,
    class      TEXT NOT NULL REFERENCES priority_classes(name) ON DELETE CASCADE,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (scope, ref_id)
);

-- +goose Down
DROP TABLE priority_defaults;
