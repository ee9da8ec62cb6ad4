#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The builtin tools on real files, processes and repositories.

mod files;
mod git;
mod http;
mod policy;
mod roots;
mod run;
mod sandbox;
mod search;
mod shell;

use std::path::{Path, PathBuf};

use agents_tools::{CancellationToken, Executor, Limits, Roots, Rule, ToolError, ToolOutput};
use serde_json::Value;

/// A temporary directory holding `root` (the workspace root) and `outside`
/// (beside it, with a file `secret`).
#[derive(Debug)]
pub struct Tree {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
}

impl Default for Tree {
    fn default() -> Self {
        Self::new()
    }
}

impl Tree {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret"), "outside secret\n").unwrap();
        Self { dir, root, outside }
    }

    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn executor(&self) -> Executor {
        self.with_limits(Limits::default())
    }

    pub fn with_limits(&self, limits: Limits) -> Executor {
        Executor::new(Roots::new([&self.root]).unwrap(), limits)
    }

    /// One executor a resolver: `openat2` (where the kernel has it) and the
    /// component walk.
    pub fn both(&self) -> [Executor; 2] {
        let roots = Roots::new([&self.root]).unwrap();
        [
            Executor::new(roots.clone(), Limits::default()),
            Executor::new(roots.walking(), Limits::default()),
        ]
    }

    /// The outside tree's files and their contents: unchanged by a refusal.
    pub fn outside_snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files: Vec<_> = walk(&self.outside)
            .into_iter()
            .map(|path| {
                let content = std::fs::read(&path).unwrap_or_default();
                (path, content)
            })
            .collect();
        files.sort();
        files
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.is_symlink() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

pub async fn call(executor: &Executor, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
    executor.call(tool, args, CancellationToken::new()).await
}

pub async fn ok(executor: &Executor, tool: &str, args: Value) -> ToolOutput {
    match call(executor, tool, args.clone()).await {
        Ok(output) => output,
        Err(err) => panic!("{tool} {args}: {err}"),
    }
}

/// The call is refused by `rule`, and the message names it.
pub async fn refused(executor: &Executor, tool: &str, args: Value, rule: Rule) -> String {
    match call(executor, tool, args.clone()).await {
        Err(err) => {
            assert_eq!(err.rule(), Some(rule), "{tool} {args}: {err}");
            let message = err.to_string();
            assert!(message.contains(&format!("`{}`", rule.name())), "{message}");
            assert!(!err.is_protocol());
            message
        }
        Ok(output) => panic!("{tool} {args} was not refused: {}", output.text),
    }
}
