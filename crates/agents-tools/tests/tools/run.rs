//! `run` tools: an argv template filled from the arguments, no shell.

use agents_core::{RunSpec, ToolSource, ToolSpec};
use agents_tools::{
    CallContext, CallPolicy, Callable, CancellationToken, Rule, RunTool, ToolError,
};
use serde_json::{Value, json};

use crate::Tree;

/// A custom tool `custom/t` with this `run` (and definition fields).
fn tool(run: Value, fields: Value) -> RunTool {
    let mut spec = ToolSpec::new("custom/t", "t", ToolSource::Custom);
    spec.set_meta(agents_core::Meta::Run, run);
    if let Some(schema) = fields.get("input_schema") {
        spec.input_schema = Some(schema.clone());
    }
    if let Some(schema) = fields.get("output_schema") {
        spec.output_schema = Some(schema.clone());
    }
    spec.writes = fields.get("writes").and_then(Value::as_bool);
    spec.validate().unwrap();
    RunTool::from_spec(&spec).unwrap().unwrap()
}

/// `tool` callable: its `run` trusted in a store of this test's own.
fn trusted(tool: &RunTool) -> Callable {
    let store = agents_trust::TrustStore::in_memory();
    store
        .trust_runs([(tool.name.as_str(), &tool.spec)], "test")
        .unwrap();
    let consent = agents_trust::TrustedRun::consented(&store, &tool.spec).unwrap();
    Callable::from(agents_tools::TrustedRunTool::new(tool.clone(), &consent).unwrap())
}

#[test]
fn a_run_is_callable_only_with_consent_to_that_very_run() {
    let store = agents_trust::TrustStore::in_memory();
    let t = tool(json!({"command": "true"}), json!({}));
    assert!(agents_trust::TrustedRun::consented(&store, &t.spec).is_none());
    store
        .trust_runs([(t.name.as_str(), &t.spec)], "test")
        .unwrap();
    let consent = agents_trust::TrustedRun::consented(&store, &t.spec).unwrap();
    // Consent to one `run` does not make another callable.
    let other = tool(json!({"command": "false"}), json!({}));
    assert!(agents_tools::TrustedRunTool::new(other, &consent).is_none());
    assert!(agents_tools::TrustedRunTool::new(t, &consent).is_some());
}

async fn call(
    tree: &Tree,
    tool: &RunTool,
    args: Value,
) -> Result<agents_tools::ToolOutput, ToolError> {
    tree.executor()
        .call_tool(&trusted(tool), args, CancellationToken::new())
        .await
}

#[tokio::test]
async fn placeholders_fill_one_word_each_and_spread_only_where_asked() {
    let tree = Tree::new();
    let t = tool(
        json!({"command": "printf", "args": ["%s\\n", "--name={name}", "{files...}", "{{literal}}", "{absent}", "-n={count}"]}),
        json!({}),
    );
    let out = call(
        &tree,
        &t,
        json!({"name": "a b; touch pwned", "files": ["x y", "z"], "count": 3}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.text,
        "--name=a b; touch pwned\nx y\nz\n{literal}\n-n=3\n"
    );
    assert!(!tree.root.join("pwned").exists());
    // An array where one word is expected is refused, not joined.
    let err = call(&tree, &t, json!({"name": ["a", "b"]}))
        .await
        .unwrap_err();
    assert!(err.is_protocol(), "{err}");
    assert!(err.to_string().contains("{name...}"), "{err}");
}

#[test]
fn bad_templates_are_refused_where_the_tool_is_defined() {
    for (args, expected) in [
        (json!(["{a b}"]), "not a placeholder"),
        (json!(["{open"]), "without its"),
        (json!(["close}"]), "lone `}`"),
    ] {
        let spec: RunSpec = serde_json::from_value(json!({"command": "x", "args": args})).unwrap();
        let err = spec.check().unwrap_err();
        assert!(err.contains(expected), "{err}");
    }
    let spec: RunSpec = serde_json::from_value(json!({"command": "x", "timeout_s": 0})).unwrap();
    assert!(spec.check().is_err());
}

#[tokio::test]
async fn a_non_zero_exit_is_a_tool_error_with_code_and_stderr() {
    let tree = Tree::new();
    let t = tool(
        json!({"command": "/bin/sh", "args": ["-c", "echo out; echo oops >&2; exit 4"]}),
        json!({}),
    );
    let out = call(&tree, &t, json!({})).await.unwrap();
    assert!(out.is_error);
    assert_eq!(out.exit_code, Some(4));
    assert_eq!(out.text, "[exit code 4]\n[stderr]\noops\n");
}

#[tokio::test]
async fn json_stdout_is_structured_when_the_output_schema_accepts_it() {
    let tree = Tree::new();
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let t = tool(
        json!({"command": "printf", "args": ["{{\"n\": %s}}", "{n}"]}),
        json!({"output_schema": schema, "input_schema": {"type": "object", "properties": {"n": {}}}}),
    );
    let out = call(&tree, &t, json!({"n": 3})).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.structured, Some(json!({"n": 3})));
    let out = call(&tree, &t, json!({"n": "\"x\""})).await.unwrap();
    assert!(out.is_error && out.structured.is_none());
    assert!(
        out.text.contains("does not match `output_schema`"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn arguments_are_checked_against_the_input_schema() {
    let tree = Tree::new();
    let t = tool(
        json!({"command": "true"}),
        json!({"input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}}),
    );
    let err = call(&tree, &t, json!({"n": "x"})).await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
    let err = call(&tree, &t, json!({"m": 1})).await.unwrap_err();
    assert!(err.is_protocol(), "{err}");
    assert!(!call(&tree, &t, json!({"n": 1})).await.unwrap().is_error);
}

#[tokio::test]
async fn stdin_env_and_cwd_are_filled() {
    let tree = Tree::new();
    tree.write("sub/.keep", "");
    let t = tool(
        json!({"command": "/bin/sh", "args": ["-c", "cat; echo \" $GREETING\"; pwd"], "stdin": "hello {who}", "env": {"GREETING": "hi {who}"}, "cwd": "sub"}),
        json!({}),
    );
    let out = call(&tree, &t, json!({"who": "you"})).await.unwrap();
    assert_eq!(
        out.text,
        format!("hello you hi you\n{}\n", tree.root.join("sub").display())
    );
}

/// An argv word or `env` entry over Linux's `MAX_ARG_STRLEN` (128 KiB) is
/// refused before anything starts, naming the template it was filled
/// from; one byte under it runs, and so does a megabyte on stdin.
#[tokio::test]
async fn a_word_too_long_for_execve_is_refused_before_it_starts() {
    let tree = Tree::new();
    let script = "touch started; printf %s \"$1$BIG\" | wc -c";
    let t = tool(
        json!({"command": "/bin/sh", "args": ["-c", script, "sh", "x{text}"], "env": {"BIG": "{big}"}, "stdin": "{big}"}),
        json!({}),
    );
    let limit = 128 * 1024;
    for (args, field) in [
        (
            json!({"text": "a".repeat(limit)}),
            "`run.args[3]` (`x{text}`)",
        ),
        (
            json!({"text": "", "big": "b".repeat(limit)}),
            "`run.env.BIG`",
        ),
    ] {
        let err = call(&tree, &t, args).await.unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
        let message = err.to_string();
        assert!(
            message.contains(field) && message.contains("MAX_ARG_STRLEN"),
            "{message}"
        );
        assert!(message.len() < 1024, "{}", message.len());
        assert!(!tree.root.join("started").exists());
    }
    // "x" and 131,070 bytes: the longest word execve takes.
    let longest = json!({"text": "a".repeat(limit - 2)});
    assert_eq!(
        call(&tree, &t, longest).await.unwrap().text.trim(),
        "131071"
    );
    let on_stdin = tool(
        json!({"command": "wc", "args": ["-c"], "stdin": "{big}"}),
        json!({}),
    );
    let big = json!({"big": "c".repeat(1 << 20)});
    assert_eq!(
        call(&tree, &on_stdin, big).await.unwrap().text.trim(),
        "1048576"
    );
}

#[tokio::test]
async fn policy_narrows_run_tools_read_only_timeout_and_sandbox() {
    let tree = Tree::new();
    let policy = |overrides: Value| {
        let Value::Object(map) = overrides else {
            unreachable!()
        };
        CallPolicy::from_overrides(&map)
    };
    let run = |t: RunTool, p: CallPolicy| {
        let executor = tree.executor();
        async move {
            agents_tools::call(
                &executor,
                trusted(&t),
                json!({}),
                &p,
                &CallContext::default(),
                None,
                CancellationToken::new(),
            )
            .await
        }
    };
    let writer = tool(
        json!({"command": "touch", "args": ["made"]}),
        json!({"writes": true}),
    );
    let err = run(writer.clone(), policy(json!({"read_only": true})))
        .await
        .unwrap_err();
    assert_eq!(err.rule(), Some(Rule::ReadOnly), "{err}");
    assert!(!tree.root.join("made").exists());
    run(writer, policy(json!({}))).await.unwrap();
    assert!(tree.root.join("made").exists());

    let sleeper = tool(json!({"command": "sleep", "args": ["1000"]}), json!({}));
    let err = run(sleeper, policy(json!({"timeout_s": 1})))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::TimedOut(_)), "{err}");

    let escaped = tree.outside.join("escaped");
    let escaper = tool(
        json!({"command": "/bin/sh", "args": ["-c", format!("echo x > '{}'; echo y > inside", escaped.display())]}),
        json!({}),
    );
    let out = run(escaper, policy(json!({"sandbox": "strict"})))
        .await
        .unwrap();
    assert!(out.text.is_empty() || !out.is_error, "{}", out.text);
    assert!(!escaped.exists());
    assert!(tree.root.join("inside").exists());
}
