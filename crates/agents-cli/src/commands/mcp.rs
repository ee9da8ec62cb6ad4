use std::io::IsTerminal;
use std::process::ExitCode;

use agents_registry::{FetchOptions, McpRefresh};
use serde_json::json;

use crate::cli::McpCommand;
use crate::context::Context;
use crate::output::{self, Failure};
use crate::shared::discovery::discover_first_use;
use crate::shared::files;
use crate::shared::lock::{DiffTo, gate};
use crate::shared::mcp::{fetch_options, report_failure, warn_drift};

pub async fn run(ctx: &Context, command: McpCommand) -> Result<ExitCode, Failure> {
    match command {
        McpCommand::Serve {
            skills,
            dry_run,
            locked,
            http,
            auth_token_env,
            no_auth,
            roots,
            audit,
            audit_file,
            approve,
            approve_all,
            disclose,
            budget_tokens,
        } => {
            let mode: agents_disclosure::Mode = disclose.into();
            if budget_tokens.is_some() && mode == agents_disclosure::Mode::All {
                return Err(Failure::usage(
                    "`--budget-tokens` is the budget of `--disclose skills`, `search` or `auto`",
                ));
            }
            let disclose = agents_gateway::DiscloseOptions {
                mode,
                budget_tokens: budget_tokens.unwrap_or(agents_disclosure::DEFAULT_BUDGET_TOKENS),
            };
            let transport = match http {
                Some(addr) => Transport::Http(addr, auth_token_env, no_auth),
                None => Transport::Stdio,
            };
            let local = Local {
                roots,
                audit,
                audit_file,
                approve: agents_gateway::Approve {
                    all: approve_all,
                    tools: approve,
                },
                disclose,
            };
            serve(ctx, &skills, dry_run, locked.as_deref(), transport, &local).await
        }
        McpCommand::Import { file, dry_run, yes } => import(ctx, &file, dry_run, yes),
        McpCommand::Export {
            serve,
            client,
            output: target,
            bare_command,
        } => {
            // A serve entry for a skill that is not registered would only
            // fail later, in the client.
            for name in &serve {
                let name = ctx.service.skill_name(name).await?;
                ctx.service.get_skill(&name).await?;
            }
            export(ctx, &serve, client, target.as_deref(), bare_command)
        }
        McpCommand::Refresh { servers } => {
            let spinner = output::spinner(ctx.format, "querying MCP servers…");
            let outcomes = ctx.service.refresh_mcp(&servers, &fetch_options(ctx)).await;
            spinner.finish_and_clear();
            let outcomes = outcomes?;
            let failed = outcomes.iter().any(|o| o.error.is_some());
            for outcome in &outcomes {
                warn_drift(ctx, outcome);
            }
            if ctx.format.structured() {
                output::json(&outcomes)?;
            } else if outcomes.is_empty() {
                output::line("no MCP servers are defined")?;
            } else {
                for outcome in &outcomes {
                    print_outcome(ctx, outcome)?;
                }
            }
            if failed {
                let names: Vec<&str> = outcomes
                    .iter()
                    .filter(|o| o.error.is_some())
                    .map(|o| o.server.as_str())
                    .collect();
                return Err(Failure::new(
                    "mcp_refresh_failed",
                    format!(
                        "{} of {} mcp server(s) could not be refreshed: {}",
                        names.len(),
                        outcomes.len(),
                        files::preview(&names)
                    ),
                ));
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::List => {
            let states = ctx.service.mcp_server_states().await?;
            if ctx.format.structured() {
                output::json(&states)?;
            } else {
                let rows = states
                    .iter()
                    .map(|s| {
                        [
                            s.server.clone(),
                            s.transport.unwrap_or("undefined").to_owned(),
                            s.defined_in.clone(),
                            s.defined_by.clone().unwrap_or_default(),
                            agents_mcp_short(&s.digest),
                            if s.trusted { "yes" } else { "no" }.to_owned(),
                            s.cached_tools.to_string(),
                            s.fetched_at.clone().unwrap_or_else(|| "never".into()),
                        ]
                    })
                    .collect();
                output::table(
                    [
                        "SERVER",
                        "TRANSPORT",
                        "DEFINED IN",
                        "BY",
                        "DIGEST",
                        "TRUSTED",
                        "TOOLS",
                        "FETCHED",
                    ],
                    rows,
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Tools { server, diff: true } => tool_diff(ctx, &server).await,
        McpCommand::Tools {
            server,
            diff: false,
        } => server_tools(ctx, &server).await,
        McpCommand::Trust {
            server,
            digest,
            list,
        } => trust(ctx, server, digest, list).await,
        McpCommand::Untrust { server, digest } => untrust(ctx, &server, digest.as_deref()),
    }
}

/// `agents mcp tools SERVER --diff`: the last change of its cached tools.
async fn tool_diff(ctx: &Context, server: &str) -> Result<ExitCode, Failure> {
    let diffs = ctx.service.mcp_tool_diff(server).await?;
    if ctx.format.structured() {
        output::json(&json!({"server": server, "definitions": diffs}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for diff in &diffs {
        use std::fmt::Write as _;
        let digest = agents_mcp_short(&diff.digest);
        let Some(since) = &diff.previous_fetched_at else {
            let _ = writeln!(
                text,
                "{server} ({digest}): no change seen since tools were first cached"
            );
            continue;
        };
        let now = diff.fetched_at.as_deref().unwrap_or("?");
        if diff.changes.is_empty() {
            let _ = writeln!(
                text,
                "{server} ({digest}): no differences between {since} and {now}"
            );
            continue;
        }
        let _ = writeln!(
            text,
            "{server} ({digest}): changes between {since} and {now}"
        );
        for change in &diff.changes {
            match change.change {
                agents_core::ListingChange::Added => {
                    let _ = writeln!(text, "  added   {}", change.name);
                }
                agents_core::ListingChange::Removed => {
                    let _ = writeln!(text, "  removed {}", change.name);
                }
                agents_core::ListingChange::Changed => {
                    let _ = writeln!(text, "  changed {}", change.name);
                    for field in &change.fields {
                        let _ = writeln!(text, "    {}:", field.field);
                        let _ = writeln!(text, "      - {}", shown_value(&field.before));
                        let _ = writeln!(text, "      + {}", shown_value(&field.after));
                    }
                }
            }
        }
    }
    output::raw(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `agents mcp tools SERVER`: its cached tools. Two skills, or a skill and
/// the config file, may each define a server of that name, each with a
/// cache of its own: then the tools are shown per definition, each group
/// headed by who defines it and its digest (under `--format json`, each
/// tool carries its `definition`).
async fn server_tools(ctx: &Context, server: &str) -> Result<ExitCode, Failure> {
    let groups = ctx.service.mcp_server_tool_groups(server).await?;
    let empty = || {
        output::line(format!(
            "no cached tools for `{server}`: run `{}`",
            crate::hints::refresh(server)
        ))
    };
    let table = |tools: &[agents_core::ToolSpec]| {
        let rows = tools
            .iter()
            .map(|t| [t.name.clone(), t.description.clone()])
            .collect();
        output::table(["TOOL", "DESCRIPTION"], rows)
    };
    if let [group] = groups.as_slice() {
        // One definition: its tools, as they always were shown.
        if ctx.format.structured() {
            output::json(&json!({"server": server, "tools": group.tools}))?;
        } else if group.tools.is_empty() {
            empty()?;
        } else {
            table(&group.tools)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if ctx.format.structured() {
        let mut tools = Vec::new();
        for group in &groups {
            let definition = json!({"digest": group.digest, "defined_in": group.defined_in});
            for tool in &group.tools {
                let mut value = serde_json::to_value(tool).map_err(|err| {
                    Failure::new("internal", format!("cannot encode a tool: {err}"))
                })?;
                if let Some(fields) = value.as_object_mut() {
                    fields.insert("definition".into(), definition.clone());
                }
                tools.push(value);
            }
        }
        output::json(&json!({"server": server, "tools": tools}))?;
        return Ok(ExitCode::SUCCESS);
    }
    for (index, group) in groups.iter().enumerate() {
        if index > 0 {
            output::line("")?;
        }
        let digest = agents_mcp_short(&group.digest);
        let skills: Vec<String> = group
            .defined_in
            .iter()
            .filter(|d| *d != "config")
            .map(|skill| format!("`{skill}`"))
            .collect();
        let mut whose: Vec<String> = Vec::new();
        if group.defined_in.iter().any(|d| d == "config") {
            whose.push("your config file".to_owned());
        }
        match skills.as_slice() {
            [] => {}
            [one] => whose.push(format!("skill {one}")),
            more => whose.push(format!("skills {}", files::preview(more))),
        }
        let heading = if whose.is_empty() {
            "no current definition (the cache of a definition since changed or removed)".to_owned()
        } else {
            format!("defined in {}", whose.join(" and "))
        };
        output::line(format!(
            "{server} ({digest}): {heading}, {} cached tool(s)",
            group.tools.len()
        ))?;
        if group.tools.is_empty() {
            output::line(format!("  none: run `{}`", crate::hints::refresh(server)))?;
        } else {
            table(&group.tools)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A string as itself, anything else as compact JSON.
fn shown_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn agents_mcp_short(digest: &str) -> String {
    digest.get(..12).unwrap_or(digest).to_owned()
}

async fn trust(
    ctx: &Context,
    server: Option<String>,
    digest: Option<String>,
    list: bool,
) -> Result<ExitCode, Failure> {
    if list || server.is_none() {
        let entries = ctx.service.trust().entries();
        if ctx.format.structured() {
            output::json(&entries)?;
        } else if entries.is_empty() {
            output::line(
                "no MCP server definitions are trusted (servers in config.toml always are)",
            )?;
        } else {
            let rows = entries
                .iter()
                .map(|e| {
                    [
                        e.server.clone(),
                        agents_mcp_short(&e.digest),
                        e.launch.clone(),
                        e.reason.clone(),
                        e.trusted_at.clone(),
                    ]
                })
                .collect();
            output::table(["SERVER", "DIGEST", "SUMMARY", "WHY", "SINCE"], rows)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let server = server.unwrap_or_default();
    // Every definition is shown before anything is trusted (see
    // `TrustReview::step` for when it is).
    let review = ctx.service.trust_review(&server, digest.as_deref()).await?;
    let structured = ctx.format.structured();
    if !structured {
        let mut text = String::new();
        for reviewed in &review.candidates {
            for line in reviewed.lines() {
                text.push_str(&line);
                text.push('\n');
            }
        }
        if review.more_candidates > 0 {
            text.push_str(&format!(
                "… and {} more untrusted definitions of `{}` (`--digest` picks one)\n",
                review.more_candidates, review.server
            ));
        }
        for d in &review.trusted {
            text.push_str(&format!(
                "mcp server `{}`, defined in {}: trusted on this machine (digest {})\n",
                d.shown_server(),
                d.definer(),
                agents_mcp_short(&d.digest)
            ));
        }
        output::raw(&text)?;
    }
    let can_ask = !structured && std::io::stdin().is_terminal();
    let step = review.step(digest.is_some(), can_ask);
    let step = match step {
        Ok(step) => step,
        Err(err) => {
            if structured {
                output::json(&json!({"review": review, "trusted": []}))?;
            }
            return Err(err.into());
        }
    };
    let definition = match step {
        agents_registry::TrustStep::AlreadyTrusted => {
            if structured {
                output::json(&json!({"review": review, "trusted": []}))?;
            } else {
                output::line(format!("mcp server `{}` is already trusted", review.server))?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        agents_registry::TrustStep::Trust(definition) => definition,
        agents_registry::TrustStep::Ask(definition) => {
            let question = format!(
                "trust mcp server `{}` as shown above (digest {})? [y/N] ",
                definition.shown_server(),
                agents_mcp_short(&definition.digest)
            );
            if !output::confirm(&question).map_err(Failure::io)? {
                return Err(agents_registry::ServiceError::McpTrustDeclined.into());
            }
            definition
        }
    };
    ctx.service.trust_definition(definition)?;
    let fetched = ctx.service.tool_list_fetched(&definition.digest).await?;
    if structured {
        output::json(&json!({
            "review": review,
            "trusted": [definition],
            "tool_list_fetched": fetched,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    output::line(format!(
        "trusted mcp server `{}` (digest {}) defined in {}",
        definition.shown_server(),
        agents_mcp_short(&definition.digest),
        definition.definer()
    ))?;
    if !fetched {
        offer_fetch(ctx, definition, can_ask).await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// After `mcp trust` of a definition whose tool list was never fetched:
/// at a terminal, asks whether to fetch it now (and does); otherwise says
/// how (its tools are not served until it is fetched, which `mcp serve`
/// also does at start).
async fn offer_fetch(
    ctx: &Context,
    definition: &agents_registry::McpDefinition,
    can_ask: bool,
) -> Result<(), Failure> {
    let server = definition.shown_server();
    if !can_ask {
        output::line(format!(
            "its tool list was never fetched: `{}` fetches it now (`agents mcp serve` does at start)",
            crate::hints::refresh(&definition.server)
        ))?;
        return Ok(());
    }
    let question =
        format!("fetch the tool list of mcp server `{server}` now (it starts it)? [y/N] ");
    if !output::confirm(&question).map_err(Failure::io)? {
        output::line(format!(
            "not fetched: `{}` fetches it later (`agents mcp serve` does at start)",
            crate::hints::refresh(&definition.server)
        ))?;
        return Ok(());
    }
    let spinner = output::spinner(ctx.format, "querying the MCP server…");
    let outcomes = ctx
        .service
        .fetch_definition(definition, &fetch_options(ctx))
        .await;
    spinner.finish_and_clear();
    for outcome in &outcomes? {
        print_outcome(ctx, outcome)?;
    }
    Ok(())
}

/// A refresh of one server for people: how many tools it cached, or why
/// not (a warning), then the tools of its list that were refused (one list
/// per server: at most 50 lines, then a count).
fn print_outcome(ctx: &Context, outcome: &McpRefresh) -> Result<(), Failure> {
    match &outcome.error {
        None => output::line(format!(
            "{}: {} tool(s) cached ({})",
            outcome.server,
            outcome.tools.len(),
            outcome.transport.as_deref().unwrap_or("?")
        ))?,
        Some(_) => report_failure(ctx, outcome),
    }
    output::warn_all(ctx.format, outcome.rejected.iter().map(String::as_str));
    Ok(())
}

fn untrust(ctx: &Context, server: &str, digest: Option<&str>) -> Result<ExitCode, Failure> {
    let gone = ctx.service.untrust_server(server, digest)?;
    if ctx.format.structured() {
        output::json(&gone)?;
    } else {
        output::line(format!(
            "untrusted {} definition(s) of mcp server `{}`",
            gone.len(),
            agents_core::text::shorten(server, agents_core::text::MAX_ECHO_BYTES)
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

enum Transport {
    Stdio,
    /// The address, `--auth-token-env`'s variable, `--no-auth`.
    Http(std::net::SocketAddr, Option<String>, bool),
}

fn gateway_failure(err: &agents_gateway::GatewayError) -> Failure {
    Failure::new(err.kind(), err.to_string())
}

/// What `--disclose` puts in the first tool list, in a few lines: the
/// first says what and what it costs, the others which skills are offered.
fn disclosure_lines(summary: &agents_gateway::disclose::Summary) -> Vec<String> {
    let mode = if summary.requested == summary.mode {
        summary.mode.to_string()
    } else {
        format!("{} (chose {})", summary.requested, summary.mode)
    };
    let meta: Vec<String> = summary.meta.iter().map(|m| format!("`{m}`")).collect();
    let percent = if summary.all_tokens == 0 {
        0.0
    } else {
        summary.tokens as f64 * 100.0 / summary.all_tokens as f64
    };
    let mut lines = vec![format!(
        "disclose {mode}: the first tool list holds {} served tool(s){}, {} bytes, about {} tokens \
         ({percent:.1}% of every tool: {} bytes, about {} tokens); {} tool(s) deferred; budget {} \
         tokens: {}",
        summary.eager.len(),
        if meta.is_empty() {
            String::new()
        } else {
            format!(" and {}", meta.join(", "))
        },
        summary.bytes,
        summary.tokens,
        summary.all_bytes,
        summary.all_tokens,
        summary.deferred,
        summary.budget_tokens,
        if summary.fits { "fits" } else { "over" },
    )];
    lines.extend(summary.offered.iter().map(|offered| {
        format!(
            "offer skill {} ({} tool(s)) through `{}`",
            offered.skill,
            offered.tools,
            agents_disclosure::LOADER
        )
    }));
    lines
}

/// How `agents mcp serve` runs builtins: its flags.
struct Local {
    /// `--root`: the roots of clients that offer none.
    roots: Vec<std::path::PathBuf>,
    /// `--audit`.
    audit: bool,
    /// `--audit-file`.
    audit_file: Option<std::path::PathBuf>,
    /// `--approve`, `--approve-all`.
    approve: agents_gateway::Approve,
    /// `--disclose`, `--budget-tokens`.
    disclose: agents_gateway::DiscloseOptions,
}

impl Local {
    /// The gateway's [`agents_gateway::LocalTools`]: the roots checked
    /// (each must be a directory) before anything is served.
    fn tools(&self) -> Result<agents_gateway::LocalTools, Failure> {
        let roots = agents_gateway::Roots::given_or_current(&self.roots)
            .map_err(|err| Failure::usage(format!("mcp serve: --root: {err}")))?;
        Ok(agents_gateway::LocalTools {
            executor: agents_gateway::Executor::new(roots, agents_gateway::Limits::default()),
            approve: self.approve.clone(),
            audit_log: agents_gateway::AuditLog::given_or_default(self.audit_file.clone()),
            audit_all: self.audit,
        })
    }
}

/// How many left-out entries the start-up line of `agents mcp serve` names.
const LEFT_OUT_SHOWN: usize = 10;

/// `agents mcp serve`: resolve, say what is left out, serve over stdio or HTTP.
async fn serve(
    ctx: &Context,
    skills: &[String],
    dry_run: bool,
    locked: Option<&std::path::Path>,
    transport: Transport,
    local: &Local,
) -> Result<ExitCode, Failure> {
    let disclose = local.disclose;
    let local = local.tools()?;
    let access = match &transport {
        Transport::Http(_, Some(var), _) => agents_gateway::HttpAccess::Token(
            agents_gateway::BearerToken::from_env(var).map_err(|err| gateway_failure(&err))?,
        ),
        Transport::Http(_, None, true) => agents_gateway::HttpAccess::Open,
        _ => agents_gateway::HttpAccess::Unset,
    };
    if let Transport::Http(addr, ..) = &transport {
        access.check(*addr).map_err(|err| gateway_failure(&err))?;
    }
    let mut names = Vec::with_capacity(skills.len());
    for skill in skills {
        names.push(ctx.service.skill_name(skill).await?);
    }
    // What is served resolves against the same `agent_skills/…` tools
    // `skill tools` sees on a fresh machine (on stderr: stdout is the
    // client's channel).
    discover_first_use(ctx, false).await?;
    let options = fetch_options(ctx);
    // The set as it is, unless serving fetched a missing tool list first
    // (then resolved again, below).
    let mut ready = None;
    if !dry_run {
        let set = ctx.service.serve_set(&names).await?;
        if !fetch_missing_lists(ctx, &set, &options).await? {
            ready = Some(set);
        }
    }
    let (set, lock) = match locked {
        Some(file) => {
            let lock = files::read_lock(file)?;
            let set = gate(
                ctx.format,
                ctx.service.locked_serve_set(&names, &lock).await?,
                file,
                |_| Vec::new(),
                if dry_run {
                    // Not serving: the diff is the result, on stdout.
                    DiffTo::Stdout
                } else {
                    // With stdio, stdout is the client's JSON-RPC channel.
                    DiffTo::Stderr
                },
            )?;
            (set, Some((lock, file.display().to_string())))
        }
        None => match ready {
            Some(set) => (set, None),
            None => (ctx.service.serve_set(&names).await?, None),
        },
    };
    let plan = agents_gateway::Serving::decide(&set, options.timeout);
    output::warn_all(ctx.format, plan.warnings.iter().map(String::as_str));
    let (descriptions, disclosed) = if disclose.mode == agents_disclosure::Mode::All {
        (std::collections::HashMap::new(), None)
    } else {
        let skills = agents_gateway::disclose::described_skills(&plan);
        let descriptions = ctx.service.skill_descriptions(&skills).await?;
        let roots: Vec<String> = names.iter().map(ToString::to_string).collect();
        let disclosed = agents_gateway::Disclosed::of(&plan, &roots, &descriptions, disclose)
            .map_err(|err| Failure::new(err.kind(), format!("mcp serve: {err}")))?;
        (descriptions, Some(disclosed.summary()))
    };
    let left_out: Vec<String> = plan
        .left_out
        .iter()
        .map(|l| format!("`{}`: {}", l.name, l.reason))
        .collect();
    if dry_run {
        // What a serve would fetch first (see `fetch_missing_lists`).
        let fetch_at_start: Vec<&str> = set
            .uncached
            .iter()
            .filter(|server| {
                set.servers
                    .iter()
                    .any(|d| d.trusted() && &d.server == *server)
            })
            .map(String::as_str)
            .collect();
        if ctx.format.structured() {
            let left: Vec<_> = plan
                .left_out
                .iter()
                .map(|l| json!({"name": l.name, "reason": l.reason}))
                .collect();
            let served: Vec<_> = plan.served.iter().map(|t| &t.tool).collect();
            let skills: Vec<_> = plan
                .skills
                .iter()
                .map(|s| {
                    json!({
                        "name": s.name,
                        "uri": s.skill_md_uri(),
                        "folder": s.folder.display().to_string(),
                    })
                })
                .collect();
            let mut out = json!({
                "tools": served,
                "skills": skills,
                "left_out": left,
                "fetch_at_start": fetch_at_start,
            });
            if let Some(summary) = &disclosed {
                out["disclosure"] = json!(summary);
            }
            output::json(&out)?;
        } else {
            for tool in &plan.served {
                output::line(match tool.definition() {
                    Some(definition) => format!(
                        "serve {} ({} on mcp server `{}`)",
                        tool.export_name, tool.registry_name, definition.server
                    ),
                    None => format!(
                        "serve {} ({}, run by the gateway)",
                        tool.export_name, tool.registry_name
                    ),
                })?;
            }
            for skill in &plan.skills {
                output::line(format!(
                    "serve Agent Skill {} ({} and the other files of {})",
                    skill.name,
                    skill.skill_md_uri(),
                    skill.folder.display()
                ))?;
            }
            for line in &left_out {
                output::line(format!("left out {line}"))?;
            }
            for server in &fetch_at_start {
                output::line(format!(
                    "fetch at start the tool list of mcp server `{server}` (none is cached), then serve its tools"
                ))?;
            }
            if let Some(summary) = &disclosed {
                for line in disclosure_lines(summary) {
                    output::line(line)?;
                }
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    // With stdio, stdout is the MCP channel from here on: everything for people goes to stderr.
    let mut note = format!(
        "agents mcp serve: serving {} tool(s) and {} Agent Skill(s) of {}",
        plan.served.len(),
        plan.skills.len(),
        skills.join(", ")
    );
    if !left_out.is_empty() {
        // One line in a client's log at every start: the first few reasons,
        // then how many more (`--dry-run` lists them all).
        let shown = left_out.len().min(LEFT_OUT_SHOWN);
        note.push_str(&format!(
            "; left out {}: {}",
            left_out.len(),
            left_out.get(..shown).unwrap_or_default().join("; ")
        ));
        if left_out.len() > shown {
            note.push_str(&format!(
                "; and {} more (`agents mcp serve --dry-run` lists them all)",
                left_out.len() - shown
            ));
        }
    }
    if let Some(summary) = &disclosed {
        note.push_str(&format!("; {}", disclosure_lines(summary).join("; ")));
    }
    output::note(&note);
    let gateway = match lock {
        // Every change the gateway sees is checked against the lock too.
        Some((lock, file)) => agents_gateway::Gateway::locked(plan, options, lock, file, &names),
        None => agents_gateway::Gateway::new(plan, options),
    }
    .with_local(local)
    .with_disclosure(disclose, &names, &descriptions)
    .map_err(|err| Failure::new(err.kind(), format!("mcp serve: {err}")))?;
    let follow = Some(agents_gateway::Follow {
        service: &ctx.service,
        names: &names,
    });
    match transport {
        Transport::Stdio => gateway
            .serve_stdio(follow)
            .await
            .map_err(|err| gateway_failure(&err))?,
        Transport::Http(addr, ..) => {
            // A socket per client connection besides the upstreams' pipes.
            if let Err(err) = agents_gateway::raise_open_files_limit() {
                tracing::debug!(error = %err, "mcp serve: cannot raise the limit of open files");
            }
            let server = gateway
                .bind_http(addr, access)
                .await
                .map_err(|err| gateway_failure(&err))?;
            output::note(&format!("agents mcp serve: listening on {}", server.url()));
            server.run(follow).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Before serving: fetches the tool list of every trusted server of `set`
/// that has none cached (a server just configured, imported or trusted),
/// so its tools are served rather than none. Said on stderr (with stdio,
/// stdout is the client's channel); a failure is a warning, and the server
/// is then left out, which the served `instructions` say. Returns whether
/// anything was fetched.
async fn fetch_missing_lists(
    ctx: &Context,
    set: &agents_registry::ServeSet,
    options: &FetchOptions,
) -> Result<bool, Failure> {
    let outcomes = ctx.service.fetch_missing_tool_lists(set, options).await?;
    for outcome in &outcomes {
        warn_drift(ctx, outcome);
        match &outcome.error {
            None => output::note(&format!(
                "agents mcp serve: fetched the tool list of mcp server `{}` (none was cached): {} tool(s)",
                outcome.server,
                outcome.tools.len()
            )),
            Some(_) => report_failure(ctx, outcome),
        }
        output::warn_all(ctx.format, outcome.rejected.iter().map(String::as_str));
    }
    Ok(outcomes.iter().any(|outcome| outcome.error.is_none()))
}

fn import(
    ctx: &Context,
    file: &std::path::Path,
    dry_run: bool,
    yes: bool,
) -> Result<ExitCode, Failure> {
    let (text, metadata) = files::read_text_as_read(file)?;
    let config = &ctx.settings.config_file.value;
    let provenance = agents_config::Provenance::of(file, metadata.as_ref());
    let report = agents_config::prepare_import(config, file, &text, &provenance)?;
    // What each server would run or reach, in full (`${VAR}` as written,
    // hidden characters escaped): what importing it consents to. A secret
    // written out is shown as `***`, its field named: output reaches logs.
    // (An untrusted server is shown unmasked by `mcp trust` before it runs.)
    let launches: Vec<agents_registry::Launch> = report
        .servers
        .iter()
        .map(|server| agents_registry::Launch::of(&agents_core::redact::mask_source(server)))
        .collect();
    let structured = ctx.format.structured();
    let can_ask = !structured && std::io::stdin().is_terminal();
    let write = !dry_run && !report.added.is_empty();
    if !structured {
        // With --dry-run stdout is the TOML; the rest goes to stderr.
        let show = |line: String| -> Result<(), Failure> {
            if dry_run {
                output::note(&line);
                Ok(())
            } else {
                output::line(line)
            }
        };
        if dry_run {
            output::raw(&report.shown)?;
        }
        for ((name, launch), server) in report.added.iter().zip(&launches).zip(&report.servers) {
            let name = agents_core::text::shorten(name, agents_core::text::MAX_ECHO_BYTES);
            show(format!("mcp server `{name}`:"))?;
            for line in launch.lines() {
                show(format!("  {line}"))?;
            }
            let secrets = agents_core::redact::literal_secret_fields(server);
            if !secrets.is_empty() {
                show(format!(
                    "  secrets written out are shown as `***`: `{}`",
                    secrets.join("`, `")
                ))?;
            }
        }
        if let (Some(why), false) = (&report.untrusted, report.added.is_empty()) {
            show(format!(
                "these servers are imported untrusted (`untrusted = true`): {why}; none of them \
                 starts until `agents mcp trust SERVER` shows it again and you trust it"
            ))?;
        }
    }
    if write && !yes {
        if !can_ask {
            return Err(Failure::new(
                "mcp_import_needs_yes",
                format!(
                    "nothing imported: outside a terminal `agents mcp import` asks no one; if you \
                     want the {} server(s) {}, run it again with `--yes`",
                    report.added.len(),
                    if structured {
                        "that `--dry-run` lists"
                    } else {
                        "shown above"
                    }
                ),
            ));
        }
        let question = format!(
            "add these {} mcp server(s) to {}{}? [y/N] ",
            report.added.len(),
            config.display(),
            if report.untrusted.is_some() {
                " as untrusted"
            } else {
                ""
            }
        );
        if !output::confirm(&question).map_err(Failure::io)? {
            return Err(Failure::new(
                "mcp_import_declined",
                "nothing imported: the answer was not `y`",
            ));
        }
    }
    if write {
        agents_config::write_import(config, &report)?;
    }
    if structured {
        let skipped: Vec<_> = report
            .skipped
            .iter()
            .map(|(server, reason)| json!({"server": server, "reason": reason}))
            .collect();
        let servers: Vec<_> = report
            .added
            .iter()
            .zip(&launches)
            .map(|(server, launch)| json!({"server": server, "launch": launch}))
            .collect();
        output::json(&json!({
            "source": report.source,
            "config_file": config,
            "added": report.added,
            "servers": servers,
            "untrusted": report.untrusted,
            "skipped": skipped,
            "written": write,
            "config": dry_run.then_some(&report.shown),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut lines = Vec::new();
    for server in &report.added {
        let verb = if dry_run { "would add" } else { "added" };
        let how = if report.untrusted.is_some() {
            " (untrusted)"
        } else {
            ""
        };
        lines.push(format!("{verb} mcp server `{server}`{how}"));
    }
    let mut skipped: Vec<String> = report
        .skipped
        .iter()
        .map(|(server, reason)| {
            let server = agents_core::text::shorten(server, agents_core::text::MAX_ECHO_BYTES);
            format!("skipped mcp server `{server}`: {reason}")
        })
        .collect();
    agents_core::text::cap_lines(&mut skipped, 20, |more| {
        format!("… and {more} more skipped (`--format json` lists them all)")
    });
    lines.append(&mut skipped);
    lines.push(if dry_run {
        format!(
            "dry run: {} server(s) would be added to {}",
            report.added.len(),
            config.display()
        )
    } else if report.added.is_empty() {
        format!("nothing added; {} unchanged", config.display())
    } else {
        format!(
            "wrote {} server(s) to {}",
            report.added.len(),
            config.display()
        )
    });
    // With --dry-run stdout is the TOML; the report goes to stderr.
    for line in lines {
        if dry_run {
            output::note(&line);
        } else {
            output::line(line)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn export(
    ctx: &Context,
    serve: &[String],
    client: crate::cli::ClientArg,
    target: Option<&std::path::Path>,
    bare_command: bool,
) -> Result<ExitCode, Failure> {
    for skill in serve {
        agents_core::SkillName::new(skill)?;
    }
    let format = match client {
        crate::cli::ClientArg::Claude => agents_config::ClientFormat::Claude,
        crate::cli::ClientArg::Vscode => agents_config::ClientFormat::VsCode,
    };
    let servers = &ctx.settings.mcp_servers;
    let serve_env = ctx.settings.serve_env();
    // The client starts the serve entry with its own PATH, which often lacks
    // where this program is (`~/.cargo/bin` is not on Claude Desktop's).
    let program = if bare_command || serve.is_empty() {
        None
    } else {
        match std::env::current_exe() {
            Ok(path) => Some(path.display().to_string()),
            Err(err) => {
                output::warn(
                    ctx.format,
                    &format!(
                        "cannot tell where this program is ({err}): the serve entry runs `agents` from the client's PATH"
                    ),
                );
                None
            }
        }
    };
    let command = program.as_deref().unwrap_or("agents");
    match target {
        Some(path) => {
            let export = agents_config::export_mcp_servers(
                servers, serve, command, &serve_env, format, false,
            );
            let text = serde_json::to_string_pretty(&export.value)
                .map_err(|err| Failure::new("internal", err.to_string()))?;
            agents_config::write_output_file(path, &format!("{text}\n"))?;
            output::line(format!(
                "wrote {} server(s) to {}",
                export
                    .value
                    .as_object()
                    .and_then(|o| o.values().next())
                    .and_then(|v| v.as_object())
                    .map_or(0, |o| o.len()),
                path.display()
            ))?;
        }
        None => {
            let export = agents_config::export_mcp_servers(
                servers, serve, command, &serve_env, format, true,
            );
            if !export.masked.is_empty() {
                // What is printed is not the whole file: a client given it
                // would start those servers with `***` for the value.
                output::warn(
                    ctx.format,
                    &format!(
                        "{} value(s) that look secret are masked as `***` ({}): a client given this output would start those servers with `***`; `-o FILE` writes them whole (mode 0600)",
                        export.masked.len(),
                        files::preview(&export.masked)
                    ),
                );
            }
            output::json(&export.value)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
