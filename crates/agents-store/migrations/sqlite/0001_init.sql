-- Schema version 1: the spec's `skills` and `skill_items`, the tool
-- catalogue and a small key/value table. Keep in step with
-- migrations/postgres/0001_init.sql.

CREATE TABLE skills (
    name          VARCHAR(255) NOT NULL PRIMARY KEY,
    namespace     VARCHAR(100) NOT NULL,
    short_name    VARCHAR(150) NOT NULL,
    description   TEXT,
    version       VARCHAR(50),
    metadata_json TEXT NOT NULL,
    created_at    VARCHAR(30) NOT NULL,
    updated_at    VARCHAR(30) NOT NULL
);

CREATE INDEX skills_namespace ON skills (namespace);

CREATE TABLE skill_items (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    skill_name  VARCHAR(255) NOT NULL REFERENCES skills (name) ON DELETE CASCADE,
    item_type   VARCHAR(30) NOT NULL,
    item_name   VARCHAR(500) NOT NULL,
    item_config TEXT,
    item_order  INTEGER NOT NULL,
    created_at  VARCHAR(30) NOT NULL
);

-- Loads a skill's items in order; also the index the cascade uses.
CREATE UNIQUE INDEX skill_items_skill_order ON skill_items (skill_name, item_order);
-- Finds the skills that include (or use) a given name. `item_name` leads on
-- purpose: an index led by `item_type` tempts the planner (before ANALYZE)
-- to scan every include once per step of the include closure.
CREATE INDEX skill_items_name_type ON skill_items (item_name, item_type);

CREATE TABLE tools (
    name       VARCHAR(500) NOT NULL PRIMARY KEY,
    source     VARCHAR(30) NOT NULL,
    origin     VARCHAR(255),
    spec_json  TEXT NOT NULL,
    created_at VARCHAR(30) NOT NULL,
    updated_at VARCHAR(30) NOT NULL
);

CREATE INDEX tools_source_origin ON tools (source, origin);

CREATE TABLE registry_meta (
    key   VARCHAR(255) NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
