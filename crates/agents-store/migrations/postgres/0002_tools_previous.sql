-- Schema version 2: the previous generation of a tool group, kept when a
-- refresh changed it (`agents mcp tools SERVER --diff`). Same columns as
-- `tools`; one generation per group (source, origin). Keep in step with
-- the other backend's 0002_tools_previous.sql.
CREATE TABLE tools_previous (
    name       VARCHAR(500) COLLATE "C" NOT NULL,
    source     VARCHAR(30) NOT NULL,
    origin     VARCHAR(255),
    spec_json  TEXT NOT NULL,
    created_at VARCHAR(30) NOT NULL,
    updated_at VARCHAR(30) NOT NULL
);

CREATE INDEX tools_previous_source_origin ON tools_previous (source, origin);
