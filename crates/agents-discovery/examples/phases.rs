#![allow(clippy::print_stdout, clippy::unwrap_used)]
use std::time::Instant;
fn main() {
    let with = "---\nname: skill-1\ndescription: Generated skill number 1.\nlicense: MIT\nmetadata:\n  author: bench\ninput_schema:\n  type: object\n  properties:\n    query:\n      type: string\n---\n\n# body\n";
    let without = "---\nname: skill-1\ndescription: Generated skill number 1.\nlicense: MIT\nmetadata:\n  author: bench\n---\n\n# body\n";
    for (label, text) in [("with schema", with), ("without schema", without)] {
        let t = Instant::now();
        for _ in 0..100_000 { agents_discovery::parse_skill_md(std::path::Path::new("SKILL.md"), text.as_bytes()).unwrap(); }
        println!("{label}: {:?}", t.elapsed());
    }
    let yaml = "\nname: skill-1\ndescription: Generated skill number 1.\nlicense: MIT\nmetadata:\n  author: bench\ninput_schema:\n  type: object\n  properties:\n    query:\n      type: string\n";
    let t = Instant::now();
    for _ in 0..10_000 { let _: serde_json::Value = yaml_serde::from_str(yaml).unwrap(); }
    println!("yaml_serde to serde_json::Value: {:?}", t.elapsed());
    let schema = serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}});
    let t = Instant::now();
    for i in 0..10_000 { let mut s = schema.clone(); s["x"] = serde_json::json!(i); agents_core::check_schema(&s).unwrap(); }
    println!("check_schema (distinct values): {:?}", t.elapsed());
}
