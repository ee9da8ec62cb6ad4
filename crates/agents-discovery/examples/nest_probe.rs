#![allow(clippy::print_stdout)]
use std::time::Instant;
fn main() {
    for n in [1_000usize, 5_000, 10_000, 20_000, 50_000] {
        let text = format!("---\nname: a\ndescription: d\nx: {}{}\n---\n", "[".repeat(n), "]".repeat(n));
        let t = Instant::now();
        let r = agents_discovery::parse_skill_md(std::path::Path::new("SKILL.md"), text.as_bytes());
        println!("flow [ {n}: {:?} {:?}", t.elapsed(), r.err().map(|e| e[0].to_string()));
        let mut block = String::from("---\nname: a\ndescription: d\n");
        for i in 0..n.min(20000) { block.push_str(&" ".repeat(i)); block.push_str("k:\n"); }
        block.push_str("---\n");
        let t = Instant::now();
        let r = agents_discovery::parse_skill_md(std::path::Path::new("SKILL.md"), block.as_bytes());
        println!("block {n}: {} bytes {:?} {:?}", block.len(), t.elapsed(), r.err().map(|e| e[0].to_string()));
    }
}
