-- 5: one running turn per conversation across every app process. A lease names its
--    owner (host and process) and is renewed while the turn runs; an expired lease,
--    or one whose owner process is gone, may be taken over.
CREATE TABLE turn_leases (
    thread_id    TEXT PRIMARY KEY REFERENCES conversations (thread_id) ON DELETE CASCADE,
    owner        TEXT NOT NULL,
    acquired_at  TEXT NOT NULL,
    expires_at   REAL NOT NULL
);
