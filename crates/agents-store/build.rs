//! Embeds `migrations/<backend>/NNNN_name.sql` in the build, sorted by
//! version, so adding a migration is adding a file.

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=migrations");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut out = String::new();
    for backend in ["sqlite", "postgres"] {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(root.join(backend))? {
            let path = entry?.path();
            let Some(file) = path.file_name().and_then(|name| name.to_str()) else {
                continue;
            };
            let Some(stem) = file.strip_suffix(".sql") else {
                continue;
            };
            let (number, label) = stem
                .split_once('_')
                .ok_or_else(|| format!("migration `{backend}/{file}`: expected `NNNN_name.sql`"))?;
            let version: i64 = number.parse().map_err(|_| {
                format!("migration `{backend}/{file}`: `{number}` is not a version number")
            })?;
            found.push((version, label.replace('_', " "), path.clone()));
        }
        found.sort_by_key(|(version, _, _)| *version);
        writeln!(
            out,
            "pub(crate) const {}: &[Migration] = &[",
            backend.to_uppercase()
        )?;
        for (version, label, path) in &found {
            writeln!(
                out,
                "    Migration {{ version: {version}, description: {label:?}, sql: include_str!({:?}) }},",
                path.display().to_string()
            )?;
        }
        writeln!(out, "];")?;
    }
    let target = Path::new(&std::env::var("OUT_DIR")?).join("migrations.rs");
    std::fs::write(target, out)?;
    Ok(())
}
