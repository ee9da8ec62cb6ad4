#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The reference pages in `docs/reference/`, generated from the code, and
//! the check that every relative link of the Markdown documentation
//! resolves.
//!
//! Each page test renders its page and fails when the checked-in file
//! differs. After a change to the CLI, the settings or an error kind:
//!
//! ```sh
//! UPDATE_DOCS=1 cargo test -p agents-cli --test reference
//! ```
//!
//! - `cli.md`: the clap command tree (`agents_cli::cli::Args`), through
//!   `clap-markdown`.
//! - `config.md`: the keys of `config.toml` from its JSON Schema
//!   (`agents_config::config_schema`, schemars), their defaults as the
//!   settings chain resolves them with nothing set, and the environment
//!   variables (`agents_config::ENV_VARS`, and the few read elsewhere).
//! - `errors.md`: every `kind()` of the workspace's error types, read from
//!   the source with `syn`, with the doc comment of the variant it names;
//!   the kinds the CLI raises itself; the rules of a `SKILL.md` problem.
//!
//! A test of its own binary: it needs no `agents` process, and builds
//! quickly, so regenerating after someone else's change is cheap.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use serde_json::Value;
use syn::visit::{self, Visit};

/// What a stale page's message tells to run.
const REGENERATE: &str = "UPDATE_DOCS=1 cargo test -p agents-cli --test reference";

/// The first line of every generated page.
fn generated_note() -> String {
    format!(
        "<!-- Generated from the code by crates/agents-cli/tests/reference.rs: do not edit.\n     Regenerate with `{REGENERATE}`. -->\n"
    )
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Compares `text` with `docs/reference/NAME`, or writes it there under
/// `UPDATE_DOCS`.
fn check_page(name: &str, text: &str) {
    let path = repo().join("docs/reference").join(name);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != text {
        let line = current
            .lines()
            .zip(text.lines())
            .position(|(old, new)| old != new)
            .unwrap_or_else(|| current.lines().count().min(text.lines().count()))
            + 1;
        panic!(
            "docs/reference/{name} is stale (it first differs at line {line}): regenerate it with\n\n    {REGENERATE}\n\nand commit the result"
        );
    }
}

/// One line for a table cell: whitespace collapsed, `|` escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

// ---------------------------------------------------------------- CLI

#[test]
fn cli_reference_is_current() {
    check_page("cli.md", &cli_page());
}

fn cli_page() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("CLI reference".to_owned())
        .show_footer(false);
    let body =
        clap_markdown::help_markdown_command_custom(&agents_cli::cli::Args::command(), &options);
    format!("{}\n{}", generated_note(), tidy(&body))
}

/// clap-markdown's text, with each `Example:` of an `after_help` (a line
/// `Example:` then lines indented by two spaces) as a shell code block,
/// trailing spaces dropped and runs of blank lines made one.
fn tidy(markdown: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut lines = markdown.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim_end() == "Example:" {
            out.push("Example:".to_owned());
            out.push(String::new());
            out.push("```sh".to_owned());
            while let Some(example) = lines.peek().and_then(|next| next.strip_prefix("  ")) {
                out.push(example.trim_end().to_owned());
                lines.next();
            }
            out.push("```".to_owned());
            continue;
        }
        let line = line.trim_end();
        if line.is_empty() && out.last().is_some_and(String::is_empty) {
            continue;
        }
        out.push(line.to_owned());
    }
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out.join("\n") + "\n"
}

// ---------------------------------------------------------------- config

#[test]
fn config_reference_is_current() {
    check_page("config.md", &config_page());
}

/// One key of `config.toml`.
struct Key {
    key: String,
    kind: String,
    description: String,
    default: Option<String>,
}

fn config_page() -> String {
    let schema = agents_config::config_schema();
    let mut keys = Vec::new();
    table_keys(&schema, &schema, "", &mut keys);
    // What `agents config show` prints with nothing set, `~` standing for
    // the home directory.
    let settings = agents_config::resolve(
        &agents_config::CliOverrides::default(),
        &|_| None,
        Path::new("~"),
    )
    .unwrap();
    let defaults = shown_defaults(&settings.to_string());
    for key in &mut keys {
        if key.default.is_none() {
            key.default = defaults.get(&key.key).cloned();
        }
    }
    let env: HashMap<&str, &str> = agents_config::ENV_VARS
        .iter()
        .map(|var| (var.key, var.name))
        .collect();

    let mut page = generated_note();
    page.push_str(
        "\n# Configuration reference\n\n\
         Settings resolve in one order: command-line flag, then environment variable, then\n\
         `config.toml`, then the default. `agents config show` prints each value and where it came\n\
         from. The file's JSON Schema is `agents schema config`. See\n\
         [the configuration guide](../guide/configuration.md).\n\n\
         ## Keys of `config.toml`\n\n\
         `~` is your home directory. `NAME` is a server's name.\n\n\
         | key | type | default | environment variable | description |\n\
         |---|---|---|---|---|\n",
    );
    for key in &keys {
        let _ = writeln!(
            page,
            "| `{}` | {} | {} | {} | {} |",
            key.key,
            cell(&key.kind),
            key.default
                .as_deref()
                .map_or("—".to_owned(), |value| format!("`{}`", cell(value))),
            env.get(key.key.as_str())
                .map_or("—".to_owned(), |name| format!("`{name}`")),
            cell(&key.description),
        );
    }
    page.push_str(
        "\n## Environment variables\n\n\
         An empty value counts as unset.\n\n\
         | variable | sets | description |\n|---|---|---|\n",
    );
    for var in agents_config::ENV_VARS {
        let _ = writeln!(
            page,
            "| `{}` | `{}` | {} |",
            var.name,
            var.key,
            cell(var.description)
        );
    }
    let declared: BTreeSet<&str> = agents_config::ENV_VARS.iter().map(|var| var.name).collect();
    let scan = scan();
    let others: Vec<&EnvRead> = scan
        .env_reads
        .iter()
        .filter(|read| !declared.contains(read.name.as_str()))
        .collect();
    if !others.is_empty() {
        page.push_str(
            "\nRead outside the settings chain (no config key, no flag):\n\n\
             | variable | read by | what the code says |\n|---|---|---|\n",
        );
        for read in others {
            let _ = writeln!(
                page,
                "| `{}` | `{}` | {} |",
                read.name,
                read.file,
                cell(&read.doc)
            );
        }
    }
    page
}

/// The leaf keys under the object schema `node`, dotted from `prefix`; a
/// map of tables (`additionalProperties` with properties) is `prefix.NAME`.
fn table_keys(root: &Value, node: &Value, prefix: &str, out: &mut Vec<Key>) {
    let node = resolve_ref(root, node);
    let Some(properties) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let target = resolve_ref(root, property);
        if target.get("properties").is_some() {
            table_keys(root, target, &key, out);
            continue;
        }
        if let Some(entry) = target.get("additionalProperties")
            && resolve_ref(root, entry).get("properties").is_some()
        {
            out.push(Key {
                key: format!("{key}.NAME"),
                kind: "table".to_owned(),
                description: description(property),
                default: None,
            });
            table_keys(root, entry, &format!("{key}.NAME"), out);
            continue;
        }
        out.push(Key {
            key,
            kind: type_of(root, property),
            description: description(property),
            default: property
                .get("default")
                .map(|value| serde_json::to_string(value).unwrap()),
        });
    }
}

fn resolve_ref<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.trim_start_matches('#');
            root.pointer(pointer).unwrap_or(node)
        }
        None => node,
    }
}

fn description(node: &Value) -> String {
    node.get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A schema's type for people: `integer (1–128)`, `string or list of
/// string`; `null` (an optional key) left out.
fn type_of(root: &Value, node: &Value) -> String {
    let node = resolve_ref(root, node);
    if let Some(choices) = node.get("anyOf").and_then(Value::as_array) {
        let kinds: Vec<String> = choices
            .iter()
            .map(|choice| type_of(root, choice))
            .filter(|kind| !kind.is_empty())
            .collect();
        return kinds.join(" or ");
    }
    let names: Vec<&str> = match node.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut kinds = Vec::new();
    for name in names.into_iter().filter(|name| *name != "null") {
        let kind = match name {
            "array" => {
                let item = node
                    .get("items")
                    .map(|items| type_of(root, items))
                    .unwrap_or_default();
                format!("list of {item}")
            }
            "object" => match node.get("additionalProperties") {
                Some(values) if values.is_object() => {
                    format!("map of {}", type_of(root, values))
                }
                _ => "table".to_owned(),
            },
            other => other.to_owned(),
        };
        kinds.push(kind);
    }
    let mut kind = kinds.join(" or ");
    let bound = |field: &str| node.get(field).and_then(Value::as_u64);
    match (bound("minimum"), bound("maximum")) {
        (Some(low), Some(high)) => kind.push_str(&format!(" ({low}–{high})")),
        (Some(low), None) => kind.push_str(&format!(" (≥ {low})")),
        _ => {}
    }
    kind
}

/// `key → value` of the settings `agents config show` prints (lines
/// `key  value  (origin)` up to the first blank line).
fn shown_defaults(shown: &str) -> HashMap<String, String> {
    let mut defaults = HashMap::new();
    for line in shown.lines().take_while(|line| !line.trim().is_empty()) {
        let Some((key, rest)) = line.split_once(' ') else {
            continue;
        };
        let value = rest.trim();
        let value = value.strip_suffix("(default)").unwrap_or(value).trim_end();
        if !value.is_empty() {
            defaults.insert(key.to_owned(), value.to_owned());
        }
    }
    defaults
}

// ---------------------------------------------------------------- errors

#[test]
fn error_reference_is_current() {
    check_page("errors.md", &errors_page());
}

fn errors_page() -> String {
    let scan = scan();
    let mut page = generated_note();
    page.push_str(
        "\n# Error kinds\n\n\
         Every error has a stable `kind`. With `--format json` an error is printed on stderr as\n\
         `{\"error\": {\"kind\": \"...\", \"message\": \"...\"}}`; the message is for people and may\n\
         change, the kind does not. The exit code is `2` for `usage` and `1` for every other kind.\n\n\
         A kind may come from several places: the table lists each, with what its doc comment says.\n\
         Warnings have kinds too: see [Warning kinds](#warning-kinds).\n\
         An error that wraps another (a service error around a store error) takes the inner\n\
         error's kind and is not listed again.\n\n\
         | kind | raised by | meaning |\n|---|---|---|\n",
    );
    // (kind, source, meaning) of errors, and of warnings (types named
    // `…Warning`), each sorted by kind.
    let mut errors: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut warnings: BTreeSet<(String, String, String)> = BTreeSet::new();
    for kind in &scan.kinds {
        let owner = (kind.krate.clone(), kind.owner.clone());
        let meaning = match &kind.variant {
            Some(variant) => scan
                .enums
                .get(&owner)
                .and_then(|variants| variants.get(variant))
                .cloned(),
            None => scan.types.get(&owner).cloned(),
        }
        .unwrap_or_default();
        let source = match &kind.variant {
            Some(variant) => format!("`{}::{}::{variant}`", kind.krate, kind.owner),
            None => format!("`{}::{}`", kind.krate, kind.owner),
        };
        let rows = if kind.owner.ends_with("Warning") {
            &mut warnings
        } else {
            &mut errors
        };
        rows.insert((kind.kind.clone(), source, meaning));
    }
    // The kinds the CLI raises itself: one row per kind, naming its files.
    let mut raised: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for kind in &scan.cli_kinds {
        raised.entry(&kind.kind).or_default().insert(&kind.file);
    }
    for (kind, files) in raised {
        let files: Vec<String> = files.iter().map(|file| format!("`{file}`")).collect();
        errors.insert((
            kind.to_owned(),
            format!("the CLI ({})", files.join(", ")),
            String::new(),
        ));
    }
    kind_table(&mut page, &errors);
    page.push_str(
        "\n## Warning kinds\n\n\
         A warning does not stop a command. Under `--format json` it is printed on stderr as\n\
         `{\"warning\": {...}}`, with a `kind` from this table where the warning has one.\n\n\
         | kind | raised by | meaning |\n|---|---|---|\n",
    );
    kind_table(&mut page, &warnings);
    if let Some(rules) = scan
        .enums
        .get(&("agents_discovery".to_owned(), "Rule".to_owned()))
    {
        page.push_str(
            "\n## `SKILL.md` rules\n\n\
             A `SKILL.md` problem (`agents skill lint`, `agents skill discover`) names the rule it\n\
             breaks, as `rule` under `--format json`.\n\n\
             | rule | meaning |\n|---|---|\n",
        );
        for (variant, doc) in scan
            .rule_order
            .iter()
            .filter_map(|variant| rules.get(variant).map(|doc| (variant, doc)))
        {
            let _ = writeln!(page, "| `{}` | {} |", snake_case(variant), cell(doc));
        }
    }
    page
}

/// Rows `kind | source | meaning`, the kind shown once for its first row.
fn kind_table(page: &mut String, rows: &BTreeSet<(String, String, String)>) {
    let mut last = "";
    for (kind, source, meaning) in rows {
        let shown = if kind == last {
            String::new()
        } else {
            format!("`{kind}`")
        };
        let _ = writeln!(page, "| {shown} | {source} | {} |", cell(meaning));
        last = kind;
    }
}

fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (at, ch) in name.chars().enumerate() {
        if ch.is_uppercase() {
            if at > 0 {
                out.push('_');
            }
            out.extend(ch.to_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

/// A kind a `kind()` method returns for one variant (or for all, when it
/// does not match on `self`).
#[derive(Debug)]
struct KindRow {
    kind: String,
    krate: String,
    owner: String,
    variant: Option<String>,
}

/// A kind the CLI raises itself (`Failure::new("kind", …)`, `Failure::usage`).
#[derive(Debug)]
struct CliKind {
    kind: String,
    file: String,
}

/// An environment variable a product crate reads by name.
#[derive(Debug)]
struct EnvRead {
    name: String,
    file: String,
    doc: String,
}

#[derive(Debug, Default)]
struct Scan {
    kinds: Vec<KindRow>,
    cli_kinds: Vec<CliKind>,
    env_reads: Vec<EnvRead>,
    /// `(crate, enum) → variant → first paragraph of its doc comment` (or
    /// its `#[error]` message when it has none).
    enums: HashMap<(String, String), BTreeMap<String, String>>,
    /// `(crate, type) → first paragraph of its doc comment`, for every
    /// struct and enum.
    types: HashMap<(String, String), String>,
    /// The variants of `agents_discovery`'s `Rule`, in declaration order.
    rule_order: Vec<String>,
}

/// Reads every product crate's source (not the test fixture or the bench
/// driver, and no `#[cfg(test)]` module).
fn scan() -> Scan {
    let mut scan = Scan::default();
    let crates = repo().join("crates");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&crates)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy();
            name != "agents-bench" && name != "agents-mcp-fixture"
        })
        .collect();
    dirs.sort();
    for dir in dirs {
        let krate = dir.file_name().unwrap().to_string_lossy().replace('-', "_");
        let mut files = Vec::new();
        files_under(&dir.join("src"), "rs", &mut files);
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let syntax =
                syn::parse_file(&text).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
            let shown = file
                .strip_prefix(repo())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let mut visitor = Visitor {
                scan: &mut scan,
                krate: krate.clone(),
                file: shown,
                owner: None,
                docs: Vec::new(),
            };
            visitor.visit_file(&syntax);
        }
    }
    scan
}

/// Every file under `dir` whose extension is `extension`.
fn files_under(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, extension, out);
        } else if path.extension().is_some_and(|ext| ext == extension) {
            out.push(path);
        }
    }
}

struct Visitor<'s> {
    scan: &'s mut Scan,
    krate: String,
    file: String,
    /// The type of the `impl` being read.
    owner: Option<String>,
    /// The doc comments of the functions being read, innermost last.
    docs: Vec<String>,
}

/// The first paragraph of an item's doc comment, on one line.
fn doc_of(attrs: &[syn::Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(pair) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) = &pair.value
        {
            lines.push(text.value());
        }
    }
    lines
        .iter()
        .map(|line| line.trim())
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        // Intra-doc links (`[`Type`]`) read as plain code here.
        .replace("[`", "`")
        .replace("`]", "`")
}

/// The sentences of `doc` that name `word`, else its first sentence.
fn sentences_naming(doc: &str, word: &str) -> String {
    let sentences: Vec<&str> = doc
        .split_inclusive(". ")
        .map(str::trim)
        .filter(|sentence| !sentence.is_empty())
        .collect();
    let naming: Vec<&str> = sentences
        .iter()
        .copied()
        .filter(|sentence| sentence.contains(word))
        .collect();
    if naming.is_empty() {
        sentences.first().copied().unwrap_or_default().to_owned()
    } else {
        naming.join(" ")
    }
}

/// The message of `#[error("…")]`, unless it is `transparent`.
fn error_message(attrs: &[syn::Attribute]) -> Option<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("error"))
        .find_map(|attr| attr.parse_args::<syn::LitStr>().ok())
        .map(|text| format!("\"{}\"", text.value()))
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

/// The last segment of a path, e.g. `Variant` of `Self::Variant`.
fn last_ident(path: &syn::Path) -> Option<String> {
    path.segments
        .last()
        .map(|segment| segment.ident.to_string())
}

/// The variants a match arm's pattern names.
fn pattern_variants(pattern: &syn::Pat, out: &mut Vec<String>) {
    match pattern {
        syn::Pat::Or(or) => {
            for case in &or.cases {
                pattern_variants(case, out);
            }
        }
        syn::Pat::Path(path) => out.extend(last_ident(&path.path)),
        syn::Pat::TupleStruct(tuple) => out.extend(last_ident(&tuple.path)),
        syn::Pat::Struct(strukt) => out.extend(last_ident(&strukt.path)),
        syn::Pat::Ident(ident) => out.push(ident.ident.to_string()),
        _ => {}
    }
}

/// Every string literal in an expression.
#[derive(Default)]
struct Literals(Vec<String>);

impl<'ast> Visit<'ast> for Literals {
    fn visit_lit_str(&mut self, text: &'ast syn::LitStr) {
        self.0.push(text.value());
    }
}

/// The first `match` in a function body.
#[derive(Default)]
struct FirstMatch<'ast>(Option<&'ast syn::ExprMatch>);

impl<'ast> Visit<'ast> for FirstMatch<'ast> {
    fn visit_expr_match(&mut self, node: &'ast syn::ExprMatch) {
        if self.0.is_none() {
            self.0 = Some(node);
        }
    }
}

impl Visitor<'_> {
    /// Records what a `fn kind(&self) -> &'static str` returns.
    fn kind_method(&mut self, body: &syn::Block) {
        let Some(owner) = self.owner.clone() else {
            return;
        };
        let mut first = FirstMatch::default();
        first.visit_block(body);
        let Some(matched) = first.0 else {
            let mut literals = Literals::default();
            literals.visit_block(body);
            for kind in literals.0 {
                self.scan.kinds.push(KindRow {
                    kind,
                    krate: self.krate.clone(),
                    owner: owner.clone(),
                    variant: None,
                });
            }
            return;
        };
        for arm in &matched.arms {
            let mut variants = Vec::new();
            pattern_variants(&arm.pat, &mut variants);
            let mut literals = Literals::default();
            literals.visit_expr(&arm.body);
            for kind in &literals.0 {
                if variants.is_empty() {
                    self.scan.kinds.push(KindRow {
                        kind: kind.clone(),
                        krate: self.krate.clone(),
                        owner: owner.clone(),
                        variant: None,
                    });
                }
                for variant in &variants {
                    self.scan.kinds.push(KindRow {
                        kind: kind.clone(),
                        krate: self.krate.clone(),
                        owner: owner.clone(),
                        variant: Some(variant.clone()),
                    });
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_item_mod(&mut self, node: &'ast syn::ItemMod) {
        if !is_test_only(&node.attrs) {
            visit::visit_item_mod(self, node);
        }
    }

    fn visit_item_enum(&mut self, node: &'ast syn::ItemEnum) {
        let mut variants = BTreeMap::new();
        for variant in &node.variants {
            let doc = doc_of(&variant.attrs);
            let meaning = if doc.is_empty() {
                error_message(&variant.attrs).unwrap_or_default()
            } else {
                doc
            };
            variants.insert(variant.ident.to_string(), meaning);
        }
        if self.krate == "agents_discovery" && node.ident == "Rule" {
            self.scan.rule_order = node
                .variants
                .iter()
                .map(|variant| variant.ident.to_string())
                .collect();
        }
        self.scan
            .enums
            .insert((self.krate.clone(), node.ident.to_string()), variants);
        self.scan.types.insert(
            (self.krate.clone(), node.ident.to_string()),
            doc_of(&node.attrs),
        );
        visit::visit_item_enum(self, node);
    }

    fn visit_item_struct(&mut self, node: &'ast syn::ItemStruct) {
        self.scan.types.insert(
            (self.krate.clone(), node.ident.to_string()),
            doc_of(&node.attrs),
        );
        visit::visit_item_struct(self, node);
    }

    fn visit_item_impl(&mut self, node: &'ast syn::ItemImpl) {
        if is_test_only(&node.attrs) {
            return;
        }
        let outer = self.owner.take();
        if let syn::Type::Path(path) = node.self_ty.as_ref() {
            self.owner = last_ident(&path.path);
        }
        visit::visit_item_impl(self, node);
        self.owner = outer;
    }

    fn visit_impl_item_fn(&mut self, node: &'ast syn::ImplItemFn) {
        if is_test_only(&node.attrs) {
            return;
        }
        let returns_str = matches!(&node.sig.output, syn::ReturnType::Type(_, ty)
            if matches!(ty.as_ref(), syn::Type::Reference(reference)
                if matches!(reference.elem.as_ref(), syn::Type::Path(path) if path.path.is_ident("str"))));
        if node.sig.ident == "kind" && returns_str && node.sig.receiver().is_some() {
            self.kind_method(&node.block);
        }
        self.docs.push(doc_of(&node.attrs));
        visit::visit_impl_item_fn(self, node);
        self.docs.pop();
    }

    fn visit_item_fn(&mut self, node: &'ast syn::ItemFn) {
        if is_test_only(&node.attrs) {
            return;
        }
        self.docs.push(doc_of(&node.attrs));
        visit::visit_item_fn(self, node);
        self.docs.pop();
    }

    fn visit_expr_call(&mut self, node: &'ast syn::ExprCall) {
        if let syn::Expr::Path(function) = node.func.as_ref() {
            let segments: Vec<String> = function
                .path
                .segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect();
            let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
            let first_literal = node.args.first().and_then(|arg| match arg {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) => Some(text.value()),
                _ => None,
            });
            let doc = self.docs.last().cloned().unwrap_or_default();
            match (segments.as_slice(), first_literal) {
                ([.., "Failure", "new"], Some(kind)) => self.scan.cli_kinds.push(CliKind {
                    kind,
                    file: self.file.clone(),
                }),
                ([.., "Failure", "usage"], _) => self.scan.cli_kinds.push(CliKind {
                    kind: "usage".to_owned(),
                    file: self.file.clone(),
                }),
                ([.., "env", "var" | "var_os"], Some(name)) => {
                    let doc = sentences_naming(&doc, &name);
                    self.scan.env_reads.push(EnvRead {
                        name,
                        file: self.file.clone(),
                        doc,
                    });
                }
                _ => {}
            }
        }
        visit::visit_expr_call(self, node);
    }
}

// ---------------------------------------------------------------- links

/// Every relative link in the project's Markdown resolves to a file, and a
/// `#fragment` to a heading of it.
#[test]
fn markdown_links_resolve() {
    let root = repo();
    let mut files: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "BENCHMARKS.md",
        "CHANGELOG.md",
    ]
    .iter()
    .map(|name| root.join(name))
    .collect();
    files_under(&root.join("docs"), "md", &mut files);
    files.sort();
    let mut anchors: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    let mut broken = Vec::new();
    for file in &files {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let shown = format!(
                "{}:{line}: `{target}`",
                file.strip_prefix(&root).unwrap().display()
            );
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !resolved.exists() {
                broken.push(format!("{shown}: no such file"));
                continue;
            }
            let Some(fragment) = fragment else {
                continue;
            };
            if resolved.extension().is_none_or(|ext| ext != "md") {
                continue;
            }
            let resolved = resolved.canonicalize().unwrap();
            let known = anchors.entry(resolved.clone()).or_insert_with(|| {
                headings(&std::fs::read_to_string(&resolved).unwrap_or_default())
            });
            if !known.contains(fragment) {
                broken.push(format!("{shown}: no heading `#{fragment}` there"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "{} broken relative link(s):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

/// The destinations of the links and images in `text`, with their lines.
fn links(text: &str) -> Vec<(usize, String)> {
    use pulldown_cmark::{Event, Parser, Tag};
    Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                let line = text
                    .get(..range.start)
                    .unwrap_or_default()
                    .lines()
                    .count()
                    .max(1);
                Some((line, dest_url.into_string()))
            }
            _ => None,
        })
        .collect()
}

/// The anchors GitHub gives the headings of `text`: the heading's text in
/// lower case, spaces as `-`, other punctuation dropped; a repeated one
/// gets `-1`, `-2`, ….
fn headings(text: &str) -> BTreeSet<String> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut anchors = BTreeSet::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut current: Option<String> = None;
    for event in Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { .. }) => current = Some(String::new()),
            Event::Text(part) | Event::Code(part) => {
                if let Some(heading) = current.as_mut() {
                    heading.push_str(&part);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let Some(heading) = current.take() else {
                    continue;
                };
                let slug: String = heading
                    .trim()
                    .to_lowercase()
                    .chars()
                    .filter_map(|ch| match ch {
                        ' ' => Some('-'),
                        '-' | '_' => Some(ch),
                        ch if ch.is_alphanumeric() => Some(ch),
                        _ => None,
                    })
                    .collect();
                let count = seen.entry(slug.clone()).or_default();
                let anchor = if *count == 0 {
                    slug.clone()
                } else {
                    format!("{slug}-{count}")
                };
                *count += 1;
                anchors.insert(anchor);
            }
            _ => {}
        }
    }
    anchors
}
