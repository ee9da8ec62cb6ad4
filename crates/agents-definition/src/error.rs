use std::fmt;

/// A definition that could not be read, with enough context to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionError {
    /// The file (or other label) the text came from.
    pub file: String,
    /// 1-based document number within a multi-document stream.
    pub document: Option<usize>,
    /// The skill or tool the document defines, when known.
    pub subject: Option<String>,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong and what was expected.
    pub message: String,
    /// The offending source line.
    pub source_line: Option<String>,
}

impl std::error::Error for DefinitionError {}

impl DefinitionError {
    pub(crate) fn from_yaml(
        file: &str,
        text: &str,
        document: Option<usize>,
        err: &yaml_serde::Error,
    ) -> Self {
        let location = err.location();
        let message = strip_location(&err.to_string());
        let line = location.as_ref().map(|l| l.line());
        let column = location.as_ref().map(|l| l.column());
        Self {
            file: file.to_owned(),
            document,
            subject: None,
            line,
            column,
            message,
            source_line: line
                .and_then(|n| text.lines().nth(n.saturating_sub(1)).map(str::to_owned)),
        }
    }

    pub(crate) fn at_document(
        file: &str,
        document: usize,
        subject: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.to_owned(),
            document: Some(document),
            subject: Some(subject.into()),
            line: None,
            column: None,
            message: message.into(),
            source_line: None,
        }
    }
}

/// yaml_serde appends ` at line L column C`; we print the location ourselves.
fn strip_location(message: &str) -> String {
    if let Some(at) = message.rfind(" at line ") {
        let tail = &message[at + " at line ".len()..];
        let mut parts = tail.splitn(3, ' ');
        let is_location = matches!(
            (parts.next(), parts.next(), parts.next()),
            (Some(line), Some("column"), Some(col))
                if line.chars().all(|c| c.is_ascii_digit())
                    && col.split(',').next().is_some_and(|c| c.chars().all(|c| c.is_ascii_digit()))
        );
        if is_location {
            return message[..at].to_owned();
        }
    }
    message.to_owned()
}

impl fmt::Display for DefinitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        f.write_str(": ")?;
        match (&self.subject, self.document) {
            (Some(subject), _) => write!(f, "`{subject}`: ")?,
            (None, Some(document)) if document > 1 => write!(f, "document {document}: ")?,
            _ => {}
        }
        f.write_str(&self.message)?;
        if let (Some(line), Some(source)) = (self.line, &self.source_line) {
            let gutter = line.to_string().len();
            let column = self.column.unwrap_or(1).max(1);
            let caret_pad: String = source
                .chars()
                .take(column - 1)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            write!(
                f,
                "\n{:gutter$} |\n{line} | {source}\n{:gutter$} | {caret_pad}^",
                "", ""
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::strip_location;

    #[test]
    fn strips_only_a_trailing_location() {
        assert_eq!(
            strip_location("unknown field `x` at line 3 column 5"),
            "unknown field `x`"
        );
        assert_eq!(strip_location("bad at line one"), "bad at line one");
    }
}
