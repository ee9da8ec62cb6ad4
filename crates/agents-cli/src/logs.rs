//! Log lines on stderr: which targets at which `-v`, and the redaction every
//! line gets on its way out.

use std::io::{IsTerminal, Write};

use crate::cli;

/// The crates of this workspace, as tracing targets (the binary is `agents`).
const OWN_TARGETS: [&str; 10] = [
    "agents",
    "agents_cli",
    "agents_config",
    "agents_core",
    "agents_definition",
    "agents_discovery",
    "agents_gateway",
    "agents_mcp",
    "agents_registry",
    "agents_store",
];

/// Whether stderr gets colour: `--color always`, or `auto` on a terminal
/// without `NO_COLOR`.
pub(crate) fn colour(color: cli::ColorArg) -> bool {
    match color {
        cli::ColorArg::Always => true,
        cli::ColorArg::Never => false,
        cli::ColorArg::Auto => {
            std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    }
}

/// Log lines on stderr. Without `-v` only this tool's own warnings are
/// shown (dependencies are off); `-v` adds dependencies' warnings and our
/// info, `-vv` everything at debug. `CLEVERAGENTS_LOG` (an `EnvFilter`
/// directive such as `debug` or `sqlx=info`) replaces all of that. Colour
/// as [`colour`] says; under `--format json` every line is a JSON object.
/// Every line goes through [`Redacted`] on its way.
pub(crate) fn init(verbose: u8, quiet: bool, format: cli::Format, color: cli::ColorArg) {
    let own = |level: &str| {
        OWN_TARGETS
            .iter()
            .map(|target| format!("{target}={level}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let default = match verbose {
        // `--quiet` drops warnings, log lines too (`mcp serve`'s notes).
        0 if quiet => format!("off,{}", own("error")),
        0 => format!("off,{}", own("warn")),
        1 => format!("warn,{}", own("info")),
        // Not the HTTP stack's debug lines: they name each request's URL,
        // whose query may hold a token (`CLEVERAGENTS_LOG` can still ask).
        _ => "debug,reqwest=info,hyper=info,hyper_util=info,h2=info".to_owned(),
    };
    let asked = std::env::var("CLEVERAGENTS_LOG").ok();
    let (filter, refused) = match asked.as_deref().map(tracing_subscriber::EnvFilter::try_new) {
        Some(Ok(filter)) => (filter, None),
        Some(Err(err)) => (tracing_subscriber::EnvFilter::new(&default), Some(err)),
        None => (tracing_subscriber::EnvFilter::new(&default), None),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(Redacted {
            json: format == cli::Format::Json,
        })
        .with_ansi(colour(color))
        .without_time();
    let _ = if format == cli::Format::Json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .try_init()
    } else {
        builder.event_format(Plain).try_init()
    };
    if let Some(err) = refused {
        tracing::warn!(
            "`CLEVERAGENTS_LOG` is not a log filter ({err}); the default is used (`warn`, `info` with `-v`, `debug` with `-vv`)"
        );
    }
}

/// A log line as the CLI's own messages look: `warning: …`, `error: …`
/// (`info`, `debug`, `trace` likewise), then a dependency's target, then the
/// event's fields; the level coloured when the output is.
struct Plain;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        use tracing::Level;
        let (word, colour) = match *event.metadata().level() {
            Level::ERROR => ("error", "31"),
            Level::WARN => ("warning", "33"),
            Level::INFO => ("info", "32"),
            Level::DEBUG => ("debug", "34"),
            Level::TRACE => ("trace", "35"),
        };
        if writer.has_ansi_escapes() {
            write!(writer, "\u{1b}[{colour}m{word}\u{1b}[0m: ")?;
        } else {
            write!(writer, "{word}: ")?;
        }
        // A dependency's line names it (`-v` and up show them).
        let target = event.metadata().target();
        if !OWN_TARGETS.iter().any(|own| {
            target
                .strip_prefix(own)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        }) {
            write!(writer, "{target}: ")?;
        }
        // Fields without colour codes: `redact_text` must see `token=…` as
        // written, not with escape codes between the name and the `=`.
        let mut fields = String::new();
        ctx.field_format().format_fields(
            tracing_subscriber::fmt::format::Writer::new(&mut fields),
            event,
        )?;
        writeln!(writer, "{fields}")
    }
}

/// Where log lines go: stderr, each line through
/// [`agents_core::redact::redact_text`] first. Our own lines are redacted
/// where they are made, but a dependency's may quote a URL whole with its
/// token (rmcp's transport worker logs the `reqwest::Error` of a failed
/// connection, query string and all, at `error`, so `-v` showed it). Under
/// `--format json` each string of the line's object is redacted, so the
/// line stays JSON.
#[derive(Clone, Copy)]
struct Redacted {
    json: bool,
}

impl tracing_subscriber::fmt::MakeWriter<'_> for Redacted {
    type Writer = RedactedLine;

    fn make_writer(&self) -> Self::Writer {
        RedactedLine {
            json: self.json,
            text: Vec::new(),
        }
    }
}

/// One event's line, collected and written redacted when dropped (the
/// formatter makes a writer per event).
struct RedactedLine {
    json: bool,
    text: Vec<u8>,
}

impl Write for RedactedLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.text);
        let shown = if self.json {
            redact_json_line(&text)
        } else {
            agents_core::redact::redact_text(&text)
        };
        let _ = std::io::stderr().lock().write_all(shown.as_bytes());
    }
}

/// A JSON log line with each string value redacted; a line that is not
/// JSON is redacted as text.
fn redact_json_line(line: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(line.trim_end()) {
        Ok(mut value) => {
            agents_core::redact::mask_strings(&mut value, &|text| {
                Some(agents_core::redact::redact_text(text))
            });
            format!("{value}\n")
        }
        Err(_) => agents_core::redact::redact_text(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_stay_json_with_their_secrets_masked() {
        let line = r#"{"level":"ERROR","message":"fatal: Error { url: \"http://h/mcp?token=s3cret\" }","n":[1,"https://u:pw@h/"]}"#;
        let shown = redact_json_line(&format!("{line}\n"));
        assert!(shown.ends_with('\n'));
        let value: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(
            value["message"],
            "fatal: Error { url: \"http://h/mcp?token=***\" }"
        );
        assert_eq!(value["n"][1], "https://u:***@h/");
        assert!(!shown.contains("s3cret") && !shown.contains("pw@"));
        assert_eq!(
            redact_json_line("not json token=x\n"),
            "not json token=***\n"
        );
    }
}
