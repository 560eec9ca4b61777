-- 5: one running turn per conversation across every app server (storage/migrations/0005).
--    `expires_at` is the server's clock (epoch seconds), so servers whose clocks differ agree.
CREATE TABLE turn_leases (
    thread_id    text PRIMARY KEY REFERENCES conversations (thread_id) ON DELETE CASCADE,
    owner        text NOT NULL,
    acquired_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at   double precision NOT NULL
);
