//! `agents schema`: the checked-in JSON Schemas are what the types generate,
//! and the shipped examples satisfy them.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::{Sandbox, examples};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema(kind: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(format!("schemas/{kind}.schema.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn checked_in_schemas_are_what_the_types_generate() {
    let sb = Sandbox::new();
    for kind in ["skill", "tool", "config"] {
        let run = sb.run(&["schema", kind]).ok();
        let checked_in =
            std::fs::read_to_string(repo().join(format!("schemas/{kind}.schema.json"))).unwrap();
        assert!(
            run.stdout == checked_in,
            "schemas/{kind}.schema.json is stale: run `agents schema {kind} > schemas/{kind}.schema.json`"
        );
    }
}

/// Every document of a YAML file as JSON values.
fn yaml_documents(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split("\n---\n")
        .filter(|doc| !doc.trim().is_empty())
        .map(|doc| yaml_serde::from_str::<Value>(doc).unwrap())
        .collect()
}

#[test]
fn shipped_examples_validate_against_the_schemas() {
    let skill = jsonschema::validator_for(&schema("skill")).unwrap();
    let tool = jsonschema::validator_for(&schema("tool")).unwrap();
    let mut checked = 0;
    for (dir, validator) in [("skills", &skill), ("tools", &tool)] {
        for entry in std::fs::read_dir(examples().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            for doc in yaml_documents(&path) {
                let errors: Vec<String> =
                    validator.iter_errors(&doc).map(|e| e.to_string()).collect();
                assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 4, "only {checked} example documents");
    // A mistake an editor should flag: a typo'd key and a bad name.
    let bad = serde_json::json!({"name": "no-namespace", "tool": ["builtin/grep"]});
    assert!(!skill.is_valid(&bad));
    // A config with every table validates; an unknown key does not.
    let config = jsonschema::validator_for(&schema("config")).unwrap();
    let good: Value = toml::from_str::<toml::Value>(
        "[database]\nurl = \"sqlite:///tmp/x.db\"\n[skills]\nagent_skills_paths = [\"~/skills\"]\n\
         [mcp]\ntimeout_s = 20\n[mcp.servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\n\
         env = { A = \"${B}\" }\n[mcp.servers.web]\nurl = \"https://x/mcp\"\n",
    )
    .map(|v| serde_json::to_value(v).unwrap())
    .unwrap();
    let errors: Vec<String> = config.iter_errors(&good).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(!config.is_valid(&serde_json::json!({"databse": {}})));
}
