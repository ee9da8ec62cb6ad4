//! Agent Skills discovery: finding folders that hold a `SKILL.md`, parsing
//! and validating their YAML front-matter against the Agent Skills standard,
//! and turning each into an `agent_skills/<name>` [`ToolSpec`](agents_core::ToolSpec),
//! with conflict handling against tools that already exist.
//!
//! This crate reads the filesystem but stores nothing: registering the
//! result (and refreshing it in one transaction) belongs to the registry
//! service. It never prints; the CLI shows [`DiscoveryResult`] and
//! [`LintReport`].
//!
//! Decisions where the standard leaves room:
//! - `name` is ASCII: `a-z`, `0-9` and `-`, because it becomes part of a tool
//!   name (provider tool names are `^[a-zA-Z0-9_-]{1,64}$`) and a folder name
//!   on every platform.
//! - A folder with no `SKILL.md` but a `skill.md` is read from that file, as
//!   the reference does; a scanned path holding a `SKILL.md` is one skill.
//! - Unknown top-level fields (`version`, `user-invocable`, ... that some
//!   agents add) are warnings, not errors: the skill still loads.
//! - A UTF-8 byte order mark is accepted with a warning; CRLF line ends are
//!   accepted; non-UTF-8 is an error.
//! - `allowed-tools` may be a string or a list of strings (joined with
//!   spaces); a plain scalar in a string field or a `metadata` value is the
//!   text written (`1.10` stays `"1.10"`), as the reference reads every
//!   scalar; a null `metadata` value is the empty string, with a warning.
//! - YAML anchors and aliases work, but the expanded front-matter is charged
//!   against a fixed budget, so alias bombs fail fast; nesting is limited to
//!   128 levels; files over 1 MiB are refused unread.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod digest;
mod discover;
mod folder;
mod lint;
mod scan;
mod skill_md;
mod yaml;

pub use digest::{
    DigestCache, FileStamp, FolderDigestError, MAX_DIGEST_FILES, folder_digests,
    folder_digests_cached,
};
pub use discover::{
    ConflictResolution, ConflictStrategy, DiscoveryConflict, DiscoveryError, DiscoveryResult,
    ExistingTool, discover, require_dirs,
};
pub use folder::{FolderError, LoadedSkill, TOOL_NAMESPACE, load_folder, load_skill};
pub use lint::{LintReport, LintedFolder, lint};
pub use scan::ProgressFn;
pub use skill_md::{
    EXTENSION_FIELDS, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS,
    MAX_SKILL_MD_BYTES, Rule, SKILL_MD, SKILL_MD_LOWERCASE, STANDARD_FIELDS, SkillDoc,
    SkillMdError, find_skill_md, parse_skill_md, read_skill_md, read_skill_md_body,
};
