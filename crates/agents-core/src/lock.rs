//! Lock files: a content-addressed record of resolved tool sets, and the
//! diff between a lock and a fresh resolution.
//!
//! Every digest is `sha256:<hex>` of *canonical JSON*: keys sorted at every
//! depth, no whitespace (the workspace's `serde_json` keeps insertion order,
//! so [`canonical`] re-sorts explicitly). An entry's definition has the fields
//! of [`LOCK_FIELDS`]; the lock keeps one digest per field (so a diff can name
//! what changed) and one over the whole definition. A skill's digest covers
//! its entries' names and digests in resolution order; the lock's digest
//! covers every skill's digest. Pure: the caller supplies the per-file
//! digests of Agent Skills folders ([`AgentFiles`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::resolve::ResolvedToolEntry;
use crate::tool::{Meta, ToolSource};

/// The lock file format version this build writes and reads.
pub const LOCK_VERSION: u64 = 1;

/// The fields of an entry's canonical definition, in the order diffs name them.
pub const LOCK_FIELDS: [&str; 8] = [
    "name",
    "description",
    "input_schema",
    "output_schema",
    "capabilities",
    "overrides",
    "source",
    "upstream",
];

/// Per Agent Skill entry name: every file of its folder, by `/`-separated
/// path relative to the folder, with its `sha256:<hex>` digest.
pub type AgentFiles = HashMap<String, BTreeMap<String, String>>;

/// A lock file: the locked skills by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lockfile {
    /// Always [`LOCK_VERSION`].
    pub version: u64,
    /// Digest over every skill's digest.
    pub digest: String,
    /// Locked skills, by name.
    #[serde(deserialize_with = "unique_keys")]
    pub skills: BTreeMap<String, LockedSkill>,
}

/// One skill's locked resolution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockedSkill {
    /// Digest over the entries' names and digests, in resolution order.
    pub digest: String,
    /// Entries in resolution order.
    pub entries: Vec<LockedEntry>,
}

/// One locked entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockedEntry {
    /// Entry name (as in `agents skill tools`).
    pub name: String,
    /// Digest of the whole canonical definition.
    pub digest: String,
    /// Digest of each field of the definition ([`LOCK_FIELDS`]).
    #[serde(deserialize_with = "unique_keys")]
    pub fields: BTreeMap<String, String>,
}

/// A map whose keys must each come once: a key written twice would hold one
/// value for a reader of the file and another for serde, which keeps the
/// last.
fn unique_keys<'de, D, V>(deserializer: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Unique<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Unique<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                if out.contains_key(&key) {
                    return Err(serde::de::Error::custom(format_args!(
                        "duplicate key `{}`",
                        crate::text::shorten(&key, crate::text::MAX_ECHO_BYTES)
                    )));
                }
                let value = map.next_value()?;
                out.insert(key, value);
            }
            Ok(out)
        }
    }
    deserializer.deserialize_map(Unique(std::marker::PhantomData))
}

/// The `version` of a lock file, read before the rest: a file of another
/// version is named as such, not as a shape this build does not know. The
/// other fields are skipped unread, and `version` is borrowed from the text.
#[derive(Deserialize)]
struct VersionOnly<'a> {
    #[serde(borrow, default)]
    version: Option<&'a serde_json::value::RawValue>,
}

/// A lock file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    /// Not JSON, or not the lock shape.
    #[error("{file}: not a lock file: {message}")]
    Invalid {
        /// The file as shown to the user.
        file: String,
        /// What was wrong.
        message: String,
    },
    /// Written by another format version.
    #[error(
        "{file}: lock file version {found} is not supported (this build reads version {LOCK_VERSION})"
    )]
    Version {
        /// The file as shown to the user.
        file: String,
        /// The version it declares.
        found: u64,
    },
}

impl LockError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Invalid { .. } => "invalid_lock",
            Self::Version { .. } => "lock_version",
        }
    }
}

/// `value` with every object's keys sorted, recursively.
pub fn canonicalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut sorted = Map::new();
            for key in keys {
                if let Some(inner) = map.get(key) {
                    sorted.insert(key.clone(), canonicalize(inner));
                }
            }
            Value::Object(sorted)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonicalize).collect()),
        other => other.clone(),
    }
}

/// Canonical JSON text of `value`: sorted keys, no whitespace.
pub fn canonical(value: &Value) -> String {
    canonicalize(value).to_string()
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::text::hex(&Sha256::digest(bytes)))
}

fn digest_of(value: &Value) -> String {
    sha256_digest(canonical(value).as_bytes())
}

/// The `upstream` field of an Agent Skill entry: the digest of every file
/// of its folder.
fn agent_files_upstream(files: &BTreeMap<String, String>) -> Value {
    json!({ "files": files })
}

/// The `upstream` field digest a lock records for an Agent Skill whose
/// folder holds `files` (see [`AgentFiles`]): what the gateway compares a
/// served folder with, by the rule that locked it.
pub fn agent_files_digest(files: &BTreeMap<String, String>) -> String {
    digest_of(&agent_files_upstream(files))
}

/// The canonical definition of one entry, by field ([`LOCK_FIELDS`]).
pub fn entry_definition(entry: &ResolvedToolEntry, agent_files: &AgentFiles) -> Map<String, Value> {
    let tool = entry.tool.as_ref();
    let upstream = match tool.map(|t| t.source) {
        // The tool as the server listed it (without the cache's fetch time
        // and position, which change on every refresh without a change).
        Some(ToolSource::Mcp) => tool.map_or(Value::Null, |t| {
            let meta = |key: Meta| t.meta(key).cloned().unwrap_or(Value::Null);
            json!({
                "tool": meta(Meta::Tool),
                "title": meta(Meta::Title),
                "annotations": meta(Meta::Annotations),
                "description": t.description,
                "input_schema": t.input_schema,
                "output_schema": t.output_schema,
            })
        }),
        Some(ToolSource::AgentSkills) => agent_files
            .get(&entry.name)
            .map_or(Value::Null, agent_files_upstream),
        _ => Value::Null,
    };
    let mut fields = Map::new();
    fields.insert("name".into(), Value::from(entry.name.as_str()));
    fields.insert(
        "description".into(),
        tool.map_or(Value::Null, |t| Value::from(t.description.as_str())),
    );
    fields.insert(
        "input_schema".into(),
        tool.and_then(|t| t.input_schema.clone())
            .unwrap_or(Value::Null),
    );
    fields.insert(
        "output_schema".into(),
        tool.and_then(|t| t.output_schema.clone())
            .unwrap_or(Value::Null),
    );
    fields.insert(
        "capabilities".into(),
        json!({
            "read_only": tool.and_then(|t| t.read_only),
            "writes": tool.and_then(|t| t.writes),
            "checkpointable": tool.and_then(|t| t.checkpointable),
            "side_effects": tool.and_then(|t| t.side_effects),
        }),
    );
    fields.insert("overrides".into(), Value::Object(entry.overrides.clone()));
    fields.insert(
        "source".into(),
        json!({
            "tool_source": tool.map(|t| t.source.as_str()),
            "kind": entry.kind,
            "source_skill": entry.source_skill.as_ref(),
            "is_inline": entry.is_inline,
        }),
    );
    fields.insert("upstream".into(), upstream);
    fields
}

/// Locks one entry.
pub fn lock_entry(entry: &ResolvedToolEntry, agent_files: &AgentFiles) -> LockedEntry {
    let definition = entry_definition(entry, agent_files);
    let fields = definition
        .iter()
        .map(|(key, value)| (key.clone(), digest_of(value)))
        .collect();
    LockedEntry {
        name: entry.name.clone(),
        digest: digest_of(&Value::Object(definition)),
        fields,
    }
}

/// Locks one skill's resolution (its entries in resolution order).
pub fn lock_skill(entries: &[ResolvedToolEntry], agent_files: &AgentFiles) -> LockedSkill {
    let entries: Vec<LockedEntry> = entries
        .iter()
        .map(|entry| lock_entry(entry, agent_files))
        .collect();
    let listed: Vec<Value> = entries
        .iter()
        .map(|e| json!({"name": e.name, "digest": e.digest}))
        .collect();
    LockedSkill {
        digest: digest_of(&Value::Array(listed)),
        entries,
    }
}

/// The digest over every skill's digest, by name.
fn top_digest(skills: &BTreeMap<String, LockedSkill>) -> String {
    let digests: Map<String, Value> = skills
        .iter()
        .map(|(name, skill)| (name.clone(), Value::from(skill.digest.as_str())))
        .collect();
    digest_of(&Value::Object(digests))
}

impl Lockfile {
    /// A lock of `skills` (by name).
    pub fn new(skills: BTreeMap<String, LockedSkill>) -> Self {
        Self {
            version: LOCK_VERSION,
            digest: top_digest(&skills),
            skills,
        }
    }

    /// The file text: pretty JSON with sorted keys and a final newline, so
    /// the same lock is always the same bytes.
    pub fn to_text(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut text =
            serde_json::to_string_pretty(&canonicalize(&value)).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        text
    }

    /// Reads a lock file's text (`file` is how errors name it).
    pub fn parse(text: &str, file: &str) -> Result<Self, LockError> {
        // serde's messages quote an offending value whole: a lock file comes
        // with a project, so from anyone, and its error stays short.
        let invalid = |err: serde_json::Error| LockError::Invalid {
            file: file.to_owned(),
            message: crate::text::bounded_message(&err.to_string()),
        };
        // Read straight into the typed lock, never into a JSON value: a
        // value costs tens of times its text (a project's 90 MB lock of
        // unknown keys took 4 GB), the typed lock about its size, and keys
        // it does not know are skipped unread. A key written twice is
        // refused ([`unique_keys`]; serde refuses a field given twice).
        let text = crate::text::without_bom(text);
        let probe: VersionOnly<'_> = serde_json::from_str(text).map_err(invalid)?;
        let version = probe
            .version
            .and_then(|raw| serde_json::from_str::<u64>(raw.get()).ok());
        match version {
            Some(LOCK_VERSION) => {}
            Some(found) => {
                return Err(LockError::Version {
                    file: file.to_owned(),
                    found,
                });
            }
            None => {
                return Err(LockError::Invalid {
                    file: file.to_owned(),
                    message: "no `version` number".into(),
                });
            }
        }
        let lock: Self = serde_json::from_str(text).map_err(invalid)?;
        lock.check().map_err(|message| LockError::Invalid {
            file: file.to_owned(),
            message,
        })?;
        Ok(lock)
    }

    /// That the lock is what `skill lock` wrote: each skill's digest is that
    /// of its entries, the file's that of its skills, every entry has a digest
    /// of every field, each a `sha256:` digest, and no entry name comes twice.
    /// A reviewer compares the digest `skill lock` printed; a lock whose
    /// entries were edited under it must not pass as the one reviewed.
    fn check(&self) -> Result<(), String> {
        let is_digest = |text: &str| {
            text.strip_prefix("sha256:")
                .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        };
        let shown =
            |text: &str| crate::text::shorten(text, crate::text::MAX_ECHO_BYTES).into_owned();
        for (name, skill) in &self.skills {
            let mut seen = std::collections::HashSet::new();
            for entry in &skill.entries {
                if !seen.insert(entry.name.as_str()) {
                    return Err(format!(
                        "skill `{}` lists the entry `{}` twice",
                        shown(name),
                        shown(&entry.name)
                    ));
                }
                if let Some(field) = LOCK_FIELDS.iter().find(|f| !entry.fields.contains_key(**f)) {
                    return Err(format!(
                        "entry `{}` of skill `{}` has no digest of its `{field}`",
                        shown(&entry.name),
                        shown(name)
                    ));
                }
                if let Some(bad) = std::iter::once(&entry.digest)
                    .chain(entry.fields.values())
                    .find(|digest| !is_digest(digest))
                {
                    return Err(format!(
                        "entry `{}` of skill `{}` has `{}` where a `sha256:` digest belongs",
                        shown(&entry.name),
                        shown(name),
                        shown(bad)
                    ));
                }
            }
            let listed: Vec<Value> = skill
                .entries
                .iter()
                .map(|e| json!({"name": e.name, "digest": e.digest}))
                .collect();
            if digest_of(&Value::Array(listed)) != skill.digest {
                return Err(format!(
                    "the digest of skill `{}` is not that of its entries (was the file edited by hand? run `{}` again)",
                    shown(name),
                    crate::Hint::LockAgain
                ));
            }
        }
        if top_digest(&self.skills) != self.digest {
            return Err(format!(
                "the file's digest is not that of its skills (was it edited by hand? run `{}` again)",
                crate::Hint::LockAgain
            ));
        }
        Ok(())
    }
}

/// How a resolution differs from its lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LockDiff {
    /// The skill compared.
    pub skill: String,
    /// True when the lock has no record of the skill at all (every entry is then `added`).
    pub not_locked: bool,
    /// Entries in both whose definition changed, in resolution order.
    pub changed: Vec<ChangedEntry>,
    /// Entries the resolution has and the lock does not, in resolution order.
    pub added: Vec<String>,
    /// Entries the lock has and the resolution does not, in lock order.
    pub removed: Vec<String>,
    /// True when the entries common to both come in another order.
    pub reordered: bool,
}

/// One changed entry and the fields that changed ([`LOCK_FIELDS`] order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangedEntry {
    /// Entry name.
    pub name: String,
    /// The changed fields, e.g. `description`, `input_schema`; `digest` alone
    /// when every field matches but the lock's digest does not.
    pub fields: Vec<String>,
}

impl LockDiff {
    /// True when the resolution matches the lock.
    pub fn is_clean(&self) -> bool {
        !self.not_locked
            && self.changed.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
            && !self.reordered
    }

    /// The diff for people, as `agents skill diff` prints it: whether the
    /// skill matches `file` (or how many entries differ), then one line per
    /// differing entry (`changed NAME: fields`, `added NAME`, `removed
    /// NAME`). With `max_entries`, at most that many entry lines, then how
    /// many more (a report written to a log). Names are escaped
    /// ([`crate::text::escape_control`]); values are never shown, only the
    /// names of the fields that differ, so the text holds no secret.
    pub fn to_text(&self, file: &str, max_entries: Option<usize>) -> String {
        use std::fmt::Write as _;
        let shown = |name: &str| crate::text::escape_control(name).into_owned();
        let skill = shown(&self.skill);
        let mut text = String::new();
        if self.is_clean() {
            let _ = writeln!(text, "{skill} matches {file}");
            return text;
        }
        if self.not_locked {
            let _ = writeln!(text, "{skill} is not in {file}");
        } else {
            let _ = writeln!(
                text,
                "{skill} differs from {file}: {} changed, {} added, {} removed{}",
                self.changed.len(),
                self.added.len(),
                self.removed.len(),
                if self.reordered {
                    ", order changed"
                } else {
                    ""
                }
            );
        }
        let mut lines: Vec<String> = self
            .changed
            .iter()
            .map(|changed| {
                format!(
                    "  changed {}: {}",
                    shown(&changed.name),
                    shown(&changed.fields.join(", "))
                )
            })
            .chain(self.added.iter().map(|a| format!("  added   {}", shown(a))))
            .chain(
                self.removed
                    .iter()
                    .map(|r| format!("  removed {}", shown(r))),
            )
            .collect();
        if let Some(max) = max_entries {
            crate::text::cap_lines(&mut lines, max, |more| {
                format!("  … and {more} more differing entries")
            });
        }
        for line in lines {
            let _ = writeln!(text, "{line}");
        }
        text
    }

    /// What differs of the entry `name` in a few words (`description,
    /// upstream changed`, `removed from the resolution`, `added since the
    /// lock`), or `None` when it matches the lock.
    pub fn entry_change(&self, name: &str) -> Option<String> {
        if let Some(changed) = self.changed.iter().find(|c| c.name == name) {
            return Some(format!("{} changed", changed.fields.join(", ")));
        }
        if self.removed.iter().any(|r| r == name) {
            return Some("removed from the resolution".to_owned());
        }
        if self.added.iter().any(|a| a == name) {
            return Some("added since the lock".to_owned());
        }
        None
    }
}

/// Compares a fresh lock of `skill` with what `lock` recorded for it.
pub fn diff_lock(skill: &str, lock: &Lockfile, current: &LockedSkill) -> LockDiff {
    let mut diff = LockDiff {
        skill: skill.to_owned(),
        ..LockDiff::default()
    };
    let Some(locked) = lock.skills.get(skill) else {
        diff.not_locked = true;
        diff.added = current.entries.iter().map(|e| e.name.clone()).collect();
        return diff;
    };
    let old: HashMap<&str, &LockedEntry> = locked
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e))
        .collect();
    let new: HashMap<&str, &LockedEntry> = current
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e))
        .collect();
    for entry in &current.entries {
        match old.get(entry.name.as_str()) {
            None => diff.added.push(entry.name.clone()),
            Some(before) if before.digest != entry.digest => {
                let mut fields: Vec<String> = LOCK_FIELDS
                    .iter()
                    .filter(|field| before.fields.get(**field) != entry.fields.get(**field))
                    .map(|field| (*field).to_owned())
                    .collect();
                // Fields a later format version may add, in name order. A
                // lock comes with a project, so from anyone: a set, not a
                // search of the list per key.
                let mut listed: HashSet<&str> = HashSet::new();
                for key in before.fields.keys().chain(entry.fields.keys()) {
                    if !LOCK_FIELDS.contains(&key.as_str())
                        && before.fields.get(key) != entry.fields.get(key)
                        && listed.insert(key)
                    {
                        fields.push(key.clone());
                    }
                }
                if fields.is_empty() {
                    // Every field matches, yet the digests differ: the
                    // lock's digest itself was edited (or its fields were,
                    // back to these values). Said, not an empty list.
                    fields.push("digest".to_owned());
                }
                diff.changed.push(ChangedEntry {
                    name: entry.name.clone(),
                    fields,
                });
            }
            Some(_) => {}
        }
    }
    diff.removed = locked
        .entries
        .iter()
        .filter(|e| !new.contains_key(e.name.as_str()))
        .map(|e| e.name.clone())
        .collect();
    let common_old: Vec<&str> = locked
        .entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|name| new.contains_key(name))
        .collect();
    let common_new: Vec<&str> = current
        .entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|name| old.contains_key(name))
        .collect();
    diff.reordered = common_old != common_new;
    diff
}

/// What happened to one tool between two listings of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ListingChange {
    /// Listed now, not before.
    Added,
    /// Listed before, not now.
    Removed,
    /// Listed both times with a different definition.
    Changed,
}

/// One tool that differs between two listings of the same server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolChange {
    /// The tool as skills name it (`mcp:{server}/{tool}`).
    pub name: String,
    /// Added, removed or changed.
    pub change: ListingChange,
    /// For `changed`: each differing field with its value before and after.
    pub fields: Vec<FieldChange>,
}

/// One field of a changed tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// `description`, `input_schema`, `output_schema`, `capabilities`,
    /// `title` or `annotations`.
    pub field: String,
    /// The value before (`null` when absent).
    pub before: Value,
    /// The value now (`null` when absent).
    pub after: Value,
}

/// The fields of a listed tool that a drift check compares (not its fetch
/// time or list position, which change on every refresh).
pub fn listed_tool_fields(spec: &crate::tool::ToolSpec) -> Vec<(&'static str, Value)> {
    let meta = |key: Meta| spec.meta(key).cloned().unwrap_or(Value::Null);
    vec![
        ("description", Value::from(spec.description.as_str())),
        (
            "input_schema",
            spec.input_schema.clone().unwrap_or(Value::Null),
        ),
        (
            "output_schema",
            spec.output_schema.clone().unwrap_or(Value::Null),
        ),
        (
            "capabilities",
            json!({
                "read_only": spec.read_only,
                "writes": spec.writes,
                "checkpointable": spec.checkpointable,
                "side_effects": spec.side_effects,
            }),
        ),
        ("title", meta(Meta::Title)),
        ("annotations", meta(Meta::Annotations)),
    ]
}

/// How the tool list `after` differs from `before` (matched by name):
/// changed and added tools in `after`'s order, then removed ones in
/// `before`'s. Values are compared canonically (key order does not count).
pub fn compare_tool_lists(
    before: &[crate::tool::ToolSpec],
    after: &[crate::tool::ToolSpec],
) -> Vec<ToolChange> {
    let old: HashMap<&str, &crate::tool::ToolSpec> =
        before.iter().map(|t| (t.name.as_str(), t)).collect();
    let new: HashMap<&str, &crate::tool::ToolSpec> =
        after.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut changes = Vec::new();
    for tool in after {
        let Some(previous) = old.get(tool.name.as_str()) else {
            changes.push(ToolChange {
                name: tool.name.clone(),
                change: ListingChange::Added,
                fields: Vec::new(),
            });
            continue;
        };
        let fields: Vec<FieldChange> = listed_tool_fields(previous)
            .into_iter()
            .zip(listed_tool_fields(tool))
            .filter(|((_, b), (_, a))| canonicalize(b) != canonicalize(a))
            .map(|((field, before), (_, after))| FieldChange {
                field: field.to_owned(),
                before,
                after,
            })
            .collect();
        if !fields.is_empty() {
            changes.push(ToolChange {
                name: tool.name.clone(),
                change: ListingChange::Changed,
                fields,
            });
        }
    }
    for tool in before {
        if !new.contains_key(tool.name.as_str()) {
            changes.push(ToolChange {
                name: tool.name.clone(),
                change: ListingChange::Removed,
                fields: Vec::new(),
            });
        }
    }
    changes
}
