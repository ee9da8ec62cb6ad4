//! The MCP handler: rmcp's [`rmcp::ServerHandler`] for the gateway, which
//! answers each request from the served set ([`crate::Serving`]), the call
//! path ([`crate::calls`]) and the skill files, and keeps the connected
//! clients to tell of changes.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, GetSkillRequestParams,
    GetSkillResult, Implementation, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext};
use serde_json::{Value, json};

use crate::serving::instructions;
use crate::{Follow, Gateway, GatewayError, SkillFileError, lock, skills, stdio};

impl rmcp::ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_skills()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "agents-gateway",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions(&self.serving()) + &self.disclosure_instructions())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut peers = lock(&self.shared.peers);
        // Closed sessions were dropped only when a notification went out, so
        // a gateway nothing changed under kept every session it ever had
        // (10 KB each). Pruned at each power of two: linear in all.
        if peers.len() >= 64 && peers.len().is_power_of_two() {
            peers.retain(|peer| !peer.is_transport_closed());
        }
        peers.push(context.peer);
    }

    /// The client's roots changed: they are listed again at its next
    /// builtin call.
    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.shared.client_roots.changed(&context.peer);
    }

    /// 2026-07-28 clients ask for change notifications with
    /// `subscriptions/listen`: the two list changes the gateway sends.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .resources_list_changed()
                .build(),
        )
    }

    /// Keeps the stream's sink until the client cancels it or hangs up.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let id = self
            .shared
            .next_listener
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.shared.listeners).push((id, context.sink().clone()));
        context.cancelled().await;
        lock(&self.shared.listeners).retain(|(other, _)| *other != id);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Tool> = self
            .list_for(Some(&context.peer))
            .into_iter()
            .filter_map(|tool| serde_json::from_value(tool).ok())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self
            .off_runtime(|gateway| gateway.skill_resources())
            .await?;
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let read = self
            .off_runtime(move |gateway| gateway.read_skill_file(&uri))
            .await?;
        match read {
            Ok(result) => Ok(result.into()),
            Err(SkillFileError::NotFound) => Err(ErrorData::resource_not_found(
                echoed(&request.uri).into_owned(),
                None,
            )),
            Err(err) => Err(ErrorData::invalid_params(
                format!("{}: {err}", echoed(&request.uri)),
                Some(json!({"kind": err.kind()})),
            )),
        }
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let manifests = self
            .off_runtime(|gateway| gateway.skill_manifests())
            .await?;
        Ok(ListSkillsResult::with_all_items(manifests))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let skill = skills::split_uri(&request.uri)
            .filter(|(_, relative)| *relative == rmcp::model::SKILL_MD)
            .and_then(|(name, _)| self.skill(name));
        let Some(skill) = skill else {
            return Err(ErrorData::invalid_params(
                format!("no skill at {}", echoed(&request.uri)),
                None,
            ));
        };
        let manifest = self
            .off_runtime(move |gateway| gateway.checked_manifest(&skill))
            .await?;
        manifest.map(GetSkillResult::new).map_err(|err| {
            let message = format!("{}: {err}", echoed(&request.uri));
            let data = Some(json!({"kind": err.kind()}));
            match err {
                SkillFileError::Refused(_) => ErrorData::invalid_params(message, data),
                _ => ErrorData::internal_error(message, data),
            }
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        let (progress, forwarding) = context
            .meta
            .get_progress_token()
            .map(|token| forward_progress(context.peer.clone(), token))
            .unzip();
        // A client's `notifications/cancelled` drops the call, which tells
        // the upstream server to cancel it too.
        let called = tokio::select! {
            called = self.dispatch(
                &request.name,
                arguments,
                progress,
                Some(&context.peer),
                context.ct.child_token(),
            ) => Some(called),
            () = context.ct.cancelled() => None,
        };
        // The call's sink is gone with it: the progress already received is
        // sent before the answer (none may follow it), then the answer.
        if let Some(forwarding) = forwarding {
            let _ = tokio::time::timeout(PROGRESS_FLUSH, forwarding).await;
        }
        let Some(called) = called else {
            return Err(ErrorData::internal_error("cancelled by the client", None));
        };
        match called {
            Some(result) => Ok(CallToolResponse::Complete(result)),
            None => Err(unknown_tool(&request.name)),
        }
    }

    /// What rmcp could not read as a request it knows lands here: for a
    /// method the gateway answers, the params did not fit (`-32602`, as
    /// JSON-RPC asks: `tools/call` with array arguments, a missing name);
    /// any other method is not offered (`-32601`). The method is repeated
    /// cut either way (rmcp's own answer repeated all of it).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = echoed(&request.method);
        if SERVED_METHODS.contains(&request.method.as_str()) {
            Err(ErrorData::invalid_params(
                format!("invalid params for `{method}`"),
                None,
            ))
        } else {
            Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: `{method}`"),
                None,
            ))
        }
    }
}

/// The error for a `tools/call` of a tool the gateway does not serve.
pub(crate) fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown tool `{}`", echoed(name)), None)
}

/// The methods the gateway answers: a request for one of them that rmcp
/// could not read had params that do not fit.
const SERVED_METHODS: [&str; 9] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "skills/list",
    "skills/get",
    "subscriptions/listen",
];

/// A name or URI the client sent, as an error repeats it: cut, so a 10 MB
/// name does not come back as a 10 MB error.
fn echoed(text: &str) -> std::borrow::Cow<'_, str> {
    agents_core::text::shorten(text, agents_core::text::MAX_ECHO_BYTES)
}

/// How long an answer waits for the progress received before it to be sent.
const PROGRESS_FLUSH: Duration = Duration::from_secs(1);

/// A sink that passes the upstream server's progress for one call to the
/// client, under the token the client gave, and the task doing it, which
/// ends once the sink is dropped and what it took is sent. rmcp hands each
/// notification to a task of its own, so they may come out of order:
/// progress must increase (the MCP specification), so one that does not is
/// dropped rather than sent late.
fn forward_progress(
    peer: Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
) -> (agents_mcp::ProgressSink, tokio::task::JoinHandle<()>) {
    let (sender, mut received) =
        tokio::sync::mpsc::unbounded_channel::<rmcp::model::ProgressNotificationParam>();
    let forwarding = tokio::spawn(async move {
        let mut last = f64::NEG_INFINITY;
        while let Some(mut params) = received.recv().await {
            if params.progress <= last {
                continue;
            }
            last = params.progress;
            params.progress_token = token.clone();
            if peer.notify_progress(params).await.is_err() {
                break;
            }
        }
    });
    let sink: agents_mcp::ProgressSink = Arc::new(move |params| {
        let _ = sender.send(params);
    });
    (sink, forwarding)
}

impl Gateway {
    /// Serves one client over stdin/stdout until it disconnects, following
    /// the registry meanwhile when `follow` is given, then stops every
    /// upstream.
    pub async fn serve_stdio(&self, follow: Option<Follow<'_>>) -> Result<(), GatewayError> {
        use rmcp::ServiceExt;
        let (input, output) = stdio::stdio();
        // The lane and rmcp share standard output, a message at a time.
        let output = agents_mcp::LineWriter::new(output);
        let lane = crate::lane::Lane::new(self.clone(), output.clone());
        let input = crate::lane::Diverting::new(input, lane.clone());
        let running = self
            .clone()
            .serve((input, output.for_rmcp()))
            .await
            .map_err(|err| GatewayError::Session(Box::new(err)))?;
        lane.open(running.peer());
        tokio::select! {
            quit = running.waiting() => tracing::debug!(?quit, "mcp client disconnected"),
            () = self.follow_or_wait(follow.as_ref()) => {}
        }
        self.shutdown().await;
        Ok(())
    }

    pub(crate) async fn follow_or_wait(&self, follow: Option<&Follow<'_>>) {
        match follow {
            Some(follow) => self.follow(follow).await,
            None => std::future::pending().await,
        }
    }
}
