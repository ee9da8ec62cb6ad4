//! The builtin tools a skill composes (`read_file`, `write_file`,
//! `edit_file`, `list_dir`, `glob`, `grep`, `shell`, `http_get`,
//! `git_status`, `git_diff`, `git_commit`): their specs, and an
//! [`Executor`] that runs them inside workspace [`Roots`], for the gateway
//! and the CLI alike.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agents_tools::{CancellationToken, Executor, Limits, Roots};
//! let executor = Executor::new(Roots::new(["."])?, Limits::default());
//! let output = executor
//!     .call("read_file", serde_json::json!({"path": "Cargo.toml"}), CancellationToken::new())
//!     .await?;
//! assert!(!output.is_error);
//! # Ok(()) }
//! ```
//!
//! What a call guarantees:
//! - paths resolve beneath a root, never through a link out of it
//!   ([`Roots`]); `..` above a root, an absolute path outside the roots, a
//!   link out, and writing a file with other hard links are refused with a
//!   [`ToolError::Refused`] naming the [`Rule`];
//! - writes replace a file whole (a temporary file in the same directory,
//!   renamed over it), keeping its mode;
//! - every process runs in a process group of its own, killed whole when
//!   the call times out, is cancelled, is dropped, or its shell exits;
//! - every result is at most [`Limits::max_output_bytes`] of text, and
//!   says what was cut.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod error;
mod files;
mod git;
mod http;
mod output;
mod policy;
mod process;
mod roots;
mod run;
mod sandbox;
mod search;
mod spec;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use error::{Rule, ToolError};
pub use policy::{Audit, AuditLog, CallContext, CallPolicy, NotEnforced, call};
pub use roots::{Roots, RootsError};
pub use run::{RunTool, TrustedRunTool};
pub use sandbox::Sandbox;
pub use spec::{Builtin, builtin_registry, builtin_tools};
pub use tokio_util::sync::CancellationToken;

use error::shown;

/// The bounds every call runs within. `Default` gives the documented values;
/// set fields on it to change them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Limits {
    /// The most text one result holds, in bytes, the note saying what was
    /// cut included (default 256 KiB).
    pub max_output_bytes: usize,
    /// A deadline for every call, whatever the tool (default none: each
    /// tool's own bounds apply).
    pub timeout: Option<Duration>,
    /// How long `shell` runs when the call gives no `timeout_s` (default
    /// 120 s); a `timeout_s` above [`timeout`](Self::timeout) gets that.
    pub shell_timeout: Duration,
    /// How long a git command runs (default 60 s).
    pub git_timeout: Duration,
    /// How long `http_get` waits for the whole answer (default 30 s).
    pub http_timeout: Duration,
    /// The most redirects `http_get` follows (default 5).
    pub max_redirects: usize,
    /// Lets `http_get` reach loopback, link-local and private addresses
    /// (an entry's `allow_private_network: true` override; default false).
    pub allow_private_network: bool,
    /// The largest file `edit_file` reads whole, in bytes (default 16 MiB).
    pub max_edit_bytes: u64,
    /// Threads `glob` and `grep` walk with (default 0: one a core).
    pub search_threads: usize,
    /// How the processes `shell` and `run` tools start are confined (an entry's
    /// `sandbox: strict`; default [`Sandbox::Off`]).
    pub sandbox: Sandbox,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_output_bytes: 256 * 1024,
            timeout: None,
            shell_timeout: Duration::from_secs(120),
            git_timeout: Duration::from_secs(60),
            http_timeout: Duration::from_secs(30),
            max_redirects: 5,
            allow_private_network: false,
            max_edit_bytes: 16 * 1024 * 1024,
            search_threads: 0,
            sandbox: Sandbox::Off,
        }
    }
}

/// What a tool gave back.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The text for the model, at most [`Limits::max_output_bytes`].
    pub text: String,
    /// The tool ran and reports a failure (a non-zero exit, an HTTP error
    /// status): answered as a result with `isError`, its text saying why.
    pub is_error: bool,
    /// Something was cut to fit the limit (the text's last line says what).
    pub truncated: bool,
    /// The exit code of the process a `shell`, git or `run` call ran
    /// (`None` when a signal ended it, or no process ran).
    pub exit_code: Option<i32>,
    /// A `run` tool's stdout as JSON its `output_schema` accepted (MCP's
    /// `structuredContent`).
    pub structured: Option<Value>,
}

impl ToolOutput {
    pub(crate) fn text(text: String, truncated: bool) -> Self {
        Self {
            text,
            is_error: false,
            truncated,
            exit_code: None,
            structured: None,
        }
    }
}

/// A tool a call can run: a builtin, or a custom or inline tool with a
/// `run`.
#[derive(Clone, Debug)]
pub enum Callable {
    Builtin(Builtin),
    Run(Arc<TrustedRunTool>),
}

impl Callable {
    /// The name audit lines and messages give it.
    pub fn name(&self) -> &str {
        match self {
            Callable::Builtin(builtin) => builtin.name(),
            Callable::Run(tool) => &tool.tool().name,
        }
    }

    /// Whether the tool writes (refused under `read_only`).
    pub fn writes(&self) -> bool {
        match self {
            Callable::Builtin(builtin) => builtin.writes(),
            Callable::Run(tool) => tool.tool().writes,
        }
    }
}

impl From<Builtin> for Callable {
    fn from(builtin: Builtin) -> Self {
        Callable::Builtin(builtin)
    }
}

impl From<TrustedRunTool> for Callable {
    fn from(tool: TrustedRunTool) -> Self {
        Callable::Run(Arc::new(tool))
    }
}

/// Runs the builtin tools inside its roots and limits. Cheap to clone;
/// every call is independent.
#[derive(Clone, Debug)]
pub struct Executor {
    roots: Roots,
    limits: Arc<Limits>,
    http: Arc<OnceLock<Result<reqwest::Client, String>>>,
}

impl Executor {
    pub fn new(roots: Roots, limits: Limits) -> Self {
        Self {
            roots,
            limits: Arc::new(limits),
            http: Arc::new(OnceLock::new()),
        }
    }

    /// The same executor with other roots (the client's `roots/list`
    /// changed, say).
    pub fn with_roots(&self, roots: Roots) -> Self {
        Self {
            roots,
            ..self.clone()
        }
    }

    /// The same roots with other limits (an entry's overrides).
    pub fn with_limits(&self, limits: Limits) -> Self {
        Self::new(self.roots.clone(), limits)
    }

    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Runs the builtin `tool` (`read_file` or `builtin/read_file`) with
    /// `args`. Cancelling `cancel` (or dropping the future) stops the call,
    /// killing any process it started.
    pub async fn call(
        &self,
        tool: &str,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let builtin =
            Builtin::from_name(tool).ok_or_else(|| ToolError::UnknownTool(shown(tool)))?;
        self.call_builtin(builtin, args, cancel).await
    }

    /// [`call`](Self::call) for a builtin already looked up.
    pub async fn call_builtin(
        &self,
        tool: Builtin,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        self.call_tool(&Callable::Builtin(tool), args, cancel).await
    }

    /// Runs a builtin or `run` tool with `args`, within the limits.
    pub async fn call_tool(
        &self,
        tool: &Callable,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let token = cancel.child_token();
        // However the call ends, the walkers it started on other threads
        // see it and stop.
        let _stop = token.clone().drop_guard();
        let work = async {
            match tool {
                Callable::Builtin(builtin) => self.dispatch(*builtin, args, &token).await,
                Callable::Run(run) => {
                    run::call(&self.roots, &self.limits, run.tool(), args, &token).await
                }
            }
        };
        let deadline = async {
            match self.limits.timeout {
                Some(after) => tokio::time::sleep(after).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            result = work => result,
            () = token.cancelled() => Err(ToolError::Cancelled),
            () = deadline => Err(ToolError::TimedOut(self.limits.timeout.unwrap_or_default())),
        }
    }

    async fn dispatch(
        &self,
        tool: Builtin,
        args: Value,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let limits = &self.limits;
        match tool {
            Builtin::ReadFile => {
                let args = parse(tool, args)?;
                let (roots, limits) = (self.roots.clone(), self.limits.clone());
                blocking(move || files::read_file(&roots, &limits, args)).await
            }
            Builtin::WriteFile => {
                let args = parse(tool, args)?;
                let roots = self.roots.clone();
                blocking(move || files::write_file(&roots, args)).await
            }
            Builtin::EditFile => {
                let args = parse(tool, args)?;
                let (roots, limits) = (self.roots.clone(), self.limits.clone());
                blocking(move || files::edit_file(&roots, &limits, args)).await
            }
            Builtin::ListDir => {
                let args = parse(tool, args)?;
                let (roots, limits) = (self.roots.clone(), self.limits.clone());
                blocking(move || files::list_dir(&roots, &limits, args)).await
            }
            Builtin::Glob => {
                let args = parse(tool, args)?;
                let (roots, limits, cancel) =
                    (self.roots.clone(), self.limits.clone(), cancel.clone());
                blocking(move || search::glob(&roots, &limits, args, &cancel)).await
            }
            Builtin::Grep => {
                let args = parse(tool, args)?;
                let (roots, limits, cancel) =
                    (self.roots.clone(), self.limits.clone(), cancel.clone());
                blocking(move || search::grep(&roots, &limits, args, &cancel)).await
            }
            Builtin::Shell => process::shell(&self.roots, limits, parse(tool, args)?, cancel).await,
            Builtin::HttpGet => {
                let args = parse(tool, args)?;
                let client = self
                    .http
                    .get_or_init(|| http::client(limits))
                    .as_ref()
                    .map_err(|err| ToolError::Failed(err.clone()))?;
                http::get(client, limits, args, cancel).await
            }
            Builtin::GitStatus => {
                git::status(&self.roots, limits, parse(tool, args)?, cancel).await
            }
            Builtin::GitDiff => git::diff(&self.roots, limits, parse(tool, args)?, cancel).await,
            Builtin::GitCommit => {
                git::commit(&self.roots, limits, parse(tool, args)?, cancel).await
            }
        }
    }
}

/// `args` as the tool's argument type; absent arguments (`null`) are an
/// empty object.
fn parse<T: DeserializeOwned>(tool: Builtin, args: Value) -> Result<T, ToolError> {
    let args = if args.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        args
    };
    serde_json::from_value(args).map_err(|err| ToolError::InvalidArguments {
        tool: tool.name().into(),
        message: agents_core::text::bounded_message(&err.to_string()),
    })
}

/// Runs file work on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work).await.map_err(|_| {
        ToolError::Failed("the tool's worker thread stopped before it finished".into())
    })?
}
