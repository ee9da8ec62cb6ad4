//! Hints as command lines: each [`Hint`] a library message holds, as the
//! `agents …` command that does it. Installed once, as the process starts
//! ([`install`]); library messages then show these.

use agents_core::Hint;

/// Words every hint as its command line from now on.
pub fn install() {
    agents_core::hint::set_renderer(command_line);
}

/// The command line that does what `hint` advises. A server name starting
/// with `-` goes after `--`, so that it is not read as an option (server
/// names need no other quoting: [`agents_core::validate_server_name`]).
pub fn command_line(hint: &Hint) -> String {
    match hint {
        Hint::Refresh { server } if server.starts_with('-') => {
            format!("agents mcp refresh -- {server}")
        }
        Hint::Refresh { server } => format!("agents mcp refresh {server}"),
        Hint::Trust { server, digest } if server.starts_with('-') => {
            format!("agents mcp trust --digest {digest} -- {server}")
        }
        Hint::Trust { server, digest } => format!("agents mcp trust {server} --digest {digest}"),
        Hint::ReviewTrust => "agents mcp trust".to_owned(),
        Hint::Discover => "agents skill discover".to_owned(),
        Hint::DiscoverPaths => "agents skill discover --paths".to_owned(),
        Hint::LockAgain => "agents skill lock".to_owned(),
        Hint::DiffLock { lock } => format!("agents skill diff SKILL --lock {lock}"),
        Hint::CreateRegistry => "agents db init".to_owned(),
        Hint::AddSkill => "agents skill add".to_owned(),
        Hint::ListBuiltins => "agents tool list --source builtin".to_owned(),
        Hint::ValidateSkills => "agents skill validate".to_owned(),
        Hint::GetSkill => "agents skill get".to_owned(),
        Hint::ShowSecrets => "agents skill get --show-secrets".to_owned(),
        // A hint added to the library before its command here.
        other => other.describe(),
    }
}

/// The command that fetches `server`'s tool list again.
pub fn refresh(server: &str) -> String {
    command_line(&Hint::Refresh {
        server: server.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_named_like_an_option_goes_after_two_dashes() {
        assert_eq!(refresh("gh"), "agents mcp refresh gh");
        assert_eq!(refresh("-x"), "agents mcp refresh -- -x");
        let trust = |server: &str| {
            command_line(&Hint::Trust {
                server: server.to_owned(),
                digest: "D".to_owned(),
            })
        };
        assert_eq!(trust("gh"), "agents mcp trust gh --digest D");
        assert_eq!(trust("-x"), "agents mcp trust --digest D -- -x");
        let diff = command_line(&Hint::DiffLock {
            lock: "skills.lock".into(),
        });
        assert_eq!(diff, "agents skill diff SKILL --lock skills.lock");
    }
}
