-- +goose Up
-- What the launch a preemptible run yields to asked for ("priority
-- interactive, 2 × H100 80GB HBM3 needed, 1 free"), set with preempt_at
-- when the run is told to yield and cleared with it: the notice, the
-- page's reason and the preempted reason say it (they said only "a
-- higher-priority launch", so a 4-GPU run taken for a 1-GPU deficit could
-- not tell why). '' for a notice given before this column.
ALTER TABLE workbenches ADD COLUMN preempt_for TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE workbenches DROP COLUMN preempt_for;
