//! Bounded text: every result stays within the limit, and says what was cut.

use std::collections::VecDeque;

/// Room kept under the limit for the note that says what was cut.
pub(crate) const NOTE_ROOM: usize = 256;

/// The longest line `grep` shows whole, in bytes (a minified file is one
/// line of megabytes).
pub(crate) const MAX_LINE: usize = 1024;

/// The longest prefix of `text` that is at most `max` bytes and ends on a
/// character boundary.
pub(crate) fn floor(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

/// `line` cut to [`MAX_LINE`] bytes, saying how much was cut.
pub(crate) fn cut_line(line: &str) -> String {
    if line.len() <= MAX_LINE {
        return line.to_owned();
    }
    let kept = floor(line, MAX_LINE);
    format!(
        "{kept} [… {} more bytes of this line cut]",
        line.len() - kept.len()
    )
}

/// Collects text up to `cap` bytes; what does not fit is counted, not kept.
#[derive(Debug)]
pub(crate) struct Collector {
    text: String,
    cap: usize,
    cut: bool,
}

impl Collector {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            text: String::new(),
            cap: cap.saturating_sub(NOTE_ROOM).max(1),
            cut: false,
        }
    }

    /// Adds `line` and a newline; false (and nothing added) once it would
    /// go past the limit.
    pub(crate) fn line(&mut self, line: &str) -> bool {
        if self.cut || self.text.len() + line.len() + 1 > self.cap {
            self.cut = true;
            return false;
        }
        self.text.push_str(line);
        self.text.push('\n');
        true
    }

    /// Adds as much of `text` as fits; false when some did not.
    pub(crate) fn partial(&mut self, text: &str) -> bool {
        let room = self.cap.saturating_sub(self.text.len());
        let kept = floor(text, room);
        self.text.push_str(kept);
        if kept.len() < text.len() {
            self.cut = true;
        }
        !self.cut
    }

    pub(crate) fn is_cut(&self) -> bool {
        self.cut
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The text, and the note (in brackets, on a line of its own) when
    /// something was cut.
    pub(crate) fn finish(mut self, note: impl FnOnce() -> String) -> (String, bool) {
        if self.cut {
            if !self.text.is_empty() && !self.text.ends_with('\n') {
                self.text.push('\n');
            }
            self.text.push('[');
            self.text.push_str(floor(&note(), NOTE_ROOM - 4));
            self.text.push_str("]\n");
        }
        (self.text, self.cut)
    }
}

/// The first and last bytes of a stream (a process's output), at most
/// `cap` in all; the middle is counted.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl HeadTail {
    /// Keeps the head only when `keep_tail` is false (a diff is read from
    /// the top), half and half otherwise (a build's errors are at the end).
    pub(crate) fn new(cap: usize, keep_tail: bool) -> Self {
        let cap = cap.saturating_sub(NOTE_ROOM).max(2);
        let tail_cap = if keep_tail { cap / 2 } else { 0 };
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap: cap - tail_cap,
            tail_cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let (first, rest) = bytes.split_at(room.min(bytes.len()));
            self.head.extend_from_slice(first);
            bytes = rest;
        }
        if self.tail_cap == 0 {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            bytes = bytes.get(bytes.len() - self.tail_cap..).unwrap_or_default();
        } else {
            let over = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..over);
        }
        self.tail.extend(bytes);
    }

    /// How many bytes were pushed in all.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The text (invalid UTF-8 replaced), with a note where the middle (or
    /// the end) was cut; and whether something was.
    pub(crate) fn finish(self, what: &str) -> (String, bool) {
        let kept = self.head.len() as u64 + self.tail.len() as u64;
        let cut = self.total - kept;
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if cut == 0 {
            let mut whole = self.head;
            whole.extend_from_slice(&tail);
            return (String::from_utf8_lossy(&whole).into_owned(), false);
        }
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if self.tail_cap == 0 {
            text.push_str(&format!(
                "[cut: {cut} more bytes of {what} not shown; {} in all]\n",
                self.total
            ));
        } else {
            text.push_str(&format!(
                "[… {cut} bytes of {what} cut from the middle; {} in all …]\n",
                self.total
            ));
            text.push_str(&String::from_utf8_lossy(&tail));
        }
        (text, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_keeps_both_ends_and_counts_the_middle() {
        let mut stream = HeadTail::new(NOTE_ROOM + 10, true);
        for chunk in [b"01234".as_slice(), b"56789abcdef", b"ghij"] {
            stream.push(chunk);
        }
        let (text, cut) = stream.finish("stdout");
        assert!(cut);
        assert!(
            text.starts_with("01234\n[… 10 bytes of stdout cut from the middle; 20 in all …]\n")
        );
        assert!(text.ends_with("fghij"), "{text}");
    }

    #[test]
    fn head_tail_whole_when_it_fits() {
        let mut stream = HeadTail::new(NOTE_ROOM + 10, true);
        stream.push(b"0123");
        stream.push(b"4567");
        assert_eq!(stream.finish("stdout"), ("01234567".to_owned(), false));
        let mut head = HeadTail::new(NOTE_ROOM + 4, false);
        head.push(b"abcdefgh");
        let (text, cut) = head.finish("output");
        assert!(cut);
        assert_eq!(
            text,
            "abcd\n[cut: 4 more bytes of output not shown; 8 in all]\n"
        );
    }

    #[test]
    fn collector_stops_at_the_cap_and_notes_it() {
        let mut out = Collector::new(NOTE_ROOM + 8);
        assert!(out.line("abc"));
        assert!(!out.line("defgh"));
        assert!(!out.line("x"));
        let (text, cut) = out.finish(|| "cut: 2 more lines".into());
        assert!(cut);
        assert_eq!(text, "abc\n[cut: 2 more lines]\n");
        assert_eq!(floor("é", 1), "");
        assert!(cut_line(&"x".repeat(MAX_LINE + 5)).ends_with("[… 5 more bytes of this line cut]"));
    }
}
