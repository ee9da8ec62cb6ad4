//! One call of a builtin or `run` tool outside the gateway: which tool a
//! name means, the policy the skill's entry puts on it, and whether this
//! user trusts what it would start.

use agents_core::{SkillName, ToolSource, ToolSpec};
use agents_tools::{Builtin, CallContext, CallPolicy, Callable, RunTool, TrustedRunTool};

use crate::SkillRegistryService;
use crate::error::{Hint, ServiceError};
use crate::trust::{TrustedRun, describe_run};

/// A tool ready to call: what runs, under which policy, for whom.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PreparedCall {
    /// The builtin or `run` tool.
    pub tool: Callable,
    /// The entry's resolved overrides as a policy (the default without a
    /// skill).
    pub policy: CallPolicy,
    /// The skill and include path, for the audit line (`approved` false:
    /// the caller asks).
    pub context: CallContext,
}

/// A custom tool's `run` as `tool trust` shows it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunReview {
    /// The tool and its `run`.
    pub tool: RunTool,
    /// The digest trust is keyed by.
    pub digest: String,
    /// This user trusts it already.
    pub trusted: bool,
}

impl SkillRegistryService {
    /// Prepares a call of `name`: a builtin (`read_file` or
    /// `builtin/read_file`), or a custom or inline tool with a `run`. With
    /// `skill`, the tool is looked up in the skill's resolved set (an inline
    /// tool only there) and its entry's overrides become the policy.
    ///
    /// A `run` starts only when this user trusts its digest
    /// ([`ServiceError::UntrustedRun`]); a tool with no `run`, an MCP tool
    /// or an Agent Skill is [`ServiceError::NotCallable`].
    pub async fn prepare_call(
        &self,
        name: &str,
        skill: Option<&str>,
    ) -> Result<PreparedCall, ServiceError> {
        let (spec, policy, context) = match skill {
            Some(skill) => {
                let skill: SkillName = self.skill_name(skill).await?;
                let set = self.tools(&skill).await?;
                let wanted = Builtin::from_name(name);
                let entry = set
                    .entries
                    .iter()
                    .find(|entry| {
                        entry.name == name
                            || (wanted.is_some() && Builtin::from_name(&entry.name) == wanted)
                    })
                    .ok_or_else(|| ServiceError::NotInSkill {
                        skill: skill.to_string(),
                        name: name.to_owned(),
                    })?;
                let spec = entry
                    .tool
                    .clone()
                    .ok_or_else(|| ServiceError::NotCallable {
                        name: name.to_owned(),
                        reason: "the entry has no tool in the catalogue".into(),
                    })?;
                let context = CallContext {
                    skill: Some(skill.to_string()),
                    include_path: Some(entry.include_path.to_string()),
                    approved: false,
                };
                (spec, CallPolicy::from_overrides(&entry.overrides), context)
            }
            None => {
                let spec = match Builtin::from_name(name) {
                    Some(builtin) => ToolSpec::new(builtin.name(), "", ToolSource::Builtin),
                    None => self.get_tool(name).await?,
                };
                (spec, CallPolicy::default(), CallContext::default())
            }
        };
        let tool = self.callable(&spec)?;
        Ok(PreparedCall {
            tool,
            policy,
            context,
        })
    }

    /// What calling `spec` runs, if this user may call it here: a builtin,
    /// or a custom or inline tool whose `run` this user trusts (the gateway
    /// asks this of each entry it would serve).
    pub fn callable(&self, spec: &ToolSpec) -> Result<Callable, ServiceError> {
        let refuse = |reason: &str| ServiceError::NotCallable {
            name: spec.name.clone(),
            reason: reason.to_owned(),
        };
        match spec.source {
            ToolSource::Builtin => Builtin::from_name(&spec.name)
                .map(Callable::Builtin)
                .ok_or_else(|| ServiceError::ToolNotFound(spec.name.clone(), Hint(None))),
            ToolSource::Mcp => Err(refuse(
                "it is served by its MCP server, through the gateway",
            )),
            ToolSource::AgentSkills => Err(refuse(
                "an Agent Skill is instructions to read, not a program to run",
            )),
            ToolSource::Custom => {
                let tool = match RunTool::from_spec(spec) {
                    None => return Err(refuse("its definition has no `run`")),
                    Some(Err(err)) => return Err(refuse(&err)),
                    Some(Ok(tool)) => tool,
                };
                let untrusted = |tool: &RunTool| ServiceError::UntrustedRun {
                    name: spec.name.clone(),
                    launch: describe_run(&tool.spec),
                    digest: tool.digest(),
                };
                // The one decision: a `run` starts only with this user's
                // consent to that very `run` (`agents-trust`).
                let Some(consent) = TrustedRun::consented(self.trust(), &tool.spec) else {
                    return Err(untrusted(&tool));
                };
                let error = untrusted(&tool);
                TrustedRunTool::new(tool, &consent)
                    .map(Callable::from)
                    .ok_or(error)
            }
        }
    }

    /// A custom tool's `run`, its digest, and whether this user trusts it:
    /// what is shown before [`Self::trust_run`].
    pub async fn run_review(&self, name: &str) -> Result<RunReview, ServiceError> {
        let spec = self.get_tool(name).await?;
        let tool = match RunTool::from_spec(&spec) {
            Some(Ok(tool)) => tool,
            Some(Err(reason)) => {
                return Err(ServiceError::NotCallable {
                    name: spec.name,
                    reason,
                });
            }
            None => {
                return Err(ServiceError::NotCallable {
                    name: spec.name,
                    reason: "its definition has no `run`".into(),
                });
            }
        };
        let digest = tool.digest();
        Ok(RunReview {
            trusted: self.trust().is_trusted(&digest),
            tool,
            digest,
        })
    }

    /// Trusts `tool`'s `run` (as a review showed it) for this user.
    pub fn trust_run(&self, tool: &RunTool, reason: &str) -> Result<bool, ServiceError> {
        let added =
            self.trust_runs_of(std::iter::once((tool.name.as_str(), &tool.spec)), reason)?;
        Ok(!added.is_empty())
    }

    /// Trusts the `run` of each of `tools` (from a file this user chose);
    /// returns the names newly trusted.
    pub fn trust_runs_of<'t>(
        &self,
        tools: impl IntoIterator<Item = (&'t str, &'t agents_core::RunSpec)>,
        reason: &str,
    ) -> Result<Vec<String>, ServiceError> {
        Ok(self
            .trust()
            .trust_runs(tools, reason)?
            .into_iter()
            .map(str::to_owned)
            .collect())
    }
}
