-- +goose Up
-- "Stops soon" warnings (orchestrator/stop_soon.go): the deadline each
-- running workbench was last warned of, per kind of deadline (runtime,
-- budget, idle). A restarted portal reads it and does not warn of the same
-- deadline again; a deadline that moved (a "+1 h", a budget change, new
-- activity after idling) is warned of anew and replaces the row. One row
-- per workbench and kind: the table does not grow with each run.
CREATE TABLE stop_warnings (
    workbench_id TEXT NOT NULL REFERENCES workbenches(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    deadline_at  DATETIME NOT NULL,
    sent_at      DATETIME NOT NULL,
    PRIMARY KEY (workbench_id, kind)
);

-- +goose Down
DROP TABLE stop_warnings;
