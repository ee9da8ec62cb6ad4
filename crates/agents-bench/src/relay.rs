//! `agents-bench relay -- CMD [ARGS...]`: the floor of any stdio proxy.
//!
//! It starts `CMD` and copies bytes both ways, stdin to the child and the
//! child's stdout to stdout, one blocking thread each, parsing nothing. A
//! call through it pays what every stdio proxy pays whatever it does with
//! the messages: a second pipe round trip (two more process wake-ups) on
//! top of the client's own. `bench/run --only gateway` measures it beside
//! the upstream served directly and the gateway, so the gateway's cost reads
//! against what is physically left to save.

use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};

/// Copies `from` to `to` until `from` ends, flushing after each read, so a
/// message is passed on as soon as it arrives.
fn pump(mut from: impl Read, mut to: impl Write) {
    let mut buf = vec![0_u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let Some(chunk) = buf.get(..n) else { return };
        if to.write_all(chunk).and_then(|()| to.flush()).is_err() {
            return;
        }
    }
}

pub fn run(args: &[String]) -> ExitCode {
    let command = match args.split_first() {
        Some((dashes, rest)) if dashes == "--" => rest,
        _ => args,
    };
    let Some((program, rest)) = command.split_first() else {
        let _ = writeln!(std::io::stderr(), "error: `relay` needs `-- CMD [ARGS...]`");
        return ExitCode::from(2);
    };
    let mut child = match Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: `{program}` did not start: {err}");
            return ExitCode::from(2);
        }
    };
    let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
        return ExitCode::from(2);
    };
    // stdin closing (the client left) closes the child's stdin, which ends it.
    std::thread::spawn(move || pump(std::io::stdin().lock(), child_in));
    pump(child_out, std::io::stdout().lock());
    match child.wait() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}
