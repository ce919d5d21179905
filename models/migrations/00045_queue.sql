-- +goose Up
-- The queue (issue 12 §2, §3): a launch that cannot be placed now waits in
-- state "queued" with no GPUs bound; the drainer places it later in the
-- same BEGIN IMMEDIATE transaction that binds GPUs. Its place in the
-- queue, its estimate and why it waits are written by each drain so pages
-- read them without running the scheduler.
ALTER TABLE workbenches ADD COLUMN priority TEXT NOT NULL DEFAULT '';
ALTER TABLE workbenches ADD COLUMN priority_rank INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workbenches ADD COLUMN preemptible INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workbenches ADD COLUMN auto_resume INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workbenches ADD COLUMN queued_at DATETIME;
ALTER TABLE workbenches ADD COLUMN queue_expires_at DATETIME;
ALTER TABLE workbenches ADD COLUMN queue_position INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workbenches ADD COLUMN queue_ahead INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workbenches ADD COLUMN queue_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE workbenches ADD COLUMN estimated_start DATETIME;
-- When a preemptible run was told to yield, and when it is stopped.
ALTER TABLE workbenches ADD COLUMN preempt_notice_at DATETIME;
ALTER TABLE workbenches ADD COLUMN preempt_at DATETIME;
CREATE INDEX workbenches_queued ON workbenches(queued_at) WHERE state = 'queued' AND deleted_at IS NULL;

-- Priority classes: admin-defined; rank orders the queue (higher first),
-- preemptible classes run at the preemptible price tier and may yield to
-- higher ranks.
CREATE TABLE priority_classes (
    name        TEXT PRIMARY KEY,
    rank        INTEGER NOT NULL,
    preemptible INTEGER NOT NULL DEFAULT 0,
    description TEXT NOT NULL DEFAULT '',
    is_default  INTEGER NOT NULL DEFAULT 0,
    updated_at  DATETIME NOT NULL
);
INSERT INTO priority_classes (name, rank, preemptible, description, is_default, updated_at) VALUES
    ('interactive', 100, 0, 'a person is waiting: first in the queue, never preempted', 1, CURRENT_TIMESTAMP),
    ('batch', 50, 0, 'long jobs: after interactive work, never preempted', 0, CURRENT_TIMESTAMP),
    ('preemptible', 10, 1, 'discounted; yields its GPUs to higher classes after a grace period', 0, CURRENT_TIMESTAMP);

-- A usage interval remembers the price tier it runs at, so a preemptible
-- run is billed at the preemptible rate to its exit.
ALTER TABLE usage_intervals ADD COLUMN tier TEXT NOT NULL DEFAULT '';

-- Price tiers: a discount in percent off the GPU rate, versioned like
-- rates (rows are only added; the one in force at a moment applies).
CREATE TABLE price_tiers (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    tier           TEXT NOT NULL,
    discount_pct   INTEGER NOT NULL CHECK (discount_pct BETWEEN 0 AND 100),
    effective_from DATETIME NOT NULL,
    is_default     INTEGER NOT NULL DEFAULT 0,
    created_by     TEXT NOT NULL DEFAULT '',
    created_at     DATETIME NOT NULL
);
CREATE INDEX price_tiers_lookup ON price_tiers(tier, effective_from);
INSERT INTO price_tiers (tier, discount_pct, effective_from, is_default, created_by, created_at)
    VALUES ('preemptible', 70, '1970-01-01 00:00:00+00:00', 1, 'seed', CURRENT_TIMESTAMP);

-- +goose Down
DROP TABLE price_tiers;
ALTER TABLE usage_intervals DROP COLUMN tier;
DROP TABLE priority_classes;
DROP INDEX workbenches_queued;
ALTER TABLE workbenches DROP COLUMN preempt_at;
ALTER TABLE workbenches DROP COLUMN preempt_notice_at;
ALTER TABLE workbenches DROP COLUMN estimated_start;
ALTER TABLE workbenches DROP COLUMN queue_reason;
ALTER TABLE workbenches DROP COLUMN queue_ahead;
ALTER TABLE workbenches DROP COLUMN queue_position;
ALTER TABLE workbenches DROP COLUMN queue_expires_at;
ALTER TABLE workbenches DROP COLUMN queued_at;
ALTER TABLE workbenches DROP COLUMN auto_resume;
ALTER TABLE workbenches DROP COLUMN preemptible;
ALTER TABLE workbenches DROP COLUMN priority_rank;
ALTER TABLE workbenches DROP COLUMN priority;
