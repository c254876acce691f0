CREATE TABLE tasks (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     text        NOT NULL CHECK (char_length(user_id) BETWEEN 1 AND 255),
    title       text        NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
    description text        NOT NULL DEFAULT '' CHECK (char_length(description) <= 1000),
    completed   boolean     NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Every task query filters by user; listings are ordered by id.
CREATE INDEX tasks_user_id_id_idx ON tasks (user_id, id);
