//! A byte stream read a line at a time through a [`Sieve`], which decides
//! what of each line reaches the reader: rmcp reads a stdio server's stdout
//! through the watcher (`process::StdoutWatch`), and the gateway reads its
//! client through the lane's sieve, which takes its calls out.
//!
//! Memory: the current line (up to the sieve's `max_line`), what is ready
//! for the reader, and one read chunk.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

const READ_CHUNK: usize = 8192;

/// A line's allocation bigger than this is not kept for the next line.
const KEEP_LINE: usize = 1 << 20;

/// What a [`Sifted`] stream does with each line.
pub trait Sieve {
    /// A line that reaches this many bytes (its newline not counted) before
    /// it ends is a long line (see [`long_line`](Self::long_line)).
    fn max_line(&self) -> usize;

    /// The current line reached [`max_line`](Self::max_line): `Ok` passes it
    /// on as it comes, unseen, up to its newline; an error ends the stream.
    fn long_line(&mut self) -> io::Result<()>;

    /// A whole line, without its newline (a last line without one too):
    /// appends what passes, with its newline, to `ready`. An error ends the
    /// stream, and nothing more of it is read.
    fn line(&mut self, line: &[u8], ready: &mut Vec<u8>) -> io::Result<()>;

    /// The stream has ended, at its end, at an error, or dropped (called
    /// again then).
    fn ended(&mut self) {}
}

/// `inner` read through `sieve` (see the module docs).
pub struct Sifted<R, S: Sieve> {
    inner: R,
    sieve: S,
    /// The current, unfinished line.
    line: Vec<u8>,
    /// The current line is a long one that passes as it comes.
    passing: bool,
    /// Bytes for the reader, from `ready_from` on.
    ready: Vec<u8>,
    ready_from: usize,
    at_end: bool,
}

impl<R, S: Sieve + std::fmt::Debug> std::fmt::Debug for Sifted<R, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sifted")
            .field("sieve", &self.sieve)
            .finish_non_exhaustive()
    }
}

impl<R, S: Sieve> Sifted<R, S> {
    pub fn new(inner: R, sieve: S) -> Self {
        Self {
            inner,
            sieve,
            line: Vec::new(),
            passing: false,
            ready: Vec::with_capacity(READ_CHUNK),
            ready_from: 0,
            at_end: false,
        }
    }

    pub(crate) fn sieve_mut(&mut self) -> &mut S {
        &mut self.sieve
    }

    fn scan(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            // `part` is up to the newline, `rest` what follows it.
            let (part, rest) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => match bytes.split_at_checked(at) {
                    Some((part, [_newline, rest @ ..])) => (part, Some(rest)),
                    _ => (bytes, None),
                },
                None => (bytes, None),
            };
            if self.passing {
                self.ready.extend_from_slice(part);
                if rest.is_some() {
                    self.ready.push(b'\n');
                    self.passing = false;
                }
            } else if self.line.len().saturating_add(part.len()) >= self.sieve.max_line() {
                self.sieve.long_line()?;
                self.ready.append(&mut self.line);
                self.ready.extend_from_slice(part);
                match rest {
                    Some(_) => self.ready.push(b'\n'),
                    None => self.passing = true,
                }
            } else {
                self.line.extend_from_slice(part);
                if rest.is_some() {
                    self.finish_line()?;
                }
            }
            match rest {
                Some(rest) => bytes = rest,
                None => break,
            }
        }
        Ok(())
    }

    /// Sifts `bytes` as if just read, and takes what is ready.
    #[cfg(test)]
    pub(crate) fn scan_taking(&mut self, bytes: &[u8]) -> io::Result<Vec<u8>> {
        self.scan(bytes)?;
        Ok(std::mem::take(&mut self.ready))
    }

    fn finish_line(&mut self) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        let result = self.sieve.line(&line, &mut self.ready);
        if line.capacity() <= KEEP_LINE {
            line.clear();
            self.line = line;
        }
        result
    }

    /// Ends the stream at `err`: what was ready is not handed on.
    fn fail(&mut self, err: io::Error) -> Poll<io::Result<()>> {
        self.ready.clear();
        self.ready_from = 0;
        self.at_end = true;
        self.sieve.ended();
        Poll::Ready(Err(err))
    }
}

impl<R: AsyncRead + Unpin, S: Sieve + Unpin> AsyncRead for Sifted<R, S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if let Some(pending) = this.ready.get(this.ready_from..)
                && !pending.is_empty()
            {
                let n = pending.len().min(buf.remaining());
                buf.put_slice(pending.get(..n).unwrap_or_default());
                this.ready_from += n;
                return Poll::Ready(Ok(()));
            }
            this.ready.clear();
            this.ready_from = 0;
            if this.at_end {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; READ_CHUNK];
            let mut chunk_buf = ReadBuf::new(&mut chunk);
            if let Err(err) =
                std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, &mut chunk_buf))
            {
                return this.fail(err);
            }
            let filled = chunk_buf.filled();
            let scanned = if filled.is_empty() {
                // The end: a last line without its newline is still a line.
                this.at_end = true;
                let last = if this.line.is_empty() {
                    Ok(())
                } else {
                    this.finish_line()
                };
                this.sieve.ended();
                last
            } else {
                this.scan(filled)
            };
            if let Err(err) = scanned {
                return this.fail(err);
            }
        }
    }
}

impl<R, S: Sieve> Drop for Sifted<R, S> {
    fn drop(&mut self) {
        self.sieve.ended();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Keeps lines not starting with `x`; a long line passes, or with
    /// `strict` ends the stream.
    struct Dropping {
        max: usize,
        strict: bool,
        ended: usize,
    }

    impl Sieve for Dropping {
        fn max_line(&self) -> usize {
            self.max
        }
        fn long_line(&mut self) -> io::Result<()> {
            if self.strict {
                Err(io::ErrorKind::InvalidData.into())
            } else {
                Ok(())
            }
        }
        fn line(&mut self, line: &[u8], ready: &mut Vec<u8>) -> io::Result<()> {
            if !line.starts_with(b"x") {
                ready.extend_from_slice(line);
                ready.push(b'\n');
            }
            Ok(())
        }
        fn ended(&mut self) {
            self.ended += 1;
        }
    }

    async fn sift(input: &[u8], max: usize, strict: bool) -> (io::Result<Vec<u8>>, usize) {
        let mut sifted = Sifted::new(
            input,
            Dropping {
                max,
                strict,
                ended: 0,
            },
        );
        let mut out = Vec::new();
        let read = sifted.read_to_end(&mut out).await.map(|_| out);
        let ended = sifted.sieve_mut().ended;
        (read, ended)
    }

    #[tokio::test]
    async fn lines_are_sifted_and_long_ones_pass_or_end_the_stream() {
        let (out, ended) = sift(b"a\nxb\nc", 100, false).await;
        assert_eq!(out.unwrap(), b"a\nc\n");
        assert_eq!(ended, 1);
        // A long line passes whole, unseen (an `x` line too), and the next
        // line is sifted again.
        let long = format!("x{}\nxdrop\nkeep\n", "y".repeat(20_000));
        let (out, _) = sift(long.as_bytes(), 100, false).await;
        let out = out.unwrap();
        assert_eq!(out.len(), 20_001 + 1 + 5);
        assert!(out.ends_with(b"y\nkeep\n"));
        let (out, ended) = sift(long.as_bytes(), 100, true).await;
        assert_eq!(out.unwrap_err().kind(), io::ErrorKind::InvalidData);
        assert_eq!(ended, 1);
    }
}
