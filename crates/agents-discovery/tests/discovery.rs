#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Agent Skills discovery against real folders in temp dirs.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agents_core::ToolSource;
use agents_discovery::{
    ConflictResolution, ConflictStrategy, DiscoveryResult, ExistingTool, MAX_SKILL_MD_BYTES, Rule,
    SkillMdError, discover, lint, load_folder, load_skill, parse_skill_md, read_skill_md,
};
use serde_json::json;

// ---------------------------------------------------------------- helpers

fn skill_text(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")
}

/// Creates `dir/folder/SKILL.md` with `content`.
fn write_skill(dir: &Path, folder: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(folder);
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("SKILL.md"), content).unwrap();
    path
}

fn good_skill(dir: &Path, name: &str) -> PathBuf {
    write_skill(dir, name, skill_text(name, &format!("The {name} skill.")))
}

/// Parses `text` as a `SKILL.md` with no folder (so the folder-name rule is
/// off) and returns every error as displayed.
fn errors(text: impl AsRef<[u8]>) -> Vec<String> {
    match parse_skill_md(Path::new("SKILL.md"), text.as_ref()) {
        Ok(doc) => panic!("expected errors, parsed {doc:?}"),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

fn front(fields: &str) -> String {
    format!("---\n{fields}---\nbody\n")
}

fn nothing_exists(_: &str) -> Option<ExistingTool> {
    None
}

fn run(paths: &[PathBuf], strategy: ConflictStrategy) -> DiscoveryResult {
    discover(paths, &nothing_exists, strategy, None).unwrap()
}

fn names(result: &DiscoveryResult) -> Vec<&str> {
    result
        .discovered
        .iter()
        .map(|tool| tool.name.as_str())
        .collect()
}

fn path_of(tool: &agents_core::ToolSpec) -> &str {
    tool.source_metadata["path"].as_str().unwrap()
}

fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

// ------------------------------------------------------- SKILL.md parsing

#[test]
fn a_full_skill_md_parses_with_every_field() {
    let text = r#"---
name: pdf-processing
description: >
  Extract PDF text, fill forms, merge files.
  Use when handling PDFs.
license: Apache-2.0
compatibility: Requires poppler-utils
metadata:
  author: example-org
  version: "1.0"
allowed-tools: Bash(git:*) Read
input_schema:
  type: object
  properties:
    query:
      type: string
output_schema: {type: string}
---

# PDF processing
"#;
    let doc = parse_skill_md(Path::new("pdf-processing/SKILL.md"), text.as_bytes()).unwrap();
    assert_eq!(doc.name, "pdf-processing");
    assert_eq!(
        doc.description,
        "Extract PDF text, fill forms, merge files. Use when handling PDFs."
    );
    assert_eq!(doc.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(doc.compatibility.as_deref(), Some("Requires poppler-utils"));
    assert_eq!(doc.metadata["author"], "example-org");
    assert_eq!(doc.metadata["version"], "1.0");
    assert_eq!(doc.allowed_tools.as_deref(), Some("Bash(git:*) Read"));
    assert_eq!(
        doc.input_schema,
        Some(json!({"type": "object", "properties": {"query": {"type": "string"}}}))
    );
    assert_eq!(doc.output_schema, Some(json!({"type": "string"})));
    assert_eq!(doc.body_line, 19);
    assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
}

#[test]
fn name_rules_each_have_their_own_error() {
    let cases: &[(&str, &[&str])] = &[
        (
            "Foo",
            &["SKILL.md:2: name `Foo` must be lowercase ASCII letters, digits and hyphens"],
        ),
        (
            "foo_bar",
            &["SKILL.md:2: name `foo_bar` must be lowercase ASCII letters, digits and hyphens"],
        ),
        (
            "\"foo bar\"",
            &["SKILL.md:2: name `foo bar` must be lowercase ASCII letters, digits and hyphens"],
        ),
        (
            "ünïcode",
            &["SKILL.md:2: name `ünïcode` must be lowercase ASCII letters, digits and hyphens"],
        ),
        (
            "-foo",
            &["SKILL.md:2: name `-foo` must not start or end with a hyphen"],
        ),
        (
            "foo-",
            &["SKILL.md:2: name `foo-` must not start or end with a hyphen"],
        ),
        (
            "foo--bar",
            &["SKILL.md:2: name `foo--bar` must not contain consecutive hyphens"],
        ),
        ("\"\"", &["SKILL.md:2: `name` must not be empty"]),
        ("", &["SKILL.md:2: `name` must not be empty"]),
        (
            "[a]",
            &["SKILL.md:2: `name` must be a string, got a sequence"],
        ),
        // A plain scalar is its text, as the reference reads it: `12` is
        // the name "12", which must then equal its folder's name.
        (
            "{a: b}",
            &["SKILL.md:2: `name` must be a string, got a mapping"],
        ),
        (
            "-Bad--",
            &[
                "SKILL.md:2: name `-Bad--` must be lowercase ASCII letters, digits and hyphens",
                "SKILL.md:2: name `-Bad--` must not start or end with a hyphen",
                "SKILL.md:2: name `-Bad--` must not contain consecutive hyphens",
            ],
        ),
    ];
    for (name, expected) in cases {
        assert_eq!(
            errors(front(&format!("name: {name}\ndescription: d\n"))),
            *expected,
            "name {name}"
        );
    }
    let long = "a".repeat(65);
    assert_eq!(
        errors(front(&format!("name: {long}\ndescription: d\n"))),
        [format!(
            "SKILL.md:2: name `{long}` is 65 characters, at most 64 are allowed"
        )]
    );
    for good in ["a", "pdf-processing", "a1-b2-c3", "0a", &"x".repeat(64)] {
        let doc = parse_skill_md(
            Path::new("SKILL.md"),
            front(&format!("name: {good}\ndescription: d\n")).as_bytes(),
        )
        .unwrap_or_else(|err| panic!("{good}: {err:?}"));
        assert_eq!(doc.name, *good);
    }
}

#[test]
fn very_long_values_are_cut_in_messages() {
    let long = format!("A{}", "b".repeat(200));
    let shown: String = long.chars().take(80).collect();
    assert_eq!(
        errors(front(&format!("name: {long}\ndescription: d\n"))),
        [
            format!("SKILL.md:2: name `{shown}…` is 201 characters, at most 64 are allowed"),
            format!(
                "SKILL.md:2: name `{shown}…` must be lowercase ASCII letters, digits and hyphens"
            ),
        ]
    );
}

#[test]
fn name_must_equal_the_folder_name() {
    let text = skill_text("foo", "d");
    let err = parse_skill_md(Path::new("skills/other/SKILL.md"), text.as_bytes()).unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].rule, Rule::NameFolder);
    assert_eq!(
        err[0].to_string(),
        "skills/other/SKILL.md:2: name `foo` must equal its folder's name `other`"
    );
    assert!(parse_skill_md(Path::new("skills/foo/SKILL.md"), text.as_bytes()).is_ok());
}

#[test]
fn description_rules() {
    assert_eq!(
        errors(front("name: a\ndescription: \"  \"\n")),
        ["SKILL.md:3: `description` must not be empty"]
    );
    assert_eq!(
        errors(front("name: a\ndescription:\n")),
        ["SKILL.md:3: `description` must not be empty"]
    );
    assert_eq!(
        errors(front("name: a\ndescription: {a: b}\n")),
        ["SKILL.md:3: `description` must be a string, got a mapping"]
    );
    let max = "d".repeat(1024);
    let doc = parse_skill_md(
        Path::new("SKILL.md"),
        front(&format!("name: a\ndescription: {max}\n")).as_bytes(),
    )
    .unwrap();
    assert_eq!(doc.description.chars().count(), 1024);
    // Characters, not bytes: 1024 two-byte characters are allowed.
    let wide = "é".repeat(1024);
    assert!(
        parse_skill_md(
            Path::new("SKILL.md"),
            front(&format!("name: a\ndescription: {wide}\n")).as_bytes()
        )
        .is_ok()
    );
    assert_eq!(
        errors(front(&format!("name: a\ndescription: {max}x\n"))),
        ["SKILL.md:3: `description` is 1025 characters, at most 1024 are allowed"]
    );
}

#[test]
fn missing_required_fields_are_reported_together() {
    assert_eq!(
        errors(front("license: MIT\n")),
        [
            "SKILL.md:1: missing required field `name`",
            "SKILL.md:1: missing required field `description`"
        ]
    );
    let err = parse_skill_md(Path::new("SKILL.md"), front("name: a\n").as_bytes()).unwrap_err();
    assert_eq!(err[0].rule, Rule::MissingField);
}

#[test]
fn compatibility_and_license_rules() {
    let ok = parse_skill_md(
        Path::new("SKILL.md"),
        front(&format!(
            "name: a\ndescription: d\ncompatibility: {}\nlicense:\n",
            "c".repeat(500)
        ))
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(ok.compatibility.unwrap().len(), 500);
    assert_eq!(ok.license, None);
    assert_eq!(
        errors(front(&format!(
            "name: a\ndescription: d\ncompatibility: {}\n",
            "c".repeat(501)
        ))),
        ["SKILL.md:4: `compatibility` is 501 characters, at most 500 are allowed"]
    );
    assert_eq!(
        errors(front("name: a\ndescription: d\ncompatibility: \"\"\n")),
        ["SKILL.md:4: `compatibility` must not be empty when given"]
    );
    assert_eq!(
        errors(front(
            "name: a\ndescription: d\nlicense: [MIT]\ncompatibility: {a: 3}\n"
        )),
        [
            "SKILL.md:4: `license` must be a string, got a sequence",
            "SKILL.md:5: `compatibility` must be a string, got a mapping"
        ]
    );
}

/// A plain scalar in a string field is the text written, as the Agent
/// Skills reference reads it: YAML's numbers, booleans, `.inf` and `.nan`
/// are not types a string field can refuse.
#[test]
fn plain_scalars_in_string_fields_are_their_text() {
    let doc = parse_skill_md(
        Path::new("123/SKILL.md"),
        front(
            "name: 123\ndescription: 1.10\nlicense: 2.0\ncompatibility: 3.10\nallowed-tools: 1\n",
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(doc.name, "123");
    assert_eq!(doc.description, "1.10");
    assert_eq!(doc.license.as_deref(), Some("2.0"));
    assert_eq!(doc.compatibility.as_deref(), Some("3.10"));
    assert_eq!(doc.allowed_tools.as_deref(), Some("1"));
    assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    for (written, text) in [
        (".inf", ".inf"),
        ("-.Inf", "-.Inf"),
        (".nan", ".nan"),
        ("true", "true"),
        ("0x1F", "0x1F"),
        (
            "123456789012345678901234567890",
            "123456789012345678901234567890",
        ),
        ("1e3", "1e3"),
    ] {
        let doc = parse_skill_md(
            Path::new("SKILL.md"),
            front(&format!("name: a\ndescription: {written}\n")).as_bytes(),
        )
        .unwrap_or_else(|e| panic!("{written}: {e:?}"));
        assert_eq!(doc.description, text);
    }
    // An alias to a plain scalar is the anchor's text.
    let doc = parse_skill_md(
        Path::new("SKILL.md"),
        front("name: a\nlicense: &v 1.10\ndescription: *v\n").as_bytes(),
    )
    .unwrap();
    assert_eq!(doc.description, "1.10");
    // Names keep their rules: a number is a name only if it is a valid one.
    assert_eq!(
        errors(front("name: 1.5\ndescription: d\n")),
        ["SKILL.md:2: name `1.5` must be lowercase ASCII letters, digits and hyphens"]
    );
}

#[test]
fn metadata_is_a_map_of_strings() {
    assert_eq!(
        errors(front("name: a\ndescription: d\nmetadata: [x]\n")),
        ["SKILL.md:4: `metadata` must be a mapping of strings to strings, got a sequence"]
    );
    assert_eq!(
        errors(front(
            "name: a\ndescription: d\nmetadata:\n  author: ada\n  tags: [a, b]\n  owner: {team: x}\n"
        )),
        [
            "SKILL.md:6: metadata `tags` must be a string, got a sequence",
            "SKILL.md:7: metadata `owner` must be a string, got a mapping"
        ]
    );
    // Plain scalars keep the text written, as the standard's reference
    // parser reads them (YAML alone would make `1.10` the number 1.1).
    let doc = parse_skill_md(
        Path::new("SKILL.md"),
        front(concat!(
            "name: a\ndescription: d\nmetadata:\n  version: 1.10\n  internal: true\n",
            "  h: 0x1F\n  o2: 0o17\n  e: 1e3\n  neg: -0\n  wide: 123456789012345678901234567890\n",
            "  inf: .inf\n  quoted: \"1.10\"\n",
        ))
        .as_bytes(),
    )
    .unwrap();
    let texts: Vec<(&str, &str)> = doc
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            ("version", "1.10"),
            ("internal", "true"),
            ("h", "0x1F"),
            ("o2", "0o17"),
            ("e", "1e3"),
            ("neg", "-0"),
            ("wide", "123456789012345678901234567890"),
            ("inf", ".inf"),
            ("quoted", "1.10"),
        ]
    );
    assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    // A null value keeps its key, empty, with a warning.
    let doc = parse_skill_md(
        Path::new("SKILL.md"),
        front("name: a\ndescription: d\nmetadata:\n  n: null\n  t: ~\n  e:\n  k: v\n").as_bytes(),
    )
    .unwrap();
    assert_eq!(doc.metadata["n"], "");
    assert_eq!(doc.metadata["t"], "");
    assert_eq!(doc.metadata["e"], "");
    assert_eq!(doc.metadata["k"], "v");
    let warnings: Vec<_> = doc.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings[0],
        "SKILL.md:5: metadata `n` is null, stored as the empty string: quote its value to keep a text"
    );
    assert_eq!(warnings.len(), 3);
}

#[test]
fn allowed_tools_is_a_string_or_a_list_of_strings() {
    let parse = |value: &str| {
        parse_skill_md(
            Path::new("SKILL.md"),
            front(&format!(
                "name: a\ndescription: d\nallowed-tools: {value}\n"
            ))
            .as_bytes(),
        )
    };
    assert_eq!(
        parse("Bash(git:*) Read").unwrap().allowed_tools.as_deref(),
        Some("Bash(git:*) Read")
    );
    assert_eq!(
        parse("[Bash(git:*), Read]")
            .unwrap()
            .allowed_tools
            .as_deref(),
        Some("Bash(git:*) Read")
    );
    assert_eq!(parse("[]").unwrap().allowed_tools, None);
    assert_eq!(
        errors(front(
            "name: a\ndescription: d\nallowed-tools: {Read: yes}\n"
        )),
        [
            "SKILL.md:4: `allowed-tools` must be a space-separated string or a list of strings, got a mapping"
        ]
    );
}

#[test]
fn schemas_must_be_json_schemas() {
    assert_eq!(
        errors(front(
            "name: a\ndescription: d\ninput_schema: [x]\noutput_schema:\n  type: 5\n"
        )),
        [
            "SKILL.md:4: `input_schema`: expected a JSON Schema object, got an array",
            "SKILL.md:5: `output_schema`: not a valid JSON Schema: 5 is not valid under any of the schemas listed in the 'anyOf' keyword"
        ]
    );
    let err = parse_skill_md(
        Path::new("SKILL.md"),
        front("name: a\ndescription: d\ninput_schema: [x]\n").as_bytes(),
    )
    .unwrap_err();
    assert_eq!(err[0].rule, Rule::Schema);
}

#[test]
fn unknown_fields_are_warnings_and_the_skill_still_loads() {
    let doc = parse_skill_md(
        Path::new("SKILL.md"),
        front("name: a\ndescription: d\nversion: 2\nuser-invocable: true\n").as_bytes(),
    )
    .unwrap();
    assert_eq!(doc.warnings.len(), 2);
    assert_eq!(doc.warnings[0].rule, Rule::UnknownField);
    assert_eq!(
        doc.warnings[0].to_string(),
        "SKILL.md:4: unknown field `version` ignored: the Agent Skills standard defines `name`, `description`, `license`, `compatibility`, `metadata` and `allowed-tools` (this registry also reads `input_schema` and `output_schema`)"
    );
    assert_eq!(doc.warnings[1].line, Some(5));
}

#[test]
fn a_misspelled_field_is_named_with_the_error_it_causes() {
    // `descrption`: the warning says what it looks like, and the missing
    // `description` error (shown without the warnings) points at it.
    let errors = parse_skill_md(
        Path::new("typo/SKILL.md"),
        front("name: typo\ndescrption: Does things\n").as_bytes(),
    )
    .unwrap_err();
    assert_eq!(
        errors[0].to_string(),
        "typo/SKILL.md:1: missing required field `description` (is `descrption` on line 3 a misspelling of it?)"
    );
    let doc = parse_skill_md(
        Path::new("typo/SKILL.md"),
        front("name: typo\ndescription: d\nlicence: MIT\n").as_bytes(),
    )
    .unwrap();
    assert!(
        doc.warnings[0]
            .to_string()
            .contains("unknown field `licence` ignored (did you mean `license`?)"),
        "{}",
        doc.warnings[0]
    );
}

#[test]
fn yaml_errors_point_at_the_line_in_skill_md() {
    // The opening fence is line 1, so the bad line 4 of the file is reported
    // as line 4, not as line 3 of the front-matter.
    let text = "---\nname: a\ndescription: d\nbad: [\n---\n";
    let err = parse_skill_md(Path::new("SKILL.md"), text.as_bytes()).unwrap_err();
    assert_eq!(err[0].rule, Rule::Yaml);
    assert_eq!(err[0].line, Some(5));
    assert_eq!(err[0].column, Some(1));
    assert_eq!(
        err[0].to_string(),
        "SKILL.md:5:1: invalid YAML: did not find expected node content, while parsing a flow node"
    );
    let err = parse_skill_md(
        Path::new("SKILL.md"),
        b"---\nname: a\ndescription: d\n  x: y\n---\n",
    )
    .unwrap_err();
    assert_eq!(
        err[0].to_string(),
        "SKILL.md:4:4: invalid YAML: mapping values are not allowed in this context"
    );
}

/// Each file of `tests/fixtures/malformed/` and the errors it must give.
const MALFORMED: &[(&str, &[&str])] = &[
    (
        "bad-allowed-tools.md",
        &[
            "SKILL.md:4: `allowed-tools` must be a space-separated string or a list of strings, got a sequence with non-string items",
        ],
    ),
    (
        "bad-indentation.md",
        &["SKILL.md:3:14: invalid YAML: mapping values are not allowed in this context"],
    ),
    (
        "bad-metadata.md",
        &["SKILL.md:6: metadata `tags` must be a string, got a sequence"],
    ),
    (
        "bad-schemas.md",
        &[
            "SKILL.md:4: `input_schema`: not a valid JSON Schema: \"objekt\" is not valid under any of the schemas listed in the 'anyOf' keyword",
            "SKILL.md:6: `output_schema`: expected a JSON Schema object, got a string",
        ],
    ),
    (
        "billion-laughs.md",
        &["SKILL.md:1: invalid YAML: YAML aliases expand too far (repetition limit exceeded)"],
    ),
    (
        "closing-fence-with-text.md",
        &["SKILL.md:1: front-matter opened on line 1 is never closed by a `---` line"],
    ),
    (
        "comment-only-front-matter.md",
        &["SKILL.md:1: front-matter is empty, expected at least `name` and `description`"],
    ),
    (
        "cr-line-endings.md",
        &[
            "SKILL.md:1: lines end in a lone carriage return (`\\r`, classic Mac line endings): save the file with `\\n` or `\\r\\n` line endings",
        ],
    ),
    (
        "custom-tag.md",
        &["SKILL.md:2:7: invalid YAML: name: YAML tags such as `!name` are not supported"],
    ),
    (
        "duplicate-key.md",
        &["SKILL.md:4:1: invalid YAML: duplicate key `name`"],
    ),
    (
        "empty-front-matter.md",
        &["SKILL.md:1: front-matter is empty, expected at least `name` and `description`"],
    ),
    (
        "fence-not-on-first-line.md",
        &["SKILL.md:1: expected `---` on the first line to open the front-matter"],
    ),
    (
        "indented-opening-fence.md",
        &["SKILL.md:1: expected `---` on the first line to open the front-matter"],
    ),
    (
        "infinite-number.md",
        // `.inf` is text in a string field; a schema cannot hold it.
        &[
            "SKILL.md:4: invalid YAML: input_schema.maximum: `.nan`, `.inf` and integers wider than 64 bits are not supported (JSON cannot hold them; quote them for the text)",
        ],
    ),
    (
        "missing-required-fields.md",
        &[
            "SKILL.md:1: missing required field `name`",
            "SKILL.md:1: missing required field `description`",
        ],
    ),
    (
        "no-front-matter.md",
        &["SKILL.md:1: expected `---` on the first line to open the front-matter"],
    ),
    (
        "scalar-front-matter.md",
        &["SKILL.md:2: front-matter must be a YAML mapping of fields, got a string"],
    ),
    (
        "sequence-front-matter.md",
        &["SKILL.md:2: front-matter must be a YAML mapping of fields, got a sequence"],
    ),
    (
        "tab-indentation.md",
        &[
            "SKILL.md:3:1: invalid YAML: found a tab character that violates indentation, while scanning a plain scalar at line 2 column 7",
        ],
    ),
    (
        "unclosed-flow-sequence.md",
        &[
            "SKILL.md:4:1: invalid YAML: did not find expected ',' or ']', while parsing a flow sequence at line 3 column 14",
        ],
    ),
    (
        "unclosed.md",
        &["SKILL.md:1: front-matter opened on line 1 is never closed by a `---` line"],
    ),
    (
        "undefined-alias.md",
        &["SKILL.md:2:7: invalid YAML: unknown anchor"],
    ),
    (
        "uppercase-name.md",
        &["SKILL.md:2: name `PDF_Tools` must be lowercase ASCII letters, digits and hyphens"],
    ),
    (
        "wide-number-in-schema.md",
        // Text fields keep `1.10` and `.inf` as written; a schema cannot
        // hold an integer wider than 64 bits.
        &[
            "SKILL.md:6: invalid YAML: input_schema.properties.n.default: `.nan`, `.inf` and integers wider than 64 bits are not supported (JSON cannot hold them; quote them for the text)",
        ],
    ),
    (
        "wrong-types.md",
        &[
            "SKILL.md:2: `name` must be a string, got a sequence",
            "SKILL.md:3: `description` must be a string, got a mapping",
        ],
    ),
];

#[test]
fn every_malformed_fixture_gives_its_expected_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/malformed");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let listed: Vec<&str> = MALFORMED.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        on_disk, listed,
        "every fixture needs an expectation and vice versa"
    );
    for (file, expected) in MALFORMED {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        assert_eq!(errors(&bytes), *expected, "{file}");
    }
}

#[test]
fn non_utf8_is_an_error_at_the_bad_byte() {
    let mut bytes = b"---\nname: a\ndescription: caf".to_vec();
    bytes.push(0xE9);
    bytes.extend_from_slice(b"\n---\n");
    let err = parse_skill_md(Path::new("SKILL.md"), &bytes).unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].rule, Rule::Encoding);
    assert_eq!(err[0].to_string(), "SKILL.md:3:17: not valid UTF-8 text");
}

#[test]
fn a_byte_order_mark_is_accepted_with_a_warning() {
    let text = format!("\u{feff}{}", skill_text("a", "d"));
    let doc = parse_skill_md(Path::new("SKILL.md"), text.as_bytes()).unwrap();
    assert_eq!(doc.name, "a");
    assert_eq!(
        doc.warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["SKILL.md:1: byte order mark ignored: save the file as UTF-8 without a BOM"]
    );
}

#[test]
fn crlf_line_ends_are_accepted() {
    let text = "---\r\nname: a\r\ndescription: |\r\n  one\r\n  two\r\nmetadata:\r\n  k: v\r\n---\r\nbody\r\n";
    let doc = parse_skill_md(Path::new("SKILL.md"), text.as_bytes()).unwrap();
    assert_eq!(doc.description, "one\ntwo");
    assert_eq!(doc.metadata["k"], "v");
    assert_eq!(doc.body_line, 9);
    let err = parse_skill_md(
        Path::new("SKILL.md"),
        b"---\r\nname: A\r\ndescription: d\r\n---\r\n",
    )
    .unwrap_err();
    assert_eq!(
        err[0].to_string(),
        "SKILL.md:2: name `A` must be lowercase ASCII letters, digits and hyphens"
    );
}

#[test]
fn edge_case_inputs_never_panic() {
    let cases: &[(&[u8], &str)] = &[
        (
            b"",
            "SKILL.md:1: file is empty, expected front-matter between `---` lines",
        ),
        (
            b"---",
            "SKILL.md:1: front-matter opened on line 1 is never closed by a `---` line",
        ),
        (
            b"---\n",
            "SKILL.md:1: front-matter opened on line 1 is never closed by a `---` line",
        ),
        (
            b"---\n---",
            "SKILL.md:1: front-matter is empty, expected at least `name` and `description`",
        ),
        (
            b"\r\n\r\n",
            "SKILL.md:1: expected `---` on the first line to open the front-matter",
        ),
        (
            b"---\nname: a\x00\n---\n",
            "SKILL.md:2:8: invalid YAML: control characters are not allowed",
        ),
        (
            b"---\n: \n---\n",
            "SKILL.md:2:1: invalid YAML: did not find expected key, while parsing a block mapping",
        ),
        (
            b"---\n? [a]\n: b\n---\n",
            "SKILL.md:2:3: invalid YAML: invalid type: sequence, expected a scalar mapping key",
        ),
        (
            b"---\nname: a\n---\n---\n",
            "SKILL.md:1: missing required field `description`",
        ),
    ];
    for (bytes, expected) in cases {
        let got = errors(bytes);
        assert_eq!(
            got.first().map(String::as_str),
            Some(*expected),
            "{:?}: {got:?}",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn deep_nesting_fails_fast() {
    // libyaml's time grows with the square of flow nesting (50,000 `[` took
    // 10 s), so depth is checked before it runs; 1 MiB of `[` is the worst.
    // What is asserted is that order, not a time: the depth check runs on
    // the text before libyaml parses it, so a syntax error on line 2, where
    // libyaml would stop, loses to the depth on line 4.
    let text = format!(
        "---\nname: a: b\ndescription: d\ninput_schema: {}{}\n---\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    assert_eq!(
        errors(&text),
        ["SKILL.md:4:143: invalid YAML: nested deeper than 128 levels (recursion limit exceeded)"]
    );
    let shallow = "---\nname: a: b\ndescription: d\ninput_schema: [[]]\n---\n";
    assert!(
        errors(shallow)[0].starts_with("SKILL.md:2:"),
        "libyaml stops at line 2 when the depth allows it to run: {:?}",
        errors(shallow)
    );
    let depth = MAX_SKILL_MD_BYTES as usize / 2 - 64;
    for (open, close) in [("[", "]"), ("{a: ", "}")] {
        let count = depth / open.len();
        let text = format!(
            "---\nname: a\ndescription: d\ninput_schema: {}{}\n---\n",
            open.repeat(count),
            close.repeat(count)
        );
        let got = errors(&text);
        let column = 15 + 128 * open.len();
        assert_eq!(
            got,
            [format!(
                "SKILL.md:4:{column}: invalid YAML: nested deeper than 128 levels (recursion limit exceeded)"
            )]
        );
    }
    // Block nesting is linear for libyaml (no pre-check) and stopped by
    // yaml_serde at 128 levels.
    let text = format!(
        "---\nname: a\ndescription: d\nx:\n{}a\n---\n",
        "- ".repeat(200_000)
    );
    let got = errors(&text);
    assert_eq!(
        got,
        ["SKILL.md:5:255: invalid YAML: nested deeper than 128 levels (recursion limit exceeded)"]
    );
    // Up to 128 levels is fine.
    let text = format!(
        "---\nname: a\ndescription: d\nx: {}{}\n---\n",
        "[".repeat(127),
        "]".repeat(127)
    );
    assert!(parse_skill_md(Path::new("SKILL.md"), text.as_bytes()).is_ok());
}

#[test]
fn thousands_of_fields_parse_and_warnings_are_capped() {
    let fields: String = (0..20_000)
        .map(|i| format!("field{i}: &anchor{i} value\n"))
        .collect();
    let text = format!("---\nname: a\ndescription: d\n{fields}---\n");
    let doc = parse_skill_md(Path::new("SKILL.md"), text.as_bytes()).unwrap();
    assert_eq!(doc.warnings.len(), 21);
    assert_eq!(doc.warnings[19].line, Some(23));
    assert_eq!(
        doc.warnings[20].to_string(),
        "SKILL.md:24: 19980 more warnings not shown"
    );
}

#[test]
fn thousands_of_errors_are_capped_too() {
    // One error per `metadata` value that is not a string: 50,000 of them
    // printed one line each (with the file's path) ran to megabytes.
    let keys: String = (0..50_000).map(|i| format!("  k{i}: [1]\n")).collect();
    let text = format!("---\nname: a\ndescription: d\nmetadata:\n{keys}---\n");
    let got = errors(&text);
    assert_eq!(got.len(), 21, "{:?}", &got[..3]);
    assert!(got[0].starts_with("SKILL.md:5:"), "{}", got[0]);
    assert_eq!(got[20], "SKILL.md:25: 49980 more errors not shown");
}

#[test]
fn an_alias_to_a_large_string_repeated_hits_the_budget() {
    let mut text = format!(
        "---\nname: a\ndescription: d\nbig: &big \"{}\"\nmany: [",
        "x".repeat(700_000)
    );
    text.push_str(&"*big,".repeat(100));
    text.push_str("*big]\n---\n");
    assert!(text.len() < MAX_SKILL_MD_BYTES as usize);
    let got = errors(&text);
    // Counted, not timed: the budget (32 MiB of built values) stops the
    // expansion at the 47th copy of the 700 kB string, of 101.
    assert_eq!(
        got,
        [
            "SKILL.md:4:6: invalid YAML: many[46]: front-matter is too large once YAML aliases are expanded"
        ]
    );
}

#[test]
fn files_over_one_mebibyte_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = skill_text("big", "d");
    text.push_str(&"x".repeat(MAX_SKILL_MD_BYTES as usize));
    let folder = write_skill(dir.path(), "big", &text);
    let err = load_folder(&folder).unwrap_err();
    assert_eq!(err.problems.len(), 1);
    assert_eq!(err.problems[0].rule, Rule::FileSize);
    assert_eq!(
        err.to_string(),
        format!(
            "{}: file is larger than 1048576 bytes (1 MiB)",
            folder.join("SKILL.md").display()
        )
    );
    assert_eq!(
        errors(text.as_bytes()),
        ["SKILL.md: file is larger than 1048576 bytes (1 MiB)"]
    );
    // Exactly the limit is fine.
    let mut exact = skill_text("big", "d");
    exact.push_str(&"x".repeat(MAX_SKILL_MD_BYTES as usize - exact.len()));
    std::fs::write(folder.join("SKILL.md"), &exact).unwrap();
    assert!(load_folder(&folder).is_ok());
}

#[test]
fn a_directory_named_skill_md_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("weird");
    std::fs::create_dir_all(folder.join("SKILL.md")).unwrap();
    let err = load_folder(&folder).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: `SKILL.md` is a directory, expected a file",
            folder.join("SKILL.md").display()
        )
    );
    let result = run(&[dir.path().to_path_buf()], ConflictStrategy::Skip);
    assert_eq!(result.errors.len(), 1);
    assert_eq!(result.errors[0].folder, folder);
}

#[test]
fn a_fifo_named_skill_md_does_not_block() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("pipe");
    std::fs::create_dir_all(&folder).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(folder.join("SKILL.md"))
        .status()
        .unwrap();
    assert!(status.success());
    let err = load_folder(&folder).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: not a regular file", folder.join("SKILL.md").display())
    );
}

#[test]
fn read_skill_md_reads_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let folder = good_skill(dir.path(), "reader");
    assert_eq!(
        read_skill_md(&folder.join("SKILL.md")).unwrap().name,
        "reader"
    );
    let missing = read_skill_md(&dir.path().join("nope/SKILL.md")).unwrap_err();
    assert_eq!(missing[0].rule, Rule::Read);
    assert!(
        missing[0].message.starts_with("cannot read: "),
        "{}",
        missing[0]
    );
}

// ------------------------------------------------------------ one folder

#[test]
fn load_folder_builds_the_tool_spec() {
    let dir = tempfile::tempdir().unwrap();
    let folder = write_skill(
        dir.path(),
        "pdf-tools",
        "---\nname: pdf-tools\ndescription: Works with PDFs.\nlicense: MIT\ncompatibility: needs poppler\nmetadata:\n  author: ada\nallowed-tools: [Read, Write]\ninput_schema:\n  type: object\noutput_schema:\n  type: string\n---\n",
    );
    let tool = load_folder(&folder).unwrap();
    let realpath = real(&folder);
    assert_eq!(tool.name, "agent_skills/pdf-tools");
    assert_eq!(tool.source, ToolSource::AgentSkills);
    assert_eq!(tool.description, "Works with PDFs.");
    assert_eq!(tool.input_schema, Some(json!({"type": "object"})));
    assert_eq!(tool.output_schema, Some(json!({"type": "string"})));
    assert_eq!(
        serde_json::Value::Object(tool.source_metadata.clone()),
        json!({
            "path": realpath,
            "skill_md": realpath.join("SKILL.md"),
            "license": "MIT",
            "compatibility": "needs poppler",
            "metadata": {"author": "ada"},
            "allowed-tools": "Read Write",
        })
    );
    assert!(tool.validate().is_ok());

    let minimal = load_folder(&good_skill(dir.path(), "tiny")).unwrap();
    assert_eq!(
        minimal.source_metadata.keys().collect::<Vec<_>>(),
        ["path", "skill_md"]
    );
    assert_eq!(minimal.input_schema, None);
}

#[test]
fn load_folder_accepts_dot_and_checks_the_resolved_name() {
    let dir = tempfile::tempdir().unwrap();
    let folder = good_skill(dir.path(), "here");
    let dot = folder.join(".");
    let tool = load_folder(&dot).unwrap();
    assert_eq!(tool.name, "agent_skills/here");
    let loaded = load_skill(&folder).unwrap();
    assert!(loaded.warnings.is_empty());
}

#[test]
fn a_folder_with_many_problems_lists_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let folder = write_skill(
        dir.path(),
        "broken",
        front("name: Broken--\ndescription: \"\"\ncompatibility: \"\"\n"),
    );
    let err = load_folder(&folder).unwrap_err();
    let file = folder.join("SKILL.md");
    let f = file.display();
    assert_eq!(
        err.to_string(),
        format!(
            "skill folder `{}` has 6 problems:\n  {f}:2: name `Broken--` must be lowercase ASCII letters, digits and hyphens\n  {f}:2: name `Broken--` must not start or end with a hyphen\n  {f}:2: name `Broken--` must not contain consecutive hyphens\n  {f}:2: name `Broken--` must equal its folder's name `broken`\n  {f}:3: `description` must not be empty\n  {f}:4: `compatibility` must not be empty when given",
            folder.display()
        )
    );
    let rules: Vec<Rule> = err.problems.iter().map(|p| p.rule).collect();
    assert_eq!(
        rules,
        [
            Rule::NameFormat,
            Rule::NameFormat,
            Rule::NameFormat,
            Rule::NameFolder,
            Rule::Description,
            Rule::Compatibility
        ]
    );
}

// -------------------------------------------------------------- discovery

#[test]
fn discovery_order_is_path_order_then_folder_name() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    for name in ["zeta", "alpha", "mid"] {
        good_skill(first.path(), name);
    }
    for name in ["beta", "aardvark"] {
        good_skill(second.path(), name);
    }
    let paths = [first.path().to_path_buf(), second.path().to_path_buf()];
    let result = run(&paths, ConflictStrategy::Skip);
    assert_eq!(
        names(&result),
        [
            "agent_skills/alpha",
            "agent_skills/mid",
            "agent_skills/zeta",
            "agent_skills/aardvark",
            "agent_skills/beta"
        ]
    );
    assert!(result.conflicts.is_empty() && result.errors.is_empty() && result.warnings.is_empty());
    // Parallel parsing does not change the result.
    for _ in 0..3 {
        assert_eq!(run(&paths, ConflictStrategy::Skip), result);
    }
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(
        single.install(|| run(&paths, ConflictStrategy::Skip)),
        result
    );
}

#[test]
fn only_immediate_non_hidden_subfolders_with_skill_md_count() {
    let dir = tempfile::tempdir().unwrap();
    good_skill(dir.path(), "visible");
    good_skill(dir.path(), ".hidden");
    good_skill(&dir.path().join("group"), "nested");
    std::fs::create_dir_all(dir.path().join("no-skill-md")).unwrap();
    std::fs::write(dir.path().join("README.md"), "not a folder").unwrap();
    let result = run(&[dir.path().to_path_buf()], ConflictStrategy::Skip);
    assert_eq!(names(&result), ["agent_skills/visible"]);
    assert!(result.errors.is_empty() && result.warnings.is_empty());
}

/// A path that holds a `SKILL.md` itself is a skill folder, as `skill lint`
/// takes it (scanning only its subfolders found nothing, and the re-scan
/// then dropped every skill found before), and its immediate subfolders
/// holding a `SKILL.md` are skills too, as the specification finds them
/// for every path: `top/SKILL.md` does not hide `top/sub/SKILL.md`.
#[test]
fn a_path_that_is_a_skill_folder_is_that_skill_and_its_subfolders_too() {
    let dir = tempfile::tempdir().unwrap();
    let one = good_skill(dir.path(), "valid-basic");
    good_skill(&one, "inner");
    // Only immediate subfolders: one deeper is not looked at.
    good_skill(&one.join("inner"), "deeper");
    // A subfolder without a `SKILL.md` is the skill's own files.
    std::fs::create_dir_all(one.join("scripts")).unwrap();
    let result = run(std::slice::from_ref(&one), ConflictStrategy::Skip);
    assert_eq!(
        names(&result),
        ["agent_skills/valid-basic", "agent_skills/inner"]
    );
    assert_eq!(path_of(&result.discovered[0]), real(&one).to_str().unwrap());
    assert_eq!(
        path_of(&result.discovered[1]),
        real(&one.join("inner")).to_str().unwrap()
    );
    assert!(result.errors.is_empty() && result.warnings.is_empty());
    // With a directory of skill folders beside it, both count.
    let other = tempfile::tempdir().unwrap();
    good_skill(other.path(), "second");
    let result = run(
        &[one.clone(), other.path().to_path_buf()],
        ConflictStrategy::Skip,
    );
    assert_eq!(
        names(&result),
        [
            "agent_skills/valid-basic",
            "agent_skills/inner",
            "agent_skills/second"
        ]
    );
}

/// The Agent Skills reference accepts `skill.md` when a folder has no
/// `SKILL.md`; when both are there, `SKILL.md` is the one read.
#[test]
fn a_lowercase_skill_md_is_read_when_there_is_no_skill_md() {
    let dir = tempfile::tempdir().unwrap();
    let lower = dir.path().join("lower");
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::write(lower.join("skill.md"), skill_text("lower", "Lowercase")).unwrap();
    let both = dir.path().join("both");
    std::fs::create_dir_all(&both).unwrap();
    std::fs::write(both.join("skill.md"), skill_text("both", "lowercase one")).unwrap();
    std::fs::write(both.join("SKILL.md"), skill_text("both", "uppercase one")).unwrap();
    let result = run(&[dir.path().to_path_buf()], ConflictStrategy::Skip);
    assert_eq!(names(&result), ["agent_skills/both", "agent_skills/lower"]);
    assert_eq!(result.discovered[0].description, "uppercase one");
    assert_eq!(result.discovered[1].description, "Lowercase");
    assert_eq!(
        result.discovered[1].source_metadata["skill_md"],
        real(&lower).join("skill.md").to_str().unwrap()
    );
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    // Lint takes the folder, and the file itself.
    let report = lint(&[lower.clone(), lower.join("skill.md")]);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.folders.len(), 1, "{report}");
    assert!(
        report.warnings[0].contains("is the same folder"),
        "{report}"
    );
    assert!(agents_discovery::load_folder(&lower).is_ok());
}

#[test]
fn partial_success_keeps_the_good_folders() {
    let dir = tempfile::tempdir().unwrap();
    good_skill(dir.path(), "good-one");
    let bad = write_skill(dir.path(), "bad-one", "no front-matter\n");
    let mismatch = write_skill(dir.path(), "folder-name", skill_text("other-name", "d"));
    good_skill(dir.path(), "good-two");
    let result = run(&[dir.path().to_path_buf()], ConflictStrategy::Skip);
    assert_eq!(
        names(&result),
        ["agent_skills/good-one", "agent_skills/good-two"]
    );
    assert_eq!(result.errors.len(), 2);
    assert_eq!(result.errors[0].folder, bad);
    assert_eq!(
        result.errors[0].to_string(),
        format!(
            "{}:1: expected `---` on the first line to open the front-matter",
            bad.join("SKILL.md").display()
        )
    );
    assert_eq!(result.errors[1].folder, mismatch);
    assert_eq!(result.errors[1].problems[0].rule, Rule::NameFolder);
}

#[test]
fn missing_or_unusable_paths_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    good_skill(dir.path(), "present");
    let missing = dir.path().join("missing");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let result = run(
        &[
            missing.clone(),
            dir.path().to_path_buf(),
            file.clone(),
            dir.path().to_path_buf(),
        ],
        ConflictStrategy::Skip,
    );
    assert_eq!(names(&result), ["agent_skills/present"]);
    assert_eq!(
        result.warnings,
        [
            format!("agent skills path `{}` does not exist", missing.display()),
            format!("agent skills path `{}` is not a directory", file.display()),
            format!(
                "agent skills path `{}` is the same directory as `{}`: scanned once",
                dir.path().display(),
                dir.path().display()
            ),
        ]
    );
    assert_eq!(run(&[], ConflictStrategy::Skip), DiscoveryResult::default());
}

#[test]
fn skill_md_warnings_reach_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let folder = write_skill(
        dir.path(),
        "extra",
        front("name: extra\ndescription: d\nversion: 1\n"),
    );
    let result = run(&[dir.path().to_path_buf()], ConflictStrategy::Skip);
    assert_eq!(names(&result), ["agent_skills/extra"]);
    assert_eq!(result.warnings.len(), 1);
    assert!(
        result.warnings[0].starts_with(&format!(
            "{}:4: unknown field `version` ignored",
            folder.join("SKILL.md").display()
        )),
        "{:?}",
        result.warnings
    );
}

fn builtin_named(name: &str) -> impl Fn(&str) -> Option<ExistingTool> + '_ {
    move |asked: &str| {
        (asked == name).then(|| ExistingTool {
            name: asked.to_owned(),
            source: ToolSource::Builtin,
            origin: "builtin".to_owned(),
        })
    }
}

#[test]
fn conflict_with_an_existing_tool_under_each_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let taken = good_skill(dir.path(), "read-file");
    good_skill(dir.path(), "free");
    let paths = [dir.path().to_path_buf()];
    let existing = builtin_named("agent_skills/read-file");

    let skip = discover(&paths, &existing, ConflictStrategy::Skip, None).unwrap();
    assert_eq!(names(&skip), ["agent_skills/free"]);
    assert_eq!(skip.conflicts.len(), 1);
    let conflict = &skip.conflicts[0];
    assert_eq!(conflict.name, "agent_skills/read-file");
    assert_eq!(conflict.existing_source, ToolSource::Builtin);
    assert_eq!(conflict.existing_origin, "builtin");
    assert_eq!(conflict.new_path, real(&taken));
    assert_eq!(conflict.resolution, ConflictResolution::Skipped);
    assert_eq!(
        conflict.to_string(),
        format!(
            "agent skill `agent_skills/read-file` at `{}` conflicts with the builtin tool from `builtin`: kept the existing one",
            real(&taken).display()
        )
    );

    let replace = discover(&paths, &existing, ConflictStrategy::Replace, None).unwrap();
    assert_eq!(
        names(&replace),
        ["agent_skills/free", "agent_skills/read-file"]
    );
    assert_eq!(
        replace.conflicts[0].resolution,
        ConflictResolution::Replaced
    );
    assert!(replace.conflicts[0].to_string().ends_with(": replaced it"));

    let err = discover(&paths, &existing, ConflictStrategy::Error, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "1 agent skill name conflict(s) with conflict strategy `error`:\n  agent skill `agent_skills/read-file` at `{}` conflicts with the builtin tool from `builtin`",
            real(&taken).display()
        )
    );
    let agents_discovery::DiscoveryError::Conflicts(conflicts) = err else {
        panic!("expected conflicts, got {err}");
    };
    assert_eq!(conflicts[0].resolution, ConflictResolution::Failed);
}

#[test]
fn the_same_folder_seen_again_is_not_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let folder = good_skill(dir.path(), "again");
    let realpath = real(&folder);
    let previous = move |asked: &str| {
        Some(ExistingTool {
            name: asked.to_owned(),
            source: ToolSource::AgentSkills,
            origin: realpath.to_string_lossy().into_owned(),
        })
    };
    let result = discover(
        &[dir.path().to_path_buf()],
        &previous,
        ConflictStrategy::Error,
        None,
    )
    .unwrap();
    assert_eq!(names(&result), ["agent_skills/again"]);
    assert!(result.conflicts.is_empty());

    // An agent skill of the same name from another folder is a conflict.
    let elsewhere = |asked: &str| {
        Some(ExistingTool {
            name: asked.to_owned(),
            source: ToolSource::AgentSkills,
            origin: "/some/other/again".to_owned(),
        })
    };
    let result = discover(
        &[dir.path().to_path_buf()],
        &elsewhere,
        ConflictStrategy::Skip,
        None,
    )
    .unwrap();
    assert!(result.discovered.is_empty());
    assert_eq!(result.conflicts[0].existing_origin, "/some/other/again");
}

#[test]
fn duplicate_names_across_paths_first_wins_unless_replace() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let winner = good_skill(first.path(), "shared");
    let loser = good_skill(second.path(), "shared");
    good_skill(second.path(), "only-second");
    let paths = [first.path().to_path_buf(), second.path().to_path_buf()];

    // `skip`: the first configured path keeps the name; `replace`: the
    // later folder takes it, in the first one's place.
    for (strategy, kept, resolution) in [
        (ConflictStrategy::Skip, &winner, ConflictResolution::Skipped),
        (
            ConflictStrategy::Replace,
            &loser,
            ConflictResolution::Replaced,
        ),
    ] {
        let result = run(&paths, strategy);
        assert_eq!(
            names(&result),
            ["agent_skills/shared", "agent_skills/only-second"],
            "{strategy}"
        );
        assert_eq!(path_of(&result.discovered[0]), real(kept).to_str().unwrap());
        assert_eq!(result.conflicts.len(), 1);
        let conflict = &result.conflicts[0];
        assert_eq!(conflict.existing_source, ToolSource::AgentSkills);
        assert_eq!(conflict.existing_origin, real(&winner).to_str().unwrap());
        assert_eq!(conflict.new_path, real(&loser));
        assert_eq!(conflict.resolution, resolution);
    }

    // Reversing the paths reverses the winner.
    let reversed = run(
        &[second.path().to_path_buf(), first.path().to_path_buf()],
        ConflictStrategy::Skip,
    );
    assert_eq!(
        names(&reversed),
        ["agent_skills/only-second", "agent_skills/shared"]
    );
    assert_eq!(
        path_of(&reversed.discovered[1]),
        real(&loser).to_str().unwrap()
    );

    let err = discover(&paths, &nothing_exists, ConflictStrategy::Error, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&real(&winner).display().to_string()), "{err}");
    assert!(err.contains(&real(&loser).display().to_string()), "{err}");
}

#[test]
fn symlinked_folders_record_the_realpath_and_load_once() {
    let store = tempfile::tempdir().unwrap();
    let skills = tempfile::tempdir().unwrap();
    let target = good_skill(store.path(), "linked");
    symlink(&target, skills.path().join("linked")).unwrap();
    // A second link to the same folder, and the folder itself on another path.
    symlink(&target, skills.path().join("linked-again")).unwrap();
    let result = run(
        &[skills.path().to_path_buf(), store.path().to_path_buf()],
        ConflictStrategy::Skip,
    );
    assert_eq!(names(&result), ["agent_skills/linked"]);
    assert_eq!(
        path_of(&result.discovered[0]),
        real(&target).to_str().unwrap()
    );
    assert_eq!(
        result.discovered[0].source_metadata["skill_md"],
        json!(real(&target).join("SKILL.md"))
    );
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    assert_eq!(
        result.warnings,
        [
            format!(
                "`{}` is the same folder as `{}` (`{}`): loaded once",
                skills.path().join("linked-again").display(),
                skills.path().join("linked").display(),
                real(&target).display()
            ),
            format!(
                "`{}` is the same folder as `{}` (`{}`): loaded once",
                target.display(),
                skills.path().join("linked").display(),
                real(&target).display()
            ),
        ]
    );
}

/// Two links to one folder: the one whose name the skill's `name` equals is
/// kept, whichever sorts first (the first one alone failed the name rule,
/// and the matching one was dropped as its duplicate).
#[test]
fn of_two_links_to_one_folder_the_one_named_like_the_skill_is_kept() {
    let store = tempfile::tempdir().unwrap();
    let skills = tempfile::tempdir().unwrap();
    let target = good_skill(store.path(), "my-skill");
    symlink(&target, skills.path().join("my-skill")).unwrap();
    symlink(&target, skills.path().join("a-old-name")).unwrap();
    let result = run(&[skills.path().to_path_buf()], ConflictStrategy::Skip);
    assert_eq!(names(&result), ["agent_skills/my-skill"]);
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    assert_eq!(
        result.warnings,
        [format!(
            "`{0}/a-old-name` is the same folder as `{0}/my-skill` (`{1}`): loaded once, as `{0}/my-skill`, whose folder name matches the skill's `name`",
            skills.path().display(),
            real(&target).display()
        )]
    );
    let report = lint(&[skills.path().to_path_buf()]);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.folders.len(), 1);
    assert_eq!(report.folders[0].name.as_deref(), Some("my-skill"));
    // No link named like the skill: the first is kept, and its error shown.
    let skills = tempfile::tempdir().unwrap();
    symlink(&target, skills.path().join("b-name")).unwrap();
    symlink(&target, skills.path().join("c-name")).unwrap();
    let result = run(&[skills.path().to_path_buf()], ConflictStrategy::Skip);
    assert_eq!(result.errors.len(), 1);
    assert!(result.errors[0].folder.ends_with("b-name"));
    assert!(
        result.warnings[0].ends_with("loaded once"),
        "{:?}",
        result.warnings
    );
}

/// A folder discovery cannot look into is reported (rule `read`), as an
/// unreadable `SKILL.md` is, instead of vanishing from the catalogue; lint
/// says so rather than "no skill folders found". Root may enter any folder
/// whatever its mode, so the read error every run provokes is a path too
/// long to look into (`folder/SKILL.md` past `PATH_MAX`, the folder itself
/// not); a run as another user also checks a folder of mode 000 and one
/// without its `x` bit.
#[test]
fn a_folder_that_cannot_be_read_is_an_error_not_skipped() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let mut scanned = dir.path().to_path_buf();
    const TARGET: usize = 4088;
    while TARGET - scanned.as_os_str().len() > 201 {
        scanned.push("d".repeat(200));
    }
    let last = TARGET - scanned.as_os_str().len() - 1;
    scanned.push("e".repeat(last));
    assert_eq!(scanned.as_os_str().len(), TARGET);
    std::fs::create_dir_all(scanned.join("x")).unwrap();
    let result = run(std::slice::from_ref(&scanned), ConflictStrategy::Skip);
    assert!(result.discovered.is_empty());
    assert_eq!(result.errors.len(), 1, "{:?}", result.warnings);
    let problem = &result.errors[0].problems[0];
    assert_eq!(result.errors[0].folder, scanned.join("x"));
    assert_eq!(problem.rule, Rule::Read);
    assert!(
        problem.message.starts_with("cannot read folder: "),
        "{}",
        problem.message
    );
    let report = lint(&[scanned.join("x")]);
    let error = &report.folders[0].errors[0];
    assert_eq!(error.rule, Rule::Read);
    assert!(
        error.message.starts_with("cannot read folder: "),
        "{report}"
    );

    if std::fs::metadata(dir.path()).unwrap().uid() == 0 {
        return;
    }
    let skills = tempfile::tempdir().unwrap();
    good_skill(skills.path(), "fine");
    let closed = good_skill(skills.path(), "closed");
    let no_x = good_skill(skills.path(), "no-x");
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(&no_x, std::fs::Permissions::from_mode(0o600)).unwrap();
    let result = run(&[skills.path().to_path_buf()], ConflictStrategy::Skip);
    let report = lint(std::slice::from_ref(&closed));
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&no_x, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(names(&result), ["agent_skills/fine"]);
    let folders: Vec<&Path> = result.errors.iter().map(|e| e.folder.as_path()).collect();
    assert_eq!(folders, [closed.as_path(), no_x.as_path()]);
    assert!(
        result
            .errors
            .iter()
            .all(|e| e.problems[0].rule == Rule::Read),
        "{:?}",
        result.errors
    );
    assert_eq!(report.folders[0].errors[0].rule, Rule::Read, "{report}");
}

#[test]
fn a_link_whose_name_differs_from_the_skill_is_reported() {
    let store = tempfile::tempdir().unwrap();
    let skills = tempfile::tempdir().unwrap();
    let target = good_skill(store.path(), "real-name");
    symlink(&target, skills.path().join("alias-name")).unwrap();
    let result = run(&[skills.path().to_path_buf()], ConflictStrategy::Skip);
    assert!(result.discovered.is_empty());
    assert_eq!(
        result.errors[0].problems[0].message,
        "name `real-name` must equal its folder's name `alias-name`"
    );
}

#[test]
fn symlink_loops_and_dangling_links_never_hang() {
    let skills = tempfile::tempdir().unwrap();
    good_skill(skills.path(), "fine");
    symlink(skills.path().join("loop-b"), skills.path().join("loop-a")).unwrap();
    symlink(skills.path().join("loop-a"), skills.path().join("loop-b")).unwrap();
    symlink(skills.path(), skills.path().join("self")).unwrap();
    symlink(skills.path().join("gone"), skills.path().join("dangling")).unwrap();
    let dangling_md = skills.path().join("dangling-md");
    std::fs::create_dir_all(&dangling_md).unwrap();
    symlink(
        skills.path().join("nowhere.md"),
        dangling_md.join("SKILL.md"),
    )
    .unwrap();

    // That `run` returns at all is the point; the harness's own timeout
    // catches a hang.
    let result = run(&[skills.path().to_path_buf()], ConflictStrategy::Skip);
    assert_eq!(names(&result), ["agent_skills/fine"]);
    assert_eq!(result.errors.len(), 1);
    assert_eq!(result.errors[0].folder, dangling_md);
    assert!(
        result.errors[0].problems[0]
            .message
            .starts_with("cannot read: "),
        "{:?}",
        result.errors
    );
    let warnings = result.warnings.join("\n");
    for name in ["loop-a", "loop-b", "dangling"] {
        assert!(
            warnings.contains(&format!(
                "cannot follow symlink `{}`",
                skills.path().join(name).display()
            )),
            "{warnings}"
        );
    }
    // `self` points at the scanned directory: it has no SKILL.md of its own
    // and nothing below it is visited again.
    assert!(!warnings.contains("self"), "{warnings}");
}

#[test]
fn progress_reports_every_folder() {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..20 {
        good_skill(dir.path(), &format!("skill-{index:02}"));
    }
    let seen = Mutex::new(Vec::new());
    let progress = |done: usize, total: usize| seen.lock().unwrap().push((done, total));
    let result = discover(
        &[dir.path().to_path_buf()],
        &nothing_exists,
        ConflictStrategy::Skip,
        Some(&progress),
    )
    .unwrap();
    assert_eq!(result.discovered.len(), 20);
    let mut seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 21);
    assert!(seen.iter().all(|&(_, total)| total == 20));
    seen.sort();
    let done: Vec<usize> = seen.iter().map(|&(done, _)| done).collect();
    assert_eq!(done, (0..=20).collect::<Vec<_>>());
}

#[test]
fn discovery_results_serialize_for_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let good = good_skill(dir.path(), "json-skill");
    let bad = write_skill(dir.path(), "json-bad", "nope\n");
    good_skill(dir.path(), "read-file");
    let existing = builtin_named("agent_skills/read-file");
    let result = discover(
        &[dir.path().to_path_buf()],
        &existing,
        ConflictStrategy::Skip,
        None,
    )
    .unwrap();
    let shown = serde_json::to_value(&result).unwrap();
    assert_eq!(
        shown["discovered"],
        json!([{
            "name": "agent_skills/json-skill",
            "description": "The json-skill skill.",
            "source": "agent_skills",
            "source_metadata": {"path": real(&good), "skill_md": real(&good).join("SKILL.md")},
        }])
    );
    assert_eq!(
        shown["conflicts"],
        json!([{
            "name": "agent_skills/read-file",
            "existing_source": "builtin",
            "existing_origin": "builtin",
            "new_path": real(&dir.path().join("read-file")),
            "resolution": "skipped",
        }])
    );
    assert_eq!(
        shown["errors"],
        json!([{
            "folder": bad,
            "problems": [{
                "file": bad.join("SKILL.md"),
                "line": 1,
                "rule": "fence",
                "message": "expected `---` on the first line to open the front-matter",
            }],
        }])
    );
    assert_eq!(shown["warnings"], json!([]));
    let back: DiscoveryResult = serde_json::from_value(shown).unwrap();
    assert_eq!(back, result);
}

#[test]
fn conflict_strategies_parse_from_their_names() {
    assert_eq!(
        "skip".parse::<ConflictStrategy>().unwrap(),
        ConflictStrategy::Skip
    );
    assert_eq!(
        "error".parse::<ConflictStrategy>().unwrap(),
        ConflictStrategy::Error
    );
    assert_eq!(
        "replace".parse::<ConflictStrategy>().unwrap(),
        ConflictStrategy::Replace
    );
    assert_eq!(ConflictStrategy::default(), ConflictStrategy::Skip);
    assert_eq!(
        "merge".parse::<ConflictStrategy>().unwrap_err(),
        "unknown conflict strategy `merge`: expected `skip`, `error` or `replace`"
    );
}

// ------------------------------------------------------------------- lint

#[test]
fn lint_accepts_folders_files_and_directories_of_folders() {
    let dir = tempfile::tempdir().unwrap();
    let one = good_skill(dir.path(), "one");
    let two = good_skill(&dir.path().join("many"), "two");
    let three = write_skill(
        &dir.path().join("many"),
        "three",
        front("name: three\ndescription: d\nextra: x\n"),
    );
    let report = lint(&[one.clone(), one.join("SKILL.md"), dir.path().join("many")]);
    assert!(report.is_ok(), "{report}");
    let folders: Vec<(&Path, Option<&str>, bool)> = report
        .folders
        .iter()
        .map(|f| (f.folder.as_path(), f.name.as_deref(), f.ok))
        .collect();
    // `one` twice (as folder and as file) is linted once.
    assert_eq!(
        folders,
        [
            (one.as_path(), Some("one"), true),
            (three.as_path(), Some("three"), true),
            (two.as_path(), Some("two"), true)
        ]
    );
    assert_eq!(report.folders[1].warnings[0].rule, Rule::UnknownField);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
}

#[test]
fn lint_reports_errors_and_bad_paths() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write_skill(dir.path(), "bad", skill_text("Bad", "d"));
    let missing = dir.path().join("missing");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let readme = dir.path().join("README.md");
    std::fs::write(&readme, "x").unwrap();
    let report = lint(&[bad.clone(), missing.clone(), empty.clone(), readme.clone()]);
    assert!(!report.is_ok());
    assert_eq!(report.failed(), 4);
    let text = report.to_string();
    let skill_md = bad.join("SKILL.md");
    assert_eq!(
        text,
        format!(
            "error {}\n  error: {}:2: name `Bad` must be lowercase ASCII letters, digits and hyphens\n  error: {}:2: name `Bad` must equal its folder's name `bad`\nerror {}\n  error: {}: does not exist\nerror {}\n  error: {}: no skill folders found: expected subfolders holding a `SKILL.md`\nerror {}\n  error: {}: expected a skill folder, a `SKILL.md` file or a folder of skill folders\n4 skill folder(s) checked, 4 with errors",
            bad.display(),
            skill_md.display(),
            skill_md.display(),
            missing.display(),
            missing.display(),
            empty.display(),
            empty.display(),
            readme.display(),
            readme.display(),
        )
    );
    let shown = serde_json::to_value(&report).unwrap();
    assert_eq!(shown["folders"][0]["ok"], json!(false));
    assert_eq!(
        shown["folders"][0]["errors"][0]["rule"],
        json!("name_format")
    );
    assert_eq!(shown["folders"][0]["errors"][0]["line"], json!(2));
    assert_eq!(shown["folders"][1]["errors"][0]["rule"], json!("path"));
    // A link loop exists but cannot be read: it says so, not "does not exist".
    let looped = dir.path().join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let text = lint(std::slice::from_ref(&looped)).to_string();
    assert!(text.contains(": cannot be read: "), "{text}");
    assert!(!text.contains("does not exist"), "{text}");
}

#[test]
fn lint_of_a_good_folder_prints_ok() {
    let dir = tempfile::tempdir().unwrap();
    let folder = good_skill(dir.path(), "fine");
    let report = lint(std::slice::from_ref(&folder));
    assert_eq!(
        report.to_string(),
        format!(
            "ok    {} (fine)\n1 skill folder(s) checked, 0 with errors",
            folder.display()
        )
    );
}

#[test]
fn lint_errors_compare_equal_to_discovery_errors() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(dir.path(), "same", front("name: same\ndescription: \"\"\n"));
    let from_lint: Vec<SkillMdError> = lint(&[dir.path().to_path_buf()]).folders[0].errors.clone();
    let from_discovery = run(&[dir.path().to_path_buf()], ConflictStrategy::Skip).errors[0]
        .problems
        .clone();
    assert_eq!(from_lint, from_discovery);
}

/// Found by the `skill_md` fuzz target: libyaml also ends a line at a lone
/// CR, and its line number was used as the file's, so an error could point
/// past the last line of the file.
#[test]
fn yaml_error_positions_count_line_feeds_only() {
    let text = "---\nname: a\rb: 1\rc: 2\rd: [\"x\n---\nbody\n";
    let problems = parse_skill_md(Path::new("SKILL.md"), text.as_bytes()).unwrap_err();
    let yaml = problems
        .iter()
        .find(|p| p.rule == Rule::Yaml)
        .unwrap_or_else(|| panic!("no YAML error: {problems:?}"));
    let lines = text.matches('\n').count() + 1;
    assert!(
        yaml.line.is_some_and(|line| line <= lines),
        "line {:?} of a {lines}-line file: {yaml}",
        yaml.line
    );
    // An error on the second line of the front-matter after a lone CR:
    // still file line 2, at the column where the bad value starts.
    let text = "---\nname: a\rx: [1, 2\n---\n";
    let problems = parse_skill_md(Path::new("SKILL.md"), text.as_bytes()).unwrap_err();
    assert!(
        problems
            .iter()
            .all(|p| p.line.is_some_and(|line| line <= 3)),
        "{problems:?}"
    );
}

/// Found by the `skill_md` fuzz target: a name with tabs was quoted raw in
/// the error message.
#[test]
fn quoted_values_in_problems_escape_control_characters() {
    let text = "---\nname: a\tb\u{1b}[2J\ndescription: d\n---\n";
    let problems = parse_skill_md(Path::new("SKILL.md"), text.as_bytes()).unwrap_err();
    for problem in &problems {
        assert!(
            !problem.to_string().chars().any(char::is_control),
            "{problem:?}"
        );
    }
}

/// Inputs the `skill_md` fuzz target found (`tests/fuzz-crashes/`): every
/// problem's text, message and file alike, is free of raw control characters
/// and a few KiB at most.
#[test]
fn fuzz_found_inputs_give_clean_bounded_problems() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-crashes");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        seen += 1;
        let Err(problems) = parse_skill_md(Path::new("SKILL.md"), &bytes) else {
            continue;
        };
        for problem in &problems {
            let text = problem.to_string();
            assert!(!text.chars().any(char::is_control), "{problem:?}");
            assert!(text.len() < 4096, "{} bytes", text.len());
        }
    }
    assert!(seen >= 3);
}
