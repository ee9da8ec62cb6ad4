//! Workspace hygiene: every dependency a crate declares is used by it.
//! (What `cargo machete` checks, without installing it: a declared crate
//! name must appear as a path, `use`, or macro in the crate's Rust files.)

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_declared_dependency_is_used() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut unused = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let dir = entry.path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let manifest: toml::Table = toml::from_str(&manifest).unwrap();
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        let text: String = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(deps) = manifest.get(section).and_then(|d| d.as_table()) else {
                continue;
            };
            for (name, spec) in deps {
                let ident = spec
                    .get("package")
                    .and_then(|p| p.as_str())
                    .map_or(name.as_str(), |_| name.as_str())
                    .replace('-', "_");
                checked += 1;
                let used = [
                    format!("{ident}::"),
                    format!("use {ident}"),
                    format!("{ident}!"),
                    format!("extern crate {ident}"),
                ]
                .iter()
                .any(|needle| text.contains(needle.as_str()));
                if !used {
                    unused.push(format!(
                        "{}: {section}: {name}",
                        dir.file_name().unwrap_or_default().to_string_lossy()
                    ));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} dependencies found");
    // And every workspace-level declaration is inherited by some crate.
    let root: toml::Table =
        toml::from_str(&std::fs::read_to_string(crates.join("../Cargo.toml")).unwrap()).unwrap();
    let manifests: String = std::fs::read_dir(&crates)
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("Cargo.toml")).ok())
        .collect();
    if let Some(declared) = root
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
    {
        for name in declared.keys() {
            if !manifests.contains(&format!("\n{name}.workspace = true"))
                && !manifests.contains(&format!("\n{name} = {{ workspace = true"))
            {
                unused.push(format!("workspace: {name}"));
            }
        }
    }
    assert!(unused.is_empty(), "declared but unused: {unused:#?}");
}
