-- +goose Up
-- A whole-GPU launch that waits while preemptible slice holders yield a
-- shared GPU to it (docs/scheduling.md, "Taking a shared GPU whole")
-- claims that GPU: its UUIDs, comma-separated ('' none). While it is
-- queued, nobody is given a slice of a claimed GPU, and its placement
-- binds the GPU whole once every slice holder has stopped. The claim
-- counts only while the workbench is queued and is cleared when it is
-- placed or leaves the queue.
ALTER TABLE workbenches ADD COLUMN claim_gpus TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE workbenches DROP COLUMN claim_gpus;
