//! Everything a command prints to stdout goes through [`Out`].
//!
//! The standard library's `println!` panics when stdout is a pipe its reader has closed
//! (`tabula info … | head -3`): the process ignores SIGPIPE, so the write fails with
//! `BrokenPipe`, and `println!` turns that into "failed printing to stdout". Here a write
//! returns the error instead, a command passes it up with `?`, and `main` turns a
//! `BrokenPipe` into [`Failure::Closed`](crate::Failure::Closed): the command stops at once and
//! exits with status 141 (128 + SIGPIPE, the status a shell shows for `cat` in the same place)
//! without a message. The crate denies `clippy::print_stdout`, so no command can print any
//! other way.

use std::io::{self, BufWriter, StdoutLock, Write};

/// The command's stdout, buffered; flushed by `main` when the command ends (and by the
/// buffer whenever it fills).
pub struct Out {
    inner: BufWriter<StdoutLock<'static>>,
}

impl Out {
    /// Stdout, locked for the life of the command.
    pub fn stdout() -> Out {
        Out {
            inner: BufWriter::with_capacity(64 * 1024, io::stdout().lock()),
        }
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
