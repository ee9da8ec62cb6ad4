//! Every way out of a root is refused, by both resolvers, naming its rule;
//! nothing outside is read or written.

use std::os::unix::fs::symlink;

use agents_tools::{Executor, Limits, Roots, Rule, ToolError};
use serde_json::json;

use crate::{Tree, call, ok, refused};

#[tokio::test]
async fn parent_dir_above_the_root_is_refused() {
    let tree = Tree::new();
    tree.write("sub/file", "inside\n");
    for executor in tree.both() {
        for path in ["../outside/secret", "sub/../../outside/secret", "sub/../.."] {
            refused(
                &executor,
                "read_file",
                json!({"path": path}),
                Rule::ParentDir,
            )
            .await;
        }
        refused(
            &executor,
            "write_file",
            json!({"path": "../outside/new", "content": "x"}),
            Rule::ParentDir,
        )
        .await;
        refused(
            &executor,
            "list_dir",
            json!({"path": ".."}),
            Rule::ParentDir,
        )
        .await;
        refused(
            &executor,
            "shell",
            json!({"command": "true", "cwd": ".."}),
            Rule::ParentDir,
        )
        .await;
        refused(
            &executor,
            "git_status",
            json!({"repo": ".."}),
            Rule::ParentDir,
        )
        .await;
        // `..` that stays beneath the root is a path like any other.
        let output = ok(&executor, "read_file", json!({"path": "sub/../sub/file"})).await;
        assert_eq!(output.text, "inside\n");
    }
    assert!(!tree.outside.join("new").exists());
}

#[tokio::test]
async fn absolute_paths_outside_the_roots_are_refused() {
    let tree = Tree::new();
    tree.write("file", "inside\n");
    for executor in tree.both() {
        let secret = tree.outside.join("secret");
        let message = refused(
            &executor,
            "read_file",
            json!({"path": secret}),
            Rule::OutsideRoots,
        )
        .await;
        assert!(
            message.contains(&tree.root.display().to_string()),
            "{message}"
        );
        refused(
            &executor,
            "read_file",
            json!({"path": "/etc/passwd"}),
            Rule::OutsideRoots,
        )
        .await;
        refused(
            &executor,
            "list_dir",
            json!({"path": "/"}),
            Rule::OutsideRoots,
        )
        .await;
        refused(
            &executor,
            "glob",
            json!({"pattern": "**", "root": "/"}),
            Rule::OutsideRoots,
        )
        .await;
        refused(
            &executor,
            "grep",
            json!({"pattern": "secret", "path": tree.outside}),
            Rule::OutsideRoots,
        )
        .await;
        // The same file by its absolute path inside the root is fine.
        let output = ok(
            &executor,
            "read_file",
            json!({"path": tree.root.join("file")}),
        )
        .await;
        assert_eq!(output.text, "inside\n");
    }
}

#[tokio::test]
async fn symbolic_links_out_of_the_root_are_refused() {
    let tree = Tree::new();
    let before = tree.outside_snapshot();
    symlink(&tree.outside, tree.root.join("out")).unwrap();
    symlink("../outside/secret", tree.root.join("relative")).unwrap();
    symlink(tree.outside.join("secret"), tree.root.join("absolute")).unwrap();
    std::fs::create_dir(tree.root.join("deep")).unwrap();
    symlink("../../outside", tree.root.join("deep/up")).unwrap();
    for executor in tree.both() {
        for path in [
            "out/secret",
            "relative",
            "absolute",
            "deep/up/secret",
            "out",
        ] {
            let message = refused(
                &executor,
                "read_file",
                json!({"path": path}),
                Rule::SymlinkEscape,
            )
            .await;
            assert!(message.contains("symbolic link"), "{message}");
        }
        refused(
            &executor,
            "write_file",
            json!({"path": "out/new", "content": "x"}),
            Rule::SymlinkEscape,
        )
        .await;
        refused(
            &executor,
            "write_file",
            json!({"path": "out/a/b/new", "content": "x"}),
            Rule::SymlinkEscape,
        )
        .await;
        refused(
            &executor,
            "edit_file",
            json!({"path": "out/secret", "old": "outside", "new": "x"}),
            Rule::SymlinkEscape,
        )
        .await;
        refused(
            &executor,
            "list_dir",
            json!({"path": "out"}),
            Rule::SymlinkEscape,
        )
        .await;
        refused(
            &executor,
            "glob",
            json!({"pattern": "*", "root": "out"}),
            Rule::SymlinkEscape,
        )
        .await;
        refused(
            &executor,
            "grep",
            json!({"pattern": "secret", "path": "out"}),
            Rule::SymlinkEscape,
        )
        .await;
        refused(
            &executor,
            "grep",
            json!({"pattern": "secret", "path": "relative"}),
            Rule::SymlinkEscape,
        )
        .await;
        refused(
            &executor,
            "shell",
            json!({"command": "cat secret", "cwd": "out"}),
            Rule::SymlinkEscape,
        )
        .await;
        refused(
            &executor,
            "git_status",
            json!({"repo": "out"}),
            Rule::SymlinkEscape,
        )
        .await;
    }
    assert_eq!(tree.outside_snapshot(), before);
}

#[tokio::test]
async fn links_that_stay_inside_are_followed() {
    let tree = Tree::new();
    tree.write("real/file", "inside\n");
    symlink("real", tree.root.join("alias")).unwrap();
    std::fs::create_dir(tree.root.join("deep")).unwrap();
    symlink("../real/file", tree.root.join("deep/link")).unwrap();
    symlink("../real", tree.root.join("deep/dir")).unwrap();
    for executor in tree.both() {
        assert_eq!(
            ok(&executor, "read_file", json!({"path": "alias/file"}))
                .await
                .text,
            "inside\n"
        );
        assert_eq!(
            ok(&executor, "read_file", json!({"path": "deep/link"}))
                .await
                .text,
            "inside\n"
        );
        // `..` after a link goes up from where the link led.
        let output = ok(
            &executor,
            "read_file",
            json!({"path": "deep/dir/../real/file"}),
        )
        .await;
        assert_eq!(output.text, "inside\n");
        assert_eq!(
            ok(&executor, "list_dir", json!({"path": "deep/dir"}))
                .await
                .text,
            "file (7 bytes)\n"
        );
    }
}

#[tokio::test]
async fn a_link_loop_is_an_error_not_a_hang() {
    let tree = Tree::new();
    symlink("b", tree.root.join("a")).unwrap();
    symlink("a", tree.root.join("b")).unwrap();
    for executor in tree.both() {
        let err = call(&executor, "read_file", json!({"path": "a"}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Io { .. }), "{err}");
    }
}

#[tokio::test]
async fn writing_through_a_hard_link_is_refused() {
    let tree = Tree::new();
    std::fs::hard_link(tree.outside.join("secret"), tree.root.join("linked")).unwrap();
    let before = tree.outside_snapshot();
    for executor in tree.both() {
        let message = refused(
            &executor,
            "write_file",
            json!({"path": "linked", "content": "x"}),
            Rule::HardLink,
        )
        .await;
        assert!(message.contains("2 hard links"), "{message}");
        refused(
            &executor,
            "edit_file",
            json!({"path": "linked", "old": "outside", "new": "x"}),
            Rule::HardLink,
        )
        .await;
    }
    assert_eq!(tree.outside_snapshot(), before);
    assert_eq!(
        std::fs::read_to_string(tree.root.join("linked")).unwrap(),
        "outside secret\n"
    );
}

#[tokio::test]
async fn writing_to_a_link_is_refused_even_inside() {
    let tree = Tree::new();
    tree.write("real", "inside\n");
    symlink("real", tree.root.join("alias")).unwrap();
    let executor = tree.executor();
    refused(
        &executor,
        "write_file",
        json!({"path": "alias", "content": "x"}),
        Rule::SymlinkWrite,
    )
    .await;
    refused(
        &executor,
        "edit_file",
        json!({"path": "alias", "old": "inside", "new": "x"}),
        Rule::SymlinkWrite,
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(tree.root.join("real")).unwrap(),
        "inside\n"
    );
    assert!(tree.root.join("alias").is_symlink());
}

/// A directory on the path swapped for a link to the outside while calls
/// run: each call resolved its parent once, to a descriptor, so no write
/// lands outside, however the swaps fall.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_swapped_for_a_link_mid_call_never_leads_out() {
    let tree = Tree::new();
    let dir = tree.root.join("d");
    let link = tree.root.join("d.link");
    std::fs::create_dir(&dir).unwrap();
    symlink(&tree.outside, &link).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swaps = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // `d` a directory, then a link out, then a directory: each
                // swap one atomic exchange, so `d` always exists.
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &dir,
                    rustix::fs::CWD,
                    &link,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // Room between swaps for resolutions to pass (gVisor fails
                // every `RESOLVE_BENEATH` resolution that overlaps a rename).
                std::thread::sleep(std::time::Duration::from_micros(100));
            }
        })
    };
    for executor in tree.both() {
        // Until 50 writes have gone through (a bounded number of tries):
        // each of them raced the swaps.
        let mut written = 0;
        for i in 0..20_000 {
            let path = format!("d/f{i}");
            match call(
                &executor,
                "write_file",
                json!({"path": path, "content": "x"}),
            )
            .await
            {
                Ok(_) => written += 1,
                Err(err) => assert!(
                    matches!(err.rule(), Some(Rule::SymlinkEscape))
                        || matches!(err, ToolError::Io { .. }),
                    "{err}"
                ),
            }
            if written == 50 {
                break;
            }
        }
        assert_eq!(written, 50);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(swaps.load(std::sync::atomic::Ordering::Relaxed) > 0);
    let leaked: Vec<_> = std::fs::read_dir(&tree.outside)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .filter(|name| name != "secret")
        .collect();
    assert!(leaked.is_empty(), "written outside: {leaked:?}");
}

#[tokio::test]
async fn nul_bytes_and_huge_paths_get_bounded_errors() {
    let tree = Tree::new();
    for executor in tree.both() {
        refused(
            &executor,
            "read_file",
            json!({"path": "a\u{0}b"}),
            Rule::NulByte,
        )
        .await;
        refused(
            &executor,
            "write_file",
            json!({"path": "a\u{0}b", "content": ""}),
            Rule::NulByte,
        )
        .await;
        let huge = "x/".repeat(500_000);
        let err = call(&executor, "read_file", json!({"path": huge}))
            .await
            .unwrap_err();
        assert!(err.to_string().len() < 2048, "{}", err.to_string().len());
        let err = call(
            &executor,
            "write_file",
            json!({"path": huge, "content": "x"}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().len() < 2048);
        let long_name = "y".repeat(100_000);
        let err = call(
            &executor,
            "write_file",
            json!({"path": long_name, "content": "x"}),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().len() < 2048);
    }
    assert_eq!(std::fs::read_dir(&tree.root).unwrap().count(), 0);
}

#[tokio::test]
async fn a_path_with_a_newline_is_a_path() {
    let tree = Tree::new();
    let executor = tree.executor();
    ok(
        &executor,
        "write_file",
        json!({"path": "two\nlines", "content": "x"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(tree.root.join("two\nlines")).unwrap(),
        "x"
    );
    let listing = ok(&executor, "list_dir", json!({"path": "."})).await;
    assert_eq!(listing.text, "two\\nlines (1 bytes)\n");
}

#[tokio::test]
async fn without_roots_every_file_tool_is_refused() {
    let executor = Executor::new(Roots::none(), Limits::default());
    refused(&executor, "read_file", json!({"path": "x"}), Rule::NoRoots).await;
    refused(
        &executor,
        "shell",
        json!({"command": "true"}),
        Rule::NoRoots,
    )
    .await;
    refused(&executor, "git_status", json!({}), Rule::NoRoots).await;
    refused(&executor, "grep", json!({"pattern": "x"}), Rule::NoRoots).await;
}

#[tokio::test]
async fn relative_paths_resolve_in_the_first_root_and_absolute_ones_in_theirs() {
    let first = Tree::new();
    let second = Tree::new();
    first.write("a", "first\n");
    second.write("a", "second\n");
    let roots = Roots::new([&first.root, &second.root]).unwrap();
    let executor = Executor::new(roots, Limits::default());
    assert_eq!(
        ok(&executor, "read_file", json!({"path": "a"})).await.text,
        "first\n"
    );
    let path = second.root.join("a");
    assert_eq!(
        ok(&executor, "read_file", json!({"path": path})).await.text,
        "second\n"
    );
    refused(
        &executor,
        "read_file",
        json!({"path": second.outside.join("secret")}),
        Rule::OutsideRoots,
    )
    .await;
}

#[tokio::test]
async fn protocol_errors_are_told_apart() {
    let tree = Tree::new();
    let executor = tree.executor();
    let err = call(&executor, "rm_rf", json!({})).await.unwrap_err();
    assert!(err.is_protocol(), "{err}");
    assert_eq!(err.to_string(), "unknown tool `rm_rf`");
    let err = call(&executor, "read_file", json!({"offset": 1}))
        .await
        .unwrap_err();
    assert!(err.is_protocol());
    assert_eq!(
        err.to_string(),
        "invalid arguments for `read_file`: missing field `path`"
    );
    let err = call(&executor, "read_file", json!({"path": "x", "offset": -1}))
        .await
        .unwrap_err();
    assert!(err.is_protocol(), "{err}");
    let err = call(&executor, "read_file", json!({"path": "missing"}))
        .await
        .unwrap_err();
    assert!(!err.is_protocol());
    assert!(
        err.to_string().starts_with("cannot open `missing`: "),
        "{err}"
    );
    // Both names of a builtin are taken.
    ok(&executor, "builtin/list_dir", json!({"path": "."})).await;
}
