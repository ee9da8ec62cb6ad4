//! The one redaction every secret-bearing value goes through before it is
//! printed: database URLs, `env` and `headers` values, and any text that may
//! contain them (error messages, logs).
//!
//! Redaction errs on the side of hiding too much: a URL that cannot be
//! understood loses everything between `://` and its last `@`, and every
//! query parameter whose decoded name looks like a credential loses its
//! value, however it is encoded.

/// What a hidden value is replaced with.
pub const REDACTED: &str = "***";

/// Query-parameter and header names (compared lowercase, with `-`, `_`, `.`
/// and spaces removed) whose values are secrets.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "secret",
    "token",
    "apikey",
    "key",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "sslpassword",
    "sslkey",
    "cookie",
    "session",
    "signature",
    "sig",
    "connectionstring",
    "connstr",
];

/// Words (between `-`, `_`, `.` or spaces, any case) that make a name a
/// secret's wherever they stand in it ([`is_secret_name`]).
const SECRET_WHOLE_WORDS: &[&str] = &["pat", "bearer", "dsn", "webhook"];

/// Name endings (folded as in [`is_secret_name`]) that say the value points
/// at something to run or read rather than being a secret itself:
/// `GIT_ASKPASS`, `AUTH_COMMAND`, `CREDENTIAL_HELPER`, `--keyfile`,
/// `PGPASSFILE`, `TOKEN_PATH`. Hiding these would hide, in a trust prompt,
/// the very program a definition makes run.
const POINTER_ENDINGS: &[&str] = &[
    "askpass",
    "command",
    "cmd",
    "helper",
    "program",
    "exec",
    "executable",
    "script",
    "hook",
    "file",
    "path",
    "dir",
];

/// Whether a parameter, header or variable name names a secret: `password`,
/// `PGPASSWORD`, `X-Api-Key`, `access_token`, `%70assword` and the like, but
/// not one whose value names a program, file or folder ([`POINTER_ENDINGS`]).
pub fn is_secret_name(name: &str) -> bool {
    let decoded = percent_decode(name);
    let words: Vec<&str> = decoded
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let whole_word = |word: &str| {
        SECRET_WHOLE_WORDS
            .iter()
            .any(|w| word.eq_ignore_ascii_case(w))
    };
    let folded: String = decoded
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    // A name for what runs or is read is shown first of all (a trust prompt
    // must show `GITHUB_PAT_COMMAND`), unless its last word is itself a
    // secret's (`SLACK_WEBHOOK` ends in `hook`).
    if POINTER_ENDINGS
        .iter()
        .any(|ending| folded.ends_with(ending))
        && !words.last().is_some_and(|last| whole_word(last))
    {
        return false;
    }
    // Whole words that name a secret but are too short, or too common
    // inside other words, to match as parts of the folded name:
    // `GITHUB_PAT`, `X-Pat`, `BEARER`, `SENTRY_DSN`, `SLACK_WEBHOOK`.
    if words.iter().any(|word| whole_word(word)) {
        return true;
    }
    SECRET_WORDS
        .iter()
        .any(|word| folded == *word || folded.ends_with(word) || folded.starts_with(word))
}

/// A URL with its password (or, when the userinfo cannot be told apart, all of
/// its userinfo) and every password-like query value replaced by [`REDACTED`].
/// Text without `://` is only checked for `key=value` credentials.
pub fn redact_url(url: &str) -> String {
    let (scheme_end, rest) = match url.find("://") {
        Some(at) => (at + 3, url.get(at + 3..).unwrap_or_default()),
        None => (0, url),
    };
    let scheme = url.get(..scheme_end).unwrap_or_default();
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    // Userinfo ends at the last `@`: an unencoded `/`, `?` or `#` in a
    // password must not let the rest of it through.
    // `sqlite:///path` has no authority: nothing before an `@` is a password.
    let has_authority = scheme_end > 0 && !rest.starts_with('/');
    let rest = match (has_authority, rest.rfind('@')) {
        (true, Some(at)) => {
            let userinfo = rest.get(..at).unwrap_or_default();
            match userinfo.split_once(':') {
                Some((user, _)) if !user.contains(['/', '?', '#']) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(REDACTED);
                }
                // An encoded `:` (`u%3Apw`) decodes to `user:password`.
                None if !userinfo.contains(['/', '?', '#', '&', '='])
                    && !userinfo.to_ascii_lowercase().contains("%3a") =>
                {
                    out.push_str(userinfo);
                }
                _ => out.push_str(REDACTED),
            }
            out.push('@');
            rest.get(at + 1..).unwrap_or_default()
        }
        // No `://` at all (`postgres:/u:pw@h/db`, `u:pw@h/db`): a mistyped
        // URL is still someone's password. In one word with an `@`, what
        // follows the last `:` before it is taken for one.
        (false, Some(at)) if scheme_end == 0 && !rest.contains(char::is_whitespace) => {
            let before = rest.get(..at).unwrap_or_default();
            match before.rfind(':') {
                Some(colon) => {
                    out.push_str(before.get(..=colon).unwrap_or_default());
                    out.push_str(REDACTED);
                    out.push('@');
                    rest.get(at + 1..).unwrap_or_default()
                }
                None => rest,
            }
        }
        _ => rest,
    };
    out.push_str(&redact_pairs(rest));
    out
}

/// Free text (a dependency's log line, an error chain) with every URL in it
/// through [`redact_url`] and every other secret-named `name=value` pair
/// masked. A URL runs from its scheme to the next whitespace, `"`, `<` or
/// `>` (a `)`, `'` or backquote after it stays inside: the `url` crate
/// leaves a `'` in a password unencoded, and hiding too much beats cutting
/// a password short). One pass, linear in the text.
pub fn redact_text(text: &str) -> String {
    let remembered = scrub_remembered(text);
    let text = remembered.as_ref();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let before = rest.get(..at).unwrap_or_default();
        let start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map_or(at, |(i, _)| i);
        let after = rest.get(at + 3..).unwrap_or_default();
        let end = at
            + 3
            + after
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | '<' | '>'))
                .unwrap_or(after.len());
        out.push_str(&redact_pairs(rest.get(..start).unwrap_or_default()));
        out.push_str(&redact_url(rest.get(start..end).unwrap_or_default()));
        rest = rest.get(end..).unwrap_or_default();
    }
    out.push_str(&redact_pairs(rest));
    out
}

/// Every `name=value` pair (separated by `?`, `&`, `;`, `#` or whitespace)
/// whose name is a secret name gets its value replaced.
fn redact_pairs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        let (before, after) = rest.split_at(eq);
        // Blanks before the `=` (`password =x`) still leave the name its own.
        let named = before.trim_end_matches([' ', '\t']);
        let name_start = named
            .rfind(['?', '&', ';', '#', ' ', '\t', '\n', ',', '`', '\'', '"'])
            .map_or(0, |at| at + 1);
        let name = named.get(name_start..).unwrap_or_default();
        out.push_str(before);
        out.push('=');
        let value = after.get(1..).unwrap_or_default();
        if is_secret_name(name) && !name.is_empty() {
            // The value runs to the next `&` or whitespace; a `#` or `?`
            // inside it is part of a mis-encoded secret.
            let end = value
                .find(['&', ' ', '\t', '\n', '`', '\'', '"'])
                .unwrap_or(value.len());
            out.push_str(REDACTED);
            rest = value.get(end..).unwrap_or_default();
        } else {
            rest = value;
        }
    }
    out.push_str(rest);
    out
}

/// Replaces every occurrence of each known secret (and its percent-decoded
/// form) in `text`. Secrets shorter than 3 bytes are left alone: they would
/// blot out ordinary words.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        for form in [secret.clone(), percent_decode(secret)] {
            if form.len() >= 3 && out.contains(form.as_str()) {
                out = out.replace(form.as_str(), REDACTED);
            }
        }
    }
    out
}

/// The forms of `secrets` that [`scrub`] should look for, longest first (so
/// `Bearer TOKEN` is masked whole before `TOKEN` alone): each value, the
/// value without surrounding whitespace (an environment variable set from a
/// file often ends with a newline that no echo of it keeps), and each line
/// of a value that spans lines (a PEM key: a server that prints it, or
/// anything that prints line by line, shows no line break to match).
pub fn secret_forms(secrets: impl IntoIterator<Item = String>) -> Vec<String> {
    /// A line of a multi-line secret shorter than this is not masked on its
    /// own (`-----END KEY-----` is not secret, but short lines such as `}`
    /// or `==` would blot out ordinary text).
    const MIN_LINE: usize = 8;
    let mut forms: Vec<String> = Vec::new();
    for secret in secrets {
        let trimmed = secret.trim();
        if trimmed.contains('\n') {
            forms.extend(
                trimmed
                    .lines()
                    .map(str::trim)
                    .filter(|line| line.len() >= MIN_LINE)
                    .map(str::to_owned),
            );
        }
        if trimmed.len() != secret.len() && !trimmed.is_empty() {
            forms.push(trimmed.to_owned());
        }
        forms.push(secret);
    }
    forms.retain(|form| !form.is_empty());
    forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    forms.dedup();
    forms
}

/// Every secret this process has handed to something it started (the
/// expanded `env` and `headers` of MCP servers, see [`remember`]): the last
/// line of defence, applied where text leaves the process (log lines,
/// warnings, errors, an MCP client's tool errors), so a secret a server
/// echoes is masked even on a path that did not know it was handling one.
static REMEMBERED: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Adds `secrets` (and their [`secret_forms`]) to what [`scrub_remembered`]
/// masks for the rest of the process.
pub fn remember(secrets: &[String]) {
    if secrets.is_empty() {
        return;
    }
    let mut known = REMEMBERED
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let added = secret_forms(
        secrets
            .iter()
            .flat_map(|secret| [secret.clone(), percent_decode(secret)]),
    );
    if added.iter().all(|form| known.contains(form)) {
        return;
    }
    let all = std::mem::take(&mut *known).into_iter().chain(added);
    *known = secret_forms(all);
}

/// `text` with every [remembered](remember) secret masked; borrowed when
/// there is nothing to mask.
pub fn scrub_remembered(text: &str) -> std::borrow::Cow<'_, str> {
    let known = REMEMBERED
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // `remember` stored the percent-decoded forms too, so one `contains`
    // each tells whether `scrub` has anything to do.
    if !known
        .iter()
        .any(|secret| secret.len() >= 3 && text.contains(secret.as_str()))
    {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(scrub(text, &known))
}

/// Every string in `value` (keys aside) replaced by what `mask` makes of
/// it, where it changes it: a JSON log line, an upstream's error result.
pub fn mask_strings(value: &mut serde_json::Value, mask: &dyn Fn(&str) -> Option<String>) {
    match value {
        serde_json::Value::String(text) => {
            if let Some(masked) = mask(text) {
                *text = masked;
            }
        }
        serde_json::Value::Array(items) => {
            items.iter_mut().for_each(|item| mask_strings(item, mask))
        }
        serde_json::Value::Object(map) => {
            map.values_mut().for_each(|item| mask_strings(item, mask))
        }
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
    }
}

/// The secrets inside a URL: its password (raw and decoded) and the values of
/// password-like query parameters, for [`scrub`].
pub fn url_secrets(url: &str) -> Vec<String> {
    let mut secrets = Vec::new();
    if let Some(at) = url.find("://") {
        let rest = url.get(at + 3..).unwrap_or_default();
        if let Some(end) = rest.rfind('@') {
            let userinfo = rest.get(..end).unwrap_or_default();
            match userinfo.split_once(':') {
                Some((_, password)) => secrets.push(password.to_owned()),
                None => secrets.push(userinfo.to_owned()),
            }
        }
    }
    for pair in url.split(['?', '&', ';']) {
        if let Some((name, value)) = pair.split_once('=')
            && is_secret_name(name.trim())
        {
            secrets.push(value.to_owned());
            if let Some((head, _)) = value.split_once('#') {
                secrets.push(head.to_owned());
            }
        }
    }
    secrets.retain(|s| !s.is_empty());
    secrets
}

/// Decodes `%XX` escapes and `+`; invalid escapes are kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |at: usize| bytes.get(at).and_then(|d| (*d as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A map of `env` or `headers` values with every value hidden: they are
/// where tokens live, and `${VAR}` references are shown as written.
pub fn redact_value_map<'a, I>(entries: I) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (&'a String, &'a String)>,
{
    entries
        .into_iter()
        .map(|(name, value)| (name.clone(), redact_setting_value(value)))
        .collect()
}

/// Authorization schemes: the word before the credentials of a header
/// value (`Bearer TOKEN`), shown as it is not secret.
const AUTH_SCHEMES: &[&str] = &["bearer", "basic", "token"];

/// An `env`/`headers` value: its `${VAR}` references are kept (they are not
/// the secret itself, and they say which of your variables it receives),
/// and so is literal text that cannot be one (an auth scheme such as
/// `Bearer `, or only spaces and punctuation, as in `${USER}:${PASS}`);
/// any other literal text becomes [`REDACTED`].
pub fn redact_setting_value(value: &str) -> String {
    fn harmless(literal: &str) -> bool {
        let word = literal.trim_end();
        !literal.chars().any(char::is_alphanumeric)
            || (literal.len() > word.len()
                && AUTH_SCHEMES
                    .iter()
                    .any(|scheme| word.eq_ignore_ascii_case(scheme)))
    }
    let mut out = String::new();
    let mut literal_start = 0;
    let mut at = 0;
    let flush = |out: &mut String, literal: &str| {
        if !literal.is_empty() {
            out.push_str(if harmless(literal) { literal } else { REDACTED });
        }
    };
    while let Some(offset) = value.get(at..).and_then(|rest| rest.find("${")) {
        let start = at + offset;
        let name_start = start + 2;
        // `${NAME}`, or `${NAME:-default}` (its default literal text, shown
        // like any other: masked unless harmless, an empty one kept).
        let reference = value.get(name_start..).and_then(|rest| {
            let close = rest.find('}')?;
            let inner = rest.get(..close)?;
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            let valid = name.chars().next().is_some_and(|c| !c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            valid.then_some((name_start + close + 1, default))
        });
        match reference {
            Some((end, default)) => {
                flush(
                    &mut out,
                    value.get(literal_start..start).unwrap_or_default(),
                );
                match default {
                    Some(default) if !default.is_empty() && !harmless(default) => {
                        let head = end - default.len() - 1;
                        out.push_str(value.get(start..head).unwrap_or_default());
                        out.push_str(REDACTED);
                        out.push('}');
                    }
                    _ => out.push_str(value.get(start..end).unwrap_or_default()),
                }
                literal_start = end;
                at = end;
            }
            None => at = name_start,
        }
    }
    flush(&mut out, value.get(literal_start..).unwrap_or_default());
    if out.is_empty() && !value.is_empty() {
        return REDACTED.to_owned();
    }
    out
}

/// Prefixes of credentials issued in a recognisable shape, each with the
/// fewest characters that follow it in a real one (a word shorter than
/// that, `sk-learn`, `ghp_default`, is not taken for one): GitHub, GitLab,
/// OpenAI and Anthropic (`sk-`), Slack, Stripe, npm, PyPI, Hugging Face,
/// Google API keys, AWS access key ids, DigitalOcean, Shopify.
const TOKEN_SHAPES: &[(&str, usize)] = &[
    ("ghp_", 30),
    ("gho_", 30),
    ("ghu_", 30),
    ("ghs_", 30),
    ("ghr_", 30),
    ("github_pat_", 30),
    ("glpat-", 20),
    ("sk-", 20),
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("xoxa-", 10),
    ("xoxr-", 10),
    ("xoxe-", 10),
    ("xapp-", 10),
    ("sk_live_", 16),
    ("sk_test_", 16),
    ("rk_live_", 16),
    ("npm_", 30),
    ("pypi-", 30),
    ("hf_", 30),
    ("AIza", 30),
    ("AKIA", 16),
    ("ASIA", 16),
    ("dop_v1_", 30),
    ("shpat_", 30),
];

/// Whether `text` holds a word in the shape of a known credential
/// ([`TOKEN_SHAPES`]: `ghp_…`, `sk-…`, `xoxb-…`, `AKIA…`), a JSON Web Token
/// (`eyJ…` in three dot-separated parts) or a PEM private key. A value
/// under an innocent name (`GH: ghp_…`) is a secret all the same.
pub fn looks_like_token(text: &str) -> bool {
    if text.contains("PRIVATE KEY-----") {
        return true;
    }
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .any(|word| {
            // `${KEY:-ghp_…}`, `--opt=-…`: a word of its own after the dash.
            let word = word.trim_start_matches(['-', '.']);
            let shaped = TOKEN_SHAPES.iter().any(|(prefix, rest)| {
                word.strip_prefix(prefix).is_some_and(|tail| {
                    tail.len() >= *rest
                        && tail
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
                })
            });
            let jwt = word.starts_with("eyJ")
                && word.len() >= 30
                && word.split('.').filter(|part| !part.is_empty()).count() == 3;
            shaped || jwt
        })
}

/// An `env` entry's or a header's value as shown where only secrets are
/// hidden: as written, unless its name says it holds a secret (`API_KEY`,
/// `Authorization`) or it holds a word in a known credential's shape
/// ([`looks_like_token`]); then [`redact_setting_value`] of it (its `${VAR}`
/// references and an auth scheme stay).
pub fn redact_named_value<'v>(name: &str, value: &'v str) -> std::borrow::Cow<'v, str> {
    if is_secret_name(name) || looks_like_token(value) {
        redact_setting_value(value).into()
    } else {
        value.into()
    }
}

/// Where `source` holds a secret written out rather than as a `${VAR}`
/// reference, as [`redact_args`], [`redact_url`] and the `env`/`headers`
/// masking would hide it: `env.NAME`, `headers.NAME`, `args[N]`, `url`. A
/// definition in a registry is read by everyone who reads the registry
/// (`skill get --show-secrets` prints it whole), so a secret written there is
/// theirs too.
pub fn literal_secret_fields(source: &crate::McpSource) -> Vec<String> {
    let mut fields = Vec::new();
    for (kind, entries) in [("env", &source.env), ("headers", &source.headers)] {
        for (name, value) in entries {
            if redact_named_value(name, value) != value.as_str() {
                fields.push(format!("{kind}.{name}"));
            }
        }
    }
    for (index, (arg, shown)) in source
        .args
        .iter()
        .zip(redact_args(&source.args))
        .enumerate()
    {
        if *arg != shown {
            fields.push(format!("args[{index}]"));
        }
    }
    if source
        .url
        .as_deref()
        .is_some_and(|url| redact_url(url) != url)
    {
        fields.push("url".to_owned());
    }
    fields
}

/// `source` as a reader is shown it where secrets are hidden (`skill get`):
/// every field [`literal_secret_fields`] names holds, in place of the
/// secret written there, what [`redact_named_value`], [`redact_args`] and
/// [`redact_url`] show of it; everything else as written.
pub fn mask_source(source: &crate::McpSource) -> crate::McpSource {
    let mask_map = |entries: &indexmap::IndexMap<String, String>| {
        entries
            .iter()
            .map(|(name, value)| (name.clone(), redact_named_value(name, value).into_owned()))
            .collect()
    };
    crate::McpSource {
        args: redact_args(&source.args),
        env: mask_map(&source.env),
        headers: mask_map(&source.headers),
        url: source.url.as_deref().map(redact_url),
        ..source.clone()
    }
}

/// The fields of `source` (named as [`literal_secret_fields`] names them)
/// that hold [`REDACTED`] where a secret goes: a definition printed with
/// its secrets masked ([`mask_source`]) and written back. Writing it would
/// replace the secret with the mask, so a write refuses it.
pub fn masked_secret_fields(source: &crate::McpSource) -> Vec<String> {
    let holds = |text: &str| text.contains(REDACTED);
    let mentions = source.env.values().any(|v| holds(v))
        || source.headers.values().any(|v| holds(v))
        || source.args.iter().any(|a| holds(a))
        || source.url.as_deref().is_some_and(holds);
    if !mentions {
        return Vec::new();
    }
    // The same source with the mask read as a secret written out: the
    // fields that then hold one are the secret positions the mask is in.
    let unmask = |text: &str| text.replace(REDACTED, "masked0");
    let unmask_map = |entries: &indexmap::IndexMap<String, String>| {
        entries
            .iter()
            .map(|(name, value)| (name.clone(), unmask(value)))
            .collect()
    };
    let probe = crate::McpSource {
        args: source.args.iter().map(|arg| unmask(arg)).collect(),
        env: unmask_map(&source.env),
        headers: unmask_map(&source.headers),
        url: source.url.as_deref().map(unmask),
        ..source.clone()
    };
    let texts = source_texts(source);
    let mut fields: Vec<String> = literal_secret_fields(&probe)
        .into_iter()
        .filter(|field| texts.get(field).is_some_and(|text| holds(text)))
        .collect();
    // [`redact_url`] hides a userinfo it cannot split (`user%3Apw@`, one
    // holding `/` or `?`) whole, as `***@`: read back, that is a user name.
    let userinfo_masked = |text: &str| {
        text.split_once("://")
            .and_then(|(_, rest)| rest.rsplit_once('@'))
            .is_some_and(|(userinfo, _)| holds(userinfo))
    };
    for (field, text) in texts {
        let url_field = field == "url" || field.starts_with("args[");
        if url_field && userinfo_masked(text) && !fields.contains(&field) {
            fields.push(field);
        }
    }
    fields
}

/// Every text of `source` a secret can be written in, by its field as
/// [`literal_secret_fields`] names it (`env.NAME`, `headers.NAME`,
/// `args[N]`, `url`), in that order.
fn source_texts(source: &crate::McpSource) -> indexmap::IndexMap<String, &str> {
    fn named<'s>(
        kind: &'static str,
        entries: &'s indexmap::IndexMap<String, String>,
    ) -> impl Iterator<Item = (String, &'s str)> {
        entries
            .iter()
            .map(move |(name, value)| (format!("{kind}.{name}"), value.as_str()))
    }
    named("env", &source.env)
        .chain(named("headers", &source.headers))
        .chain(
            source
                .args
                .iter()
                .enumerate()
                .map(|(index, arg)| (format!("args[{index}]"), arg.as_str())),
        )
        .chain(source.url.as_deref().map(|url| ("url".to_owned(), url)))
        .collect()
}

/// A command's arguments fit to print: each URL through [`redact_url`], and
/// through [`redact_setting_value`] (a bare `${VAR}` reference stays) the
/// value of a secret-named option (`--api-key VALUE`, `--token=VALUE`,
/// `-password VALUE`), of an environment entry given as an argument whose
/// name is a secret's (`GITHUB_TOKEN=VALUE`, as after docker's `-e` or
/// `--env`), and of a header given as an argument whose name is a secret's
/// (`Authorization: Bearer VALUE`, as mcp-remote's `--header` takes it; the
/// auth scheme stays), and any word that holds a credential by its shape
/// ([`looks_like_token`]). A value that starts with `-` is taken for the
/// next option, not hidden.
pub fn redact_args<S: AsRef<str>>(args: &[S]) -> Vec<String> {
    let mut hide_next = false;
    args.iter()
        .map(|arg| {
            let arg = arg.as_ref();
            match option_word(arg, &mut hide_next) {
                OptionWord::Value => redact_setting_value(arg),
                OptionWord::Inline { option, value } => {
                    format!("{option}{}", redact_setting_value(value))
                }
                OptionWord::Other if arg.contains("://") => redact_url(arg),
                // A credential by its shape, whatever option it follows.
                OptionWord::Other if looks_like_token(arg) => redact_setting_value(arg),
                OptionWord::Other => arg.to_owned(),
            }
        })
        .collect()
}

/// What one word of a command line is, read in order (`hide_next` carries
/// whether the word before was a secret-named option such as `--api-key`):
/// the shared reading of [`redact_args`] and [`redact_inline_args`].
enum OptionWord<'a> {
    /// The value after a secret-named option (a word starting with `-` is
    /// taken for the next option instead).
    Value,
    /// A secret inside the word: `--token=VALUE`, `GITHUB_TOKEN=VALUE`,
    /// `Authorization: Bearer VALUE`, `--env=GITHUB_TOKEN=VALUE`. `option`
    /// is what is shown as written (up to and with the `=`, or the header's
    /// name and auth scheme), `value` the rest.
    Inline { option: &'a str, value: &'a str },
    /// Anything else.
    Other,
}

fn option_word<'a>(word: &'a str, hide_next: &mut bool) -> OptionWord<'a> {
    if std::mem::take(hide_next) && !word.starts_with('-') && !word.is_empty() {
        return OptionWord::Value;
    }
    let inline = |value_at: usize| OptionWord::Inline {
        option: word.get(..value_at).unwrap_or_default(),
        value: word.get(value_at..).unwrap_or_default(),
    };
    let flag = word.trim_start_matches('-');
    if flag.len() < word.len() && !flag.is_empty() {
        let dashes = word.len() - flag.len();
        match flag.split_once('=') {
            Some((name, value)) if is_secret_name(name) && !value.is_empty() => {
                return inline(word.len() - value.len());
            }
            // `--env=GITHUB_TOKEN=VALUE`, `--header=Authorization: …`.
            Some((name, value)) => {
                if let Some(at) = assigned_secret(value) {
                    return inline(dashes + name.len() + 1 + at);
                }
            }
            None => *hide_next = is_secret_name(flag),
        }
        return OptionWord::Other;
    }
    match assigned_secret(word) {
        Some(at) => inline(at),
        None => OptionWord::Other,
    }
}

/// Where the secret in `word` starts when the word assigns one: `NAME=VALUE`
/// whose `NAME` is a secret's by [`is_secret_name`], as an `env` entry's name
/// is read (`GITHUB_TOKEN=ghp_…`), or a header line `Name: VALUE` whose name
/// is (`Authorization: Bearer …`: the secret starts after the auth scheme).
/// `None` for anything else, and for an empty value.
fn assigned_secret(word: &str) -> Option<usize> {
    let name_end = word.find(['=', ':'])?;
    let name = word.get(..name_end)?;
    let mut chars = name.chars();
    let named = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !named || !is_secret_name(name) {
        return None;
    }
    let mut at = name_end + 1;
    if word.get(name_end..=name_end) == Some(":") {
        // A header: optional spaces, then perhaps a scheme and its spaces.
        let rest = word.get(at..)?;
        at += rest.len() - rest.trim_start().len();
        let rest = word.get(at..)?;
        let scheme_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let scheme = rest.get(..scheme_end)?;
        let after = rest.get(scheme_end..)?;
        if AUTH_SCHEMES.iter().any(|s| scheme.eq_ignore_ascii_case(s))
            && !after.trim_start().is_empty()
        {
            at += scheme_end + after.len() - after.trim_start().len();
        }
    }
    (at < word.len()).then_some(at)
}

/// A source line (YAML or TOML) with the value of each secret-named option
/// in it masked, as [`redact_args`] masks a server's `args`: the word after
/// `--api-key`, or what follows `--token=`. Words are runs between
/// whitespace, `[`, `]` and `,`, or quoted strings; a word's quotes stay.
/// For an error that quotes `args: ["--api-key", "sk-live-…", 5]`.
pub fn redact_inline_args(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut hide_next = false;
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() || matches!(c, '[' | ']' | ',') {
            out.push(c);
            rest = rest.get(c.len_utf8()..).unwrap_or_default();
            continue;
        }
        // One word: quoted (to its closing quote) or bare.
        let (word, inner) = if c == '"' || c == '\'' {
            let end = rest
                .get(1..)
                .and_then(|body| body.find(c))
                .map_or(rest.len(), |at| at + 2);
            let word = rest.get(..end).unwrap_or(rest);
            let inner = word
                .get(1..word.len().saturating_sub(1).max(1))
                .unwrap_or_default();
            (word, inner)
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, '[' | ']' | ','))
                .unwrap_or(rest.len());
            let word = rest.get(..end).unwrap_or(rest);
            (word, word)
        };
        rest = rest.get(word.len()..).unwrap_or_default();
        let quote = |content: &str| -> String {
            if inner.len() == word.len() {
                content.to_owned()
            } else {
                format!("{c}{content}{c}")
            }
        };
        match option_word(inner, &mut hide_next) {
            OptionWord::Value => out.push_str(&quote(REDACTED)),
            OptionWord::Inline { option, .. } => {
                out.push_str(&quote(&format!("{option}{REDACTED}")));
            }
            OptionWord::Other => out.push_str(word),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values are hidden by their name or by a known credential's shape,
    /// and only then: `NODE_ENV: production` is shown as written.
    #[test]
    fn only_values_that_look_secret_are_hidden() {
        let github = format!("ghp_{}", "a1B2".repeat(9));
        let openai = format!("sk-proj-{}", "x9".repeat(12));
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2ln";
        for (name, value, shown) in [
            ("NODE_ENV", "production", "production"),
            ("LOG_LEVEL", "debug", "debug"),
            ("HOME_DIR", "${HOME}", "${HOME}"),
            ("PYTHON", "sk-learn", "sk-learn"),
            ("NOTE", "ghp_default", "ghp_default"),
            ("GITHUB_TOKEN", "plainish", REDACTED),
            ("API_KEY", "${API_KEY}", "${API_KEY}"),
            ("GH", github.as_str(), REDACTED),
            ("AUTH_HEADER_VALUE", "x", REDACTED),
            ("OPENAI", openai.as_str(), REDACTED),
            ("AWS_ID", "AKIAIOSFODNN7EXAMPLE", REDACTED),
            ("SESSION_JWT", jwt, REDACTED),
            ("BLOB", jwt, REDACTED),
            ("HEADER", &format!("Bearer {github}"), REDACTED),
        ] {
            assert_eq!(redact_named_value(name, value), shown, "{name}={value}");
        }
        assert!(looks_like_token(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n"
        ));
        assert_eq!(
            redact_args(&["--verbose", github.as_str(), "--name", "sk-learn"]),
            ["--verbose", REDACTED, "--name", "sk-learn"]
        );
    }

    #[test]
    fn hides_the_values_of_secret_options() {
        let args = [
            "-y",
            "@scope/server",
            "--api-key",
            "SECRETARG1",
            "--token=SECRETARG2",
            "--password",
            "${DB_PASSWORD}",
            "--verbose",
            "--url",
            "https://u:SECRETARG3@h/x",
            "--secret",
            "--next",
            "--level=debug",
        ];
        assert_eq!(
            redact_args(&args),
            [
                "-y",
                "@scope/server",
                "--api-key",
                "***",
                "--token=***",
                "--password",
                "${DB_PASSWORD}",
                "--verbose",
                "--url",
                "https://u:***@h/x",
                "--secret",
                "--next",
                "--level=debug",
            ]
        );
    }

    /// Found by an audit: `mcp import --dry-run` and `mcp export` printed
    /// these whole.
    #[test]
    fn hides_secret_env_entries_and_headers_given_as_arguments() {
        let args = [
            "-y",
            "mcp-remote",
            "https://mcp.example/sse",
            "--header",
            "Authorization: Bearer sk-LEAK1",
            "--header",
            "X-Api-Key:sk-LEAK2",
            "--header",
            "Authorization: Bearer ${AUTH_TOKEN}",
            "--header",
            "Authorization:${AUTH_HEADER}",
            "--header",
            "Accept: text/plain",
            "run",
            "-e",
            "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_LEAK3",
            "--env",
            "API_KEY=k-LEAK4",
            "--env=SLACK_BOT_TOKEN=xoxb-LEAK5",
            "--header=Authorization: token LEAK6",
            "SENTRY_DSN=https://LEAK7@o1.ingest.sentry.io/1",
            "LOG_LEVEL=debug",
            "-e",
            "GITHUB_TOKEN",
            "TOKEN=${GITHUB_TOKEN}",
            "DATABASE_URL=postgres://u:LEAK8@h/db",
            "token:",
            "C:\\tools",
        ];
        let shown = redact_args(&args);
        assert_eq!(
            shown,
            [
                "-y",
                "mcp-remote",
                "https://mcp.example/sse",
                "--header",
                "Authorization: Bearer ***",
                "--header",
                "X-Api-Key:***",
                "--header",
                "Authorization: Bearer ${AUTH_TOKEN}",
                "--header",
                "Authorization:${AUTH_HEADER}",
                "--header",
                "Accept: text/plain",
                "run",
                "-e",
                "GITHUB_PERSONAL_ACCESS_TOKEN=***",
                "--env",
                "API_KEY=***",
                "--env=SLACK_BOT_TOKEN=***",
                "--header=Authorization: token ***",
                "SENTRY_DSN=***",
                "LOG_LEVEL=debug",
                "-e",
                "GITHUB_TOKEN",
                "TOKEN=${GITHUB_TOKEN}",
                "DATABASE_URL=postgres://u:***@h/db",
                "token:",
                "C:\\tools",
            ]
        );
        assert!(!shown.concat().contains("LEAK"), "{shown:?}");
        // The same words in a source line an error quotes.
        assert_eq!(
            redact_inline_args(
                r#"args = ["--header", "Authorization: Bearer sk-LEAK1", "-e", 'GITHUB_TOKEN=ghp_x', LOG_LEVEL=debug]"#
            ),
            r#"args = ["--header", "Authorization: Bearer ***", "-e", 'GITHUB_TOKEN=***', LOG_LEVEL=debug]"#
        );
    }

    #[test]
    fn a_reference_with_a_default_stays_and_its_default_is_masked() {
        assert_eq!(
            redact_setting_value("${GITHUB_TOKEN:-}"),
            "${GITHUB_TOKEN:-}"
        );
        assert_eq!(
            redact_setting_value("Bearer ${T:-sk-live}"),
            "Bearer ${T:-***}"
        );
        assert_eq!(redact_setting_value("${T:-  }"), "${T:-  }");
        let source: crate::McpSource = serde_json::from_value(serde_json::json!({
            "server": "gh",
            "command": "npx",
            "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN:-}", "API_KEY": "${API_KEY:-sk-live}"},
        }))
        .unwrap();
        assert_eq!(literal_secret_fields(&source), ["env.API_KEY"]);
    }

    #[test]
    fn finds_the_secrets_a_definition_writes_out() {
        let source: crate::McpSource = serde_json::from_value(serde_json::json!({
            "server": "gh",
            "command": "npx",
            "args": ["--api-key", "sk-1", "--token", "${TOKEN}", "-e", "GITHUB_TOKEN=ghp_2", "LOG_LEVEL=debug"],
            "env": {"GITHUB_TOKEN": "ghp_3", "API_KEY": "${API_KEY}", "LOG_LEVEL": "debug"},
            "headers": {"Authorization": "Bearer ${TOKEN}", "X-Api-Key": "k-4"},
            "url": "https://u:pw@h/mcp?x=1",
        }))
        .unwrap();
        assert_eq!(
            literal_secret_fields(&source),
            [
                "env.GITHUB_TOKEN",
                "headers.X-Api-Key",
                "args[1]",
                "args[5]",
                "url"
            ]
        );
    }

    #[test]
    fn hides_passwords_in_userinfo_however_written() {
        for (url, shown) in [
            (
                "postgres://u:secret@h:5432/db",
                "postgres://u:***@h:5432/db",
            ),
            ("postgres://u:se/cr?et#x@h/db", "postgres://u:***@h/db"),
            ("postgres://u:p%40ss@h/db", "postgres://u:***@h/db"),
            ("postgres://tokenonly@h/db", "postgres://tokenonly@h/db"),
            ("postgres://u%3AS3CR3T@h/db", "postgres://***@h/db"),
            ("postgres://a/b:c@h/db", "postgres://***@h/db"),
            ("sqlite:///tmp/x.db", "sqlite:///tmp/x.db"),
            ("sqlite:///tmp/a:b@c.db", "sqlite:///tmp/a:b@c.db"),
            // Mistyped: no `://`, still a password.
            ("postgres:/user:s3cret@h/db", "postgres:/user:***@h/db"),
            ("user:s3cret@host/db", "user:***@host/db"),
            ("postgres//user:s3cret@h", "postgres//user:***@h"),
            ("postgres:/token@h/db", "postgres:***@h/db"),
            ("see a:b@c here", "see a:b@c here"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }

    #[test]
    fn hides_password_like_query_values_however_encoded() {
        for (url, shown) in [
            (
                "postgres://h/db?password=hunter2",
                "postgres://h/db?password=***",
            ),
            (
                "postgres://h/db?sslmode=require&PassWord=a#b&x=1",
                "postgres://h/db?sslmode=require&PassWord=***&x=1",
            ),
            (
                "postgres://h/db?%70assword=x",
                "postgres://h/db?%70assword=***",
            ),
            (
                "postgres://h/db?api_key=x&user=bob",
                "postgres://h/db?api_key=***&user=bob",
            ),
            (
                "postgres://h/db?application_name=x",
                "postgres://h/db?application_name=x",
            ),
            // Blanks before the `=` leave the name a secret's.
            (
                "postgres://u@h/db?password =S3CR3T",
                "postgres://u@h/db?password =***",
            ),
            (
                "http://h/mcp?token =S3&api_key\t=S4",
                "http://h/mcp?token =***&api_key\t=***",
            ),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
        assert!(is_secret_name("PGPASSWORD"));
        assert!(is_secret_name("X-Api-Key"));
        assert!(is_secret_name("GITHUB_TOKEN"));
        assert!(!is_secret_name("sslmode"));
        // Short secret words count as whole words only.
        for secret in [
            "GITHUB_PAT",
            "PAT",
            "X-Pat",
            "BEARER",
            "SENTRY_DSN",
            "SLACK_WEBHOOK",
            "WEBHOOK_URL",
            "CONN_STR",
            "ConnectionString",
        ] {
            assert!(is_secret_name(secret), "{secret}");
        }
        assert!(!is_secret_name("COMPAT"));
        assert!(!is_secret_name("PATTERN"));
        // What names a program, file or folder is shown: a trust prompt must
        // not hide what a definition makes run.
        for pointer in [
            "GITHUB_PAT_COMMAND",
            "SENTRY_DSN_FILE",
            "SLACK_WEBHOOK_SCRIPT",
            "PAT_HELPER",
            "GIT_ASKPASS",
            "SSH_ASKPASS",
            "AUTH_COMMAND",
            "CREDENTIAL_HELPER",
            "password-command",
            "keyfile",
            "PGPASSFILE",
            "TOKEN_PATH",
        ] {
            assert!(!is_secret_name(pointer), "{pointer}");
        }
        assert_eq!(
            redact_args(&[
                "--password-command=sh -c x",
                "--keyfile",
                "/etc/shadow",
                "--api-key",
                "k"
            ]),
            [
                "--password-command=sh -c x",
                "--keyfile",
                "/etc/shadow",
                "--api-key",
                "***"
            ]
        );
    }

    #[test]
    fn scrubs_known_secrets_from_any_text() {
        let secrets = url_secrets("postgres://u:p%40ss/w?rd@h/db?password=hunter2#frag");
        let text = scrub("failed: p@ss/w?rd and p%40ss/w?rd and hunter2", &secrets);
        assert_eq!(text, "failed: *** and *** and ***");
    }

    #[test]
    fn secret_forms_cover_trimmed_values_and_each_line_longest_first() {
        let pem =
            "-----BEGIN KEY-----\nMIIEsecretline1abc\nMIIEsecretline2def\n}\n-----END KEY-----\n";
        let forms = secret_forms([
            "tok".to_owned(),
            "trailingsecret42\n".to_owned(),
            pem.to_owned(),
            String::new(),
            "Bearer tok".to_owned(),
        ]);
        assert_eq!(forms[0], pem);
        assert!(
            forms.windows(2).all(|w| w[0].len() >= w[1].len()),
            "{forms:?}"
        );
        for form in [
            "MIIEsecretline1abc",
            "MIIEsecretline2def",
            "trailingsecret42",
            "Bearer tok",
        ] {
            assert!(forms.iter().any(|f| f == form), "{form}: {forms:?}");
        }
        // A line too short to be told from ordinary text is not a form.
        assert!(!forms.iter().any(|f| f == "}"), "{forms:?}");
        // A server that prints the key line by line shows no line to match whole.
        let shown = scrub(
            "stderr: MIIEsecretline1abc | MIIEsecretline2def | trailingsecret42, Bearer tok",
            &forms,
        );
        assert_eq!(shown, "stderr: *** | *** | ***, ***");
    }

    #[test]
    fn option_values_in_a_source_line_are_masked() {
        assert_eq!(
            redact_inline_args(
                r#"args: ["--api-key", "sk-live-X", {a: 1}, '--token=t0k', --password, p4ss, -v]"#
            ),
            r#"args: ["--api-key", "***", {a: 1}, '--token=***', --password, ***, -v]"#
        );
        assert_eq!(
            redact_inline_args(r#"args = ["--keyfile", "/etc/key", "--verbose", "x"]"#),
            r#"args = ["--keyfile", "/etc/key", "--verbose", "x"]"#
        );
        // An unclosed quote or a flag at the end does not lose text.
        assert_eq!(redact_inline_args(r#"x: "--api-key"#), r#"x: "--api-key"#);
        assert_eq!(redact_inline_args("a é b"), "a é b");
    }

    #[test]
    fn remembered_secrets_are_masked_in_any_text_this_process_prints() {
        let unrelated = "nothing to see";
        assert!(matches!(
            scrub_remembered(unrelated),
            std::borrow::Cow::Borrowed(_)
        ));
        remember(&["rem3mbered%2Fvalue".to_owned()]);
        // Raw and percent-decoded, in free text and through `redact_text`.
        assert_eq!(
            scrub_remembered("a rem3mbered%2Fvalue b rem3mbered/value"),
            "a *** b ***"
        );
        assert_eq!(redact_text("got rem3mbered/value back"), "got *** back");
        assert!(matches!(
            scrub_remembered(unrelated),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn text_has_every_url_and_secret_pair_masked() {
        // rmcp's line when a streamable-HTTP connection fails.
        let line = "worker quit with fatal: Client(reqwest::Error { kind: Request, \
                    url: \"http://u:pw@127.0.0.1:9/mcp?token=sekrit123&x=1\", source: Os }) \
                    and (https://h/p?api_key=k2) then access_token=t3 done";
        assert_eq!(
            redact_text(line),
            "worker quit with fatal: Client(reqwest::Error { kind: Request, \
             url: \"http://u:***@127.0.0.1:9/mcp?token=***&x=1\", source: Os }) \
             and (https://h/p?api_key=*** then access_token=*** done"
        );
        assert_eq!(redact_text("no urls, user=bob"), "no urls, user=bob");
        assert_eq!(redact_text("://x?token=y"), "://x?token=***");
        assert_eq!(redact_text("é://a:b@c"), "é://a:***@c");
        // A quote inside a password does not end the URL.
        assert_eq!(
            redact_text("url 'http://u:pa'ss@h/x' failed"),
            "url 'http://u:***@h/x' failed"
        );
    }

    #[test]
    fn setting_values_keep_only_references() {
        assert_eq!(redact_setting_value("${GITHUB_TOKEN}"), "${GITHUB_TOKEN}");
        assert_eq!(redact_setting_value("ghp_literal"), REDACTED);
        assert_eq!(redact_setting_value("Bearer ${T}"), "Bearer ${T}");
        assert_eq!(redact_setting_value("token ${T}"), "token ${T}");
        assert_eq!(redact_setting_value("${U}:${P}"), "${U}:${P}");
        assert_eq!(redact_setting_value("Bearer ghp_x${T}"), "***${T}");
        assert_eq!(redact_setting_value("Bearer"), REDACTED);
        assert_eq!(redact_setting_value("k=${T}&x=lit"), "***${T}***");
        // A reference with a default keeps the reference, masks the
        // default; a name starting with a digit is no reference.
        assert_eq!(redact_setting_value("${KEY:-hunter2}"), "${KEY:-***}");
        assert_eq!(redact_setting_value("${1A}"), REDACTED);
        assert_eq!(redact_setting_value("$${T}"), "$${T}");
    }
}
