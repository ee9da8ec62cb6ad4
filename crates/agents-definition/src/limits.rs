//! Input limits, checked before the YAML parser runs.
//!
//! libyaml's scanner keeps one "simple key" slot per open flow collection and
//! walks all of them for every token, so a file of nested `[`/`{` costs time
//! quadratic in its depth. [`check`] refuses a file that is too large or
//! nested too deep in one linear pass, before the parser sees it.

use crate::DefinitionError;
use crate::error::Limit;

/// yaml_serde refuses anything nested deeper than this anyway.
pub const HARD_MAX_DEPTH: usize = 128;

/// The most values one YAML document may hold, as [`too_many_values`]
/// counts them before the parser runs. The parser holds the events of the
/// document it reads, and a document costs about 250 bytes a value parsed
/// whatever its text: `[],` is three bytes, so a 16 MiB file of them cost
/// gigabytes where its size promised megabytes. A quarter of a million
/// values is far past any skill or tool (or a `cleveragents-export/2`
/// document, which holds one); it keeps a document's parse under about
/// 100 MB.
pub const MAX_VALUES: usize = 250_000;

/// How large and how deeply nested one input may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest input, in bytes.
    pub max_bytes: usize,
    /// Deepest nesting of collections (flow `[`/`{` and block indentation),
    /// at most [`HARD_MAX_DEPTH`].
    pub max_depth: usize,
    /// Largest single YAML document, in bytes. The parser holds every event
    /// of the document it is reading, about 12 bytes per byte of ordinary
    /// YAML (and at most [`MAX_VALUES`] values' worth), so this, not
    /// `max_bytes`, bounds what a stream of documents costs to parse.
    pub max_document_bytes: usize,
}

/// Default nesting limit for every kind of file.
pub const DEFAULT_MAX_DEPTH: usize = 64;

impl Limits {
    /// Skill definition files: 16 MiB (one document may be the whole file).
    pub const SKILLS: Self = Self {
        max_bytes: 16 << 20,
        max_depth: DEFAULT_MAX_DEPTH,
        max_document_bytes: usize::MAX,
    };
    /// Custom tool files: 16 MiB (one document may be the whole file).
    pub const TOOLS: Self = Self {
        max_bytes: 16 << 20,
        max_depth: DEFAULT_MAX_DEPTH,
        max_document_bytes: usize::MAX,
    };
    /// Plans: 1 MiB.
    pub const PLAN: Self = Self {
        max_bytes: 1 << 20,
        max_depth: DEFAULT_MAX_DEPTH,
        max_document_bytes: usize::MAX,
    };
    /// Exports of a whole registry: 256 MiB, each document (one skill or
    /// tool, or a whole `cleveragents-export/1` registry) at most as large
    /// as a skill file may be, 16 MiB.
    pub const EXPORT: Self = Self {
        max_bytes: 256 << 20,
        max_depth: DEFAULT_MAX_DEPTH,
        max_document_bytes: 16 << 20,
    };

    /// The same limits with a different nesting depth (capped at
    /// [`HARD_MAX_DEPTH`]).
    #[must_use]
    pub const fn with_max_depth(self, max_depth: usize) -> Self {
        let max_depth = if max_depth > HARD_MAX_DEPTH {
            HARD_MAX_DEPTH
        } else {
            max_depth
        };
        Self { max_depth, ..self }
    }

    /// The same limits with a different size.
    #[must_use]
    pub const fn with_max_bytes(self, max_bytes: usize) -> Self {
        Self { max_bytes, ..self }
    }

    /// The same limits with a different size for one document.
    #[must_use]
    pub const fn with_max_document_bytes(self, max_document_bytes: usize) -> Self {
        Self {
            max_document_bytes,
            ..self
        }
    }

    /// Refuses an input of `len` bytes when it is larger than `max_bytes`:
    /// a reader asks before it reads (and holds) the file. `exact` is false
    /// for a stream read only up to the limit, whose size is not known.
    pub fn check_size(&self, len: u64, exact: bool, file: &str) -> Result<(), DefinitionError> {
        if len > self.max_bytes as u64 {
            let size = if exact {
                format!("file is {len} bytes,")
            } else {
                "input is".to_owned()
            };
            return Err(DefinitionError::whole_file(
                file,
                format!(
                    "{size} larger than the limit of {} bytes for this kind of file",
                    self.max_bytes
                ),
            )
            .breaking(Limit::Bytes));
        }
        Ok(())
    }
}

/// Refuses `text` when it is larger than `limits.max_bytes` or nests deeper
/// than `limits.max_depth`, in one pass over its bytes.
pub(crate) fn check(text: &str, file: &str, limits: &Limits) -> Result<(), DefinitionError> {
    limits.check_size(text.len() as u64, true, file)?;
    if text.len() > limits.max_document_bytes
        && let Some((offset, len)) = oversized_document(text, limits.max_document_bytes)
    {
        return Err(DefinitionError::at_offset(
            file,
            text,
            offset,
            format!(
                "the document starting here is {len} bytes, larger than the limit of {} bytes \
                 for one document (a document is parsed whole)",
                limits.max_document_bytes
            ),
        )
        .breaking(Limit::DocumentBytes));
    }
    if let Some(offset) = too_many_values(text, MAX_VALUES) {
        return Err(DefinitionError::at_offset(
            file,
            text,
            offset,
            format!(
                "the document holding this line has more than {MAX_VALUES} values, the most one \
                 document may hold (each costs the parser about as much memory whatever its size)"
            ),
        )
        .breaking(Limit::Values));
    }
    if let Some(offset) = too_deep(text, limits.max_depth.min(HARD_MAX_DEPTH)) {
        return Err(DefinitionError::at_offset(
            file,
            text,
            offset,
            format!(
                "nested deeper than {} levels (the nesting limit)",
                limits.max_depth.min(HARD_MAX_DEPTH)
            ),
        )
        .breaking(Limit::Depth));
    }
    Ok(())
}

/// Byte offset where nesting first exceeds `max_depth`, or `None`.
///
/// Flow depth counts `[` and `{` minus `]` and `}` outside comments, reset at
/// each document marker. Quoted text counts too: a scanner that tried to
/// skip quotes could be fooled by a stray `'` into letting a deep file
/// through. Skipping comments is safe: ` #` outside quotes always starts one,
/// and inside quotes no bracket counts for YAML either. Block depth is the
/// number of open indentation levels, each `- ` or `? ` counting as one more.
pub(crate) fn too_deep(text: &str, max_depth: usize) -> Option<usize> {
    let mut flow = 0usize;
    let mut indents: Vec<usize> = Vec::new();
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        let bytes = line.as_bytes();
        let start = offset;
        offset += bytes.len();
        if is_document_marker(bytes) {
            flow = 0;
            indents.clear();
            continue;
        }
        let indent = bytes.iter().take_while(|b| **b == b' ').count();
        let content = bytes.get(indent..).unwrap_or_default();
        let blank = matches!(content.first(), None | Some(b'\n' | b'\r' | b'#'));
        if flow == 0 && !blank {
            while indents.last().is_some_and(|top| *top >= indent) {
                indents.pop();
            }
            indents.push(indent);
            // `- - - x`: each indicator after the first (whose collection is
            // the one at `indent`) opens one more block collection.
            let mut column = indent;
            let mut rest = content;
            let mut first = true;
            while let [b'-' | b'?' | b':', b' ', tail @ ..] = rest {
                column += 2;
                if !first {
                    indents.push(column);
                }
                first = false;
                let spaces = tail.iter().take_while(|b| **b == b' ').count();
                column += spaces;
                rest = tail.get(spaces..).unwrap_or_default();
            }
            if indents.len() > max_depth {
                return Some(start + indent);
            }
        }
        let mut previous = b' ';
        for (at, byte) in bytes.iter().enumerate() {
            match byte {
                b'#' if matches!(previous, b' ' | b'\t') => break,
                b'[' | b'{' => {
                    flow += 1;
                    if flow + indents.len() > max_depth {
                        return Some(start + at);
                    }
                }
                b']' | b'}' => flow = flow.saturating_sub(1),
                _ => {}
            }
            previous = *byte;
        }
    }
    None
}

/// Byte offset of the line where one document's values, as counted here,
/// pass `max`, or `None`. Each line holding something counts one (a block
/// value, key or item), and so does every `[`, `{` and `,` (a flow
/// collection, or one more of its items): at least as many as the values
/// the line opens, short of a `- - - x` line or the keys of a flow map, so
/// about the document's number of values. Quoted text and comments count
/// too (a scanner that tried to skip them could be fooled by a stray `'`
/// or a ` #` in quotes): a document would need a quarter of a million
/// commas in its text to be refused for them.
pub(crate) fn too_many_values(text: &str, max: usize) -> Option<usize> {
    let mut count = 0usize;
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        let bytes = line.as_bytes();
        let start = offset;
        offset += bytes.len();
        if is_document_marker(bytes) {
            count = 0;
            continue;
        }
        let content = bytes.trim_ascii_start();
        if !matches!(content.first(), None | Some(b'#')) {
            count += 1;
        }
        // Comments count too: a ` #` inside quotes is no comment, and
        // skipping from it let a line of millions of values through
        // uncounted. Counting too much is the safe side.
        count += bytes
            .iter()
            .filter(|byte| matches!(byte, b'[' | b'{' | b','))
            .count();
        if count > max {
            return Some(start);
        }
    }
    None
}

/// The first document of `text` longer than `max` bytes: its start and
/// length. Documents are cut at every `---` or `...` line: YAML lets no
/// scalar, quoted or not, hold such a line, so no document spans one.
fn oversized_document(text: &str, max: usize) -> Option<(usize, usize)> {
    let mut start = 0usize;
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        if is_document_marker(line.as_bytes()) {
            if offset - start > max {
                return Some((start, offset - start));
            }
            start = offset;
        }
        offset += line.len();
    }
    (offset - start > max).then_some((start, offset - start))
}

fn is_document_marker(line: &[u8]) -> bool {
    matches!(
        line,
        [b'-', b'-', b'-']
            | [b'.', b'.', b'.']
            | [b'-', b'-', b'-', b' ' | b'\t' | b'\n' | b'\r', ..]
            | [b'.', b'.', b'.', b' ' | b'\t' | b'\n' | b'\r', ..]
    )
}

#[cfg(test)]
mod tests {
    use super::{oversized_document, too_deep, too_many_values};

    #[test]
    fn finds_the_first_document_over_the_limit() {
        let text = "a: 1\n---\nb: 22222\n...\nc: 3\n";
        // "a: 1\n" | "---\nb: 22222\n" | "...\nc: 3\n"
        assert_eq!(oversized_document(text, 5), Some((5, 13)));
        assert_eq!(oversized_document(text, 13), None);
        assert_eq!(oversized_document("x: 123456\n", 4), Some((0, 10)));
        // A marker-like text inside a line does not cut.
        assert_eq!(oversized_document("a: '---'\nb: 1\n", 10), Some((0, 14)));
    }

    #[test]
    fn counts_about_one_value_per_line_and_flow_item() {
        assert_eq!(too_many_values("a: 1\nb: [1, 2, 3]\n", 6), None);
        // 2 lines, `[` and two commas: 5.
        assert_eq!(too_many_values("a: 1\nb: [1, 2, 3]\n", 4), Some(5));
        // Blank lines count nothing; each document starts at 0. A comment's
        // commas count: a ` #` in quotes is no comment.
        assert_eq!(too_many_values("\n\na: 1\n", 1), None);
        assert_eq!(too_many_values("a: [\" #\", 1, 2]\n", 3), Some(0));
        assert_eq!(too_many_values("a: [1]\n---\nb: [2]\n", 2), None);
        let dense = format!("k: [{}0]\n", "[],".repeat(1000));
        assert_eq!(too_many_values(&dense, 1000), Some(0));
    }

    #[test]
    fn counts_flow_and_block_nesting() {
        assert_eq!(too_deep("a: [[[]]]\n", 3), Some(5));
        assert_eq!(too_deep("a: [[[]]]\n", 4), None);
        assert_eq!(too_deep("a:\n  b:\n    c: 1\n", 2), Some(12));
        assert_eq!(too_deep("a:\n  b:\n    c: 1\n", 3), None);
        assert_eq!(too_deep("- - - x\n", 2), Some(0));
        assert_eq!(too_deep("- - - x\n", 3), None);
        assert_eq!(too_deep("a: 1 # [[[[[[\n", 2), None);
        assert_eq!(too_deep("a: [[[\n---\nb: [[[\n", 4), None);
    }
}
