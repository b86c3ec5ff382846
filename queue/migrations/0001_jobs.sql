-- The job store: circuits, jobs and their witnesses.

CREATE TABLE circuits (
    name text PRIMARY KEY,
    digest bytea NOT NULL CHECK (length(digest) = 32),
    package bytea NOT NULL,
    registered timestamptz NOT NULL DEFAULT now()
);
-- Packages and witnesses are mostly field elements and curve points, which do not compress:
-- TOAST's compression would spend CPU for nothing.
ALTER TABLE circuits ALTER COLUMN package SET STORAGE EXTERNAL;

CREATE TABLE jobs (
    id uuid PRIMARY KEY,
    circuit text NOT NULL REFERENCES circuits (name),
    priority smallint NOT NULL CHECK (priority BETWEEN 0 AND 3),
    state text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'expired')),
    deadline timestamptz,
    submitted timestamptz NOT NULL DEFAULT now(),
    -- Submission order: timestamps of jobs submitted together can tie.
    seq bigint GENERATED ALWAYS AS IDENTITY,
    -- When the job was last taken.
    started timestamptz,
    finished timestamptz,
    -- The worker holding or last holding the job.
    worker text,
    -- Database time, never a host's: the fleet's clocks differ.
    lease_until timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    proof bytea,
    public_inputs bytea,
    timeline bytea,
    error_code text,
    error_message text,
    CHECK ((state = 'running') = (lease_until IS NOT NULL))
);

-- take(): the line, walked in order (highest priority, then oldest)...
CREATE INDEX jobs_queued ON jobs (priority DESC, submitted, seq) WHERE state = 'queued';
-- ...the line of each circuit a worker holds resident...
CREATE INDEX jobs_queued_circuit ON jobs (circuit, priority DESC, submitted, seq) WHERE state = 'queued';
-- ...the deadlines that passed...
CREATE INDEX jobs_queued_deadline ON jobs (deadline) WHERE state = 'queued' AND deadline IS NOT NULL;
-- ...and the leases that expired.
CREATE INDEX jobs_running_lease ON jobs (lease_until) WHERE state = 'running';

-- Kept apart from jobs so that scanning jobs never reads them, and deleted when the job settles.
CREATE TABLE witnesses (
    job uuid PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    bytes bytea NOT NULL
);
ALTER TABLE witnesses ALTER COLUMN bytes SET STORAGE EXTERNAL;

-- Every change of state, holder or attempt: a settled job's witness goes, and watchers (LISTEN g16_jobs)
-- hear the job's id. In a trigger so that no statement can forget either.
CREATE FUNCTION g16_job_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state NOT IN ('queued', 'running') THEN
        DELETE FROM witnesses WHERE job = NEW.id;
    END IF;
    PERFORM pg_notify('g16_jobs', NEW.id::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_changed AFTER UPDATE OF state, worker, attempts ON jobs
    FOR EACH ROW
    WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.worker IS DISTINCT FROM NEW.worker
          OR OLD.attempts IS DISTINCT FROM NEW.attempts)
    EXECUTE FUNCTION g16_job_changed();
