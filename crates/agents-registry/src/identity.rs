//! Who is writing: `user@host` of this process, recorded as `defined_by` of
//! the skills a service adds or updates (see
//! [`SkillRegistryService::with_identity`](crate::SkillRegistryService::with_identity)).

/// The name the password database gives this process's uid (a service,
/// a container or `env -i` may leave `$USER` and `$LOGNAME` unset).
#[cfg(unix)]
fn uid_name() -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|user| user.name)
}

#[cfg(not(unix))]
fn uid_name() -> Option<String> {
    None
}

/// `user@host` of whoever runs this process: `$USER`, else `$LOGNAME`, else
/// the uid's name, else `unknown`; `@host` when the host name can be read.
pub fn process_identity() -> String {
    let user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|name| !name.is_empty()))
        .or_else(uid_name)
        .unwrap_or_else(|| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    if host.is_empty() {
        user
    } else {
        format!("{user}@{host}")
    }
}
