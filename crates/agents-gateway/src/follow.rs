//! Following the registry ([`Gateway::follow`]): the change stamp is polled
//! every [`POLL_EVERY`]; when it moved, or an upstream sent
//! `notifications/tools/list_changed`, the skills are resolved again and the
//! clients told when the served list changed. Under a lock
//! ([`Gateway::locked`]) a re-resolution that differs from it (drift) is not
//! served: the last matching set stays, the difference is logged once, and
//! calls of the entries that differ are refused until it matches again.

use std::collections::HashMap;
use std::time::Duration;

use agents_core::{LockDiff, Lockfile, SkillName};
use agents_registry::{McpDefinition, McpRefresh, ServeSet, SkillRegistryService};
use rmcp::service::{Peer, RoleServer, SubscriptionSink};

use crate::{Gateway, ServedTool, Serving, lock};

/// The lock a gateway serves under, and what the last check refused.
pub(crate) struct Locked {
    pub(crate) lock: Lockfile,
    /// The lock file as messages name it.
    pub(crate) file: String,
    pub(crate) drift: std::sync::Mutex<Drift>,
    /// Per entry of the served skills, the `upstream` digests the lock
    /// records for it (of an Agent Skill, its folder's files): a served folder is
    /// checked against them at every request, since its files are read
    /// then, not when the skills were resolved.
    pub(crate) folders: HashMap<String, Vec<String>>,
    /// The Agent Skills (entry names) refused for their folder now, each
    /// logged once when refused and once when it matches again.
    pub(crate) refused_folders: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The served Agent Skills (entry names) withheld when the clients were
    /// last told the resources ([`Gateway::withheld_changed`]).
    pub(crate) withheld: std::sync::Mutex<Vec<String>>,
}

/// How the registry differs from the lock now (empty while it matches).
#[derive(Default)]
pub(crate) struct Drift {
    /// The differences last written to the log: each change is written once.
    pub(crate) reported: Vec<LockDiff>,
    /// Entries (registry names) that differ from the lock, with the skill
    /// and what changed: their calls are refused.
    pub(crate) entries: HashMap<String, String>,
}

/// Entry lines of one skill's difference from the lock the log shows.
const MAX_DRIFT_LINES: usize = 20;

/// How often [`Follow`] polls the registry's change stamp.
pub const POLL_EVERY: Duration = Duration::from_secs(1);

/// What to re-resolve when the registry changes: the service and the skill
/// names being served.
#[derive(Debug)]
pub struct Follow<'a> {
    /// The registry.
    pub service: &'a SkillRegistryService,
    /// The skills served.
    pub names: &'a [SkillName],
}

impl Gateway {
    /// Sends `notifications/tools/list_changed` to every connected client
    /// (legacy sessions and `subscriptions/listen` streams).
    pub async fn notify_tools_changed(&self) {
        for peer in self.peers() {
            if let Err(err) = peer.notify_tool_list_changed().await {
                tracing::debug!(error = %err, "a client did not take notifications/tools/list_changed");
            }
        }
        for sink in self.listeners() {
            if let Err(err) = sink.notify_tool_list_changed().await {
                tracing::debug!(error = %err, "a subscription did not take notifications/tools/list_changed");
            }
        }
    }

    /// Sends `notifications/resources/list_changed` to every connected client.
    pub async fn notify_resources_changed(&self) {
        for peer in self.peers() {
            if let Err(err) = peer.notify_resource_list_changed().await {
                tracing::debug!(error = %err, "a client did not take notifications/resources/list_changed");
            }
        }
        for sink in self.listeners() {
            if let Err(err) = sink.notify_resource_list_changed().await {
                tracing::debug!(error = %err, "a subscription did not take notifications/resources/list_changed");
            }
        }
    }

    /// Legacy sessions still open.
    fn peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = lock(&self.shared.peers);
        peers.retain(|peer| !peer.is_transport_closed());
        peers.clone()
    }

    /// Open `subscriptions/listen` streams.
    fn listeners(&self) -> Vec<SubscriptionSink> {
        lock(&self.shared.listeners)
            .iter()
            .map(|(_, sink)| sink.clone())
            .collect()
    }

    /// Resolves the skills again; on success replaces the served set and tells the
    /// clients when the served list changed, on failure keeps the last good
    /// served set and logs why. Under a lock ([`Gateway::locked`]) a resolution
    /// that differs from it is not served: the served set that last matched stays
    /// (less the tools of servers no longer trusted), the difference is
    /// logged once, and calls of the entries that differ are refused.
    pub async fn reload(&self, follow: &Follow<'_>) {
        let resolved = match &self.shared.locked {
            Some(locked) => follow
                .service
                .locked_serve_set(follow.names, &locked.lock)
                .await
                .map(|locked| (locked.value, locked.diffs)),
            None => follow
                .service
                .serve_set(follow.names)
                .await
                .map(|set| (set, Vec::new())),
        };
        let (set, diffs) = match resolved {
            Ok(resolved) => resolved,
            Err(err) => {
                tracing::warn!(
                    "mcp serve: the registry changed but the skills no longer resolve \
                     ({err}); still serving the last good tool list"
                );
                return;
            }
        };
        let serving = match &self.shared.locked {
            Some(locked) if diffs.iter().any(|d| !d.is_clean()) => {
                self.refuse_drift(locked, diffs);
                self.kept_serving(&set)
            }
            Some(locked) => {
                matches_again(locked);
                Serving::decide(&set, self.shared.options.timeout)
            }
            None => Serving::decide(&set, self.shared.options.timeout),
        };
        let disclosed = match self.disclosure_for(follow, &serving).await {
            Ok(disclosed) => disclosed,
            Err(err) => {
                tracing::warn!(
                    "mcp serve: the registry changed but its tools cannot be disclosed ({err}); \
                     still serving the last good tool list"
                );
                return;
            }
        };
        let (tools_changed, mut skills_changed) = self.replace_serving_changes(serving);
        let tools_changed = self.install_disclosure(disclosed) | tools_changed;
        // An Agent Skill refused (or served again) leaves (or rejoins) the
        // resources listed.
        skills_changed |= self.withheld_changed().await;
        self.stop_unserved().await;
        if skills_changed {
            self.notify_resources_changed().await;
        }
        if tools_changed {
            tracing::warn!(
                "mcp serve: the tool list changed ({} tool(s)); telling the client(s)",
                self.serving().served.len()
            );
            self.notify_tools_changed().await;
        }
    }

    /// The served set that last matched the lock, less the tools whose server
    /// `set` no longer uses or this user no longer trusts: trust is not in
    /// the lock, and `agents mcp untrust` stops a server whatever else changed.
    fn kept_serving(&self, set: &ServeSet) -> Serving {
        let mut kept = Serving::clone(&self.serving());
        kept.served.retain(|tool| {
            tool.definition().is_none_or(|definition| {
                set.servers
                    .iter()
                    .any(|d| d.digest == definition.digest && d.trusted())
            })
        });
        kept
    }

    /// Records the entries of `diffs` (which differ from the lock) as
    /// refused, and logs the difference unless it is the one logged last.
    fn refuse_drift(&self, locked: &Locked, diffs: Vec<LockDiff>) {
        let differing: Vec<LockDiff> = diffs.into_iter().filter(|d| !d.is_clean()).collect();
        let mut entries: HashMap<String, String> = HashMap::new();
        for diff in &differing {
            let names = diff
                .changed
                .iter()
                .map(|c| &c.name)
                .chain(&diff.removed)
                .chain(&diff.added);
            for name in names {
                if let Some(what) = diff.entry_change(name) {
                    entries
                        .entry(name.clone())
                        .or_insert_with(|| format!("skill `{}`: {what}", diff.skill));
                }
            }
        }
        let mut drift = lock(&locked.drift);
        drift.entries = entries;
        if drift.reported == differing {
            return;
        }
        let report: String = differing
            .iter()
            .map(|diff| diff.to_text(&locked.file, Some(MAX_DRIFT_LINES)))
            .collect();
        tracing::warn!(
            "mcp serve: the registry no longer matches the lock `{}`: still serving the tool list \
             that matched it (clients are not told of the change), and calls of the entries that \
             differ are refused until it matches again\n{}",
            locked.file,
            report.trim_end()
        );
        drift.reported = differing;
    }

    /// Why a call of `served` is refused: its entry differs from the lock.
    pub(crate) fn refused(&self, served: &ServedTool) -> Option<String> {
        let locked = self.shared.locked.as_ref()?;
        let drift = lock(&locked.drift);
        let what = drift.entries.get(&served.registry_name)?;
        Some(format!(
            "tool `{}` (`{}`) is refused: it no longer matches the lock `{}` ({}), so the server \
             behind it is not what was reviewed; review the change (`{}`), then lock again or \
             undo it",
            served.export_name,
            agents_core::text::escape_control(&served.registry_name),
            locked.file,
            agents_core::text::escape_control(what),
            agents_core::Hint::DiffLock {
                lock: locked.file.clone(),
            },
        ))
    }

    /// Follows the registry forever (see the crate docs): polls the change
    /// stamp every [`POLL_EVERY`] and reloads when it moved or an upstream
    /// said its tools changed (refreshing that server's cache first).
    pub async fn follow(&self, follow: &Follow<'_>) {
        // No stamp yet: the first tick resolves once more, so a change made
        // between the first resolution and now is not missed.
        let mut last: Option<String> = None;
        // What the clients were shown so far.
        self.withheld_changed().await;
        loop {
            tokio::select! {
                () = tokio::time::sleep(POLL_EVERY) => {}
                () = self.shared.upstream_notify.notified() => {
                    let mut changed = std::mem::take(&mut *lock(&self.shared.upstream_changed));
                    changed.sort_by(|a, b| a.digest.cmp(&b.digest));
                    changed.dedup_by(|a, b| a.digest == b.digest);
                    for definition in &changed {
                        self.refresh_upstream(follow, definition).await;
                    }
                }
            }
            match follow.service.change_stamp().await {
                Ok(stamp) if last.as_ref() == Some(&stamp) => {}
                Ok(stamp) => {
                    last = Some(stamp);
                    self.reload(follow).await;
                }
                Err(err) => tracing::warn!("mcp serve: cannot read the registry: {err}"),
            }
            // A folder that drifts from the lock, or matches it again, while
            // the registry stays the same: the clients list resources again.
            if self.withheld_changed().await {
                self.notify_resources_changed().await;
            }
        }
    }

    /// Under a lock, whether the served Agent Skills whose files are
    /// withheld ([`Self::folder_check`]: a folder, or an entry a
    /// re-resolution recorded, differing from the lock) are others than when
    /// last asked; always false without a lock. Asked after every
    /// re-resolution and at every poll, so a folder rug-pulled while the
    /// registry is unchanged is heard of without waiting for a request
    /// (unchanged files are not hashed again), and the clients are told once.
    pub(crate) async fn withheld_changed(&self) -> bool {
        let Some(locked) = self.shared.locked.as_ref() else {
            return false;
        };
        let checked = self
            .off_runtime(|gateway| {
                gateway
                    .serving()
                    .skills
                    .iter()
                    .filter(|skill| gateway.folder_check(skill).is_err())
                    .map(|skill| skill.entry.clone())
                    .collect::<Vec<String>>()
            })
            .await;
        let Ok(now) = checked else {
            // The check could not run: nothing is known to have changed.
            return false;
        };
        let mut told = lock(&locked.withheld);
        if *told == now {
            return false;
        }
        *told = now;
        true
    }

    /// Lists the tools of a server that said they changed, on the gateway's
    /// own session (a fresh process might not have the tools this one
    /// added), and stores them as its cache; the next stamp check then
    /// resolves again. Without a live session it is fetched like `mcp refresh`.
    async fn refresh_upstream(&self, follow: &Follow<'_>, definition: &McpDefinition) {
        let slot = self
            .shared
            .upstreams
            .lock()
            .await
            .get(&definition.digest)
            .cloned();
        let listed = match slot {
            Some(slot) => {
                let mut upstream = slot.lock().await;
                match upstream.as_mut() {
                    Some(running) => {
                        if running.is_closed() {
                            None
                        } else {
                            Some(running.list_tools().await)
                        }
                    }
                    None => None,
                }
            }
            None => None,
        };
        let outcome = match listed {
            Some(Ok(fetched)) => follow
                .service
                .refresh_mcp_from(definition, fetched)
                .await
                .map(Some),
            Some(Err(err)) => {
                tracing::warn!(
                    "mcp serve: mcp server `{}` changed its tools but did not list them: {err}",
                    definition.server
                );
                return;
            }
            None => follow
                .service
                .refresh_mcp(
                    std::slice::from_ref(&definition.server),
                    &self.shared.options,
                )
                .await
                .map(|outcomes| outcomes.into_iter().find(|o| o.digest == definition.digest)),
        };
        match outcome {
            Ok(outcome) => {
                // The list replaced the cache: its drift is told as
                // `mcp refresh` tells it.
                for warning in outcome.iter().flat_map(McpRefresh::drift_warnings) {
                    tracing::warn!(
                        "mcp serve: {}",
                        agents_core::text::escape_control(&warning.message)
                    );
                }
                if let Some(error) = outcome.and_then(|o| o.error) {
                    tracing::warn!(
                        "mcp serve: mcp server `{}` changed its tools but could not be refreshed: {error}",
                        definition.server
                    );
                }
            }
            Err(err) => tracing::warn!("mcp serve: refresh after a tool change failed: {err}"),
        }
    }
}

/// The registry matches the lock: calls are no longer refused, and a
/// difference logged before is said to be over.
fn matches_again(locked: &Locked) {
    let mut drift = lock(&locked.drift);
    if !drift.reported.is_empty() {
        tracing::warn!(
            "mcp serve: the registry matches the lock `{}` again; serving it",
            locked.file
        );
    }
    *drift = Drift::default();
}
