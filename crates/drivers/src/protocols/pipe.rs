//! In-memory transports for OpenSSL's `SslStream`: a datagram pipe that keeps every
//! write as one datagram (what DTLS needs: OpenSSL buffers a flight and flushes it in
//! MTU-sized writes, so one write is one UDP payload), and a byte-stream pipe for TLS.

use std::collections::VecDeque;
use std::io::{self, Read, Write};

/// One side's end of an in-memory datagram link. Reading with nothing queued answers
/// `WouldBlock`, so OpenSSL returns `WANT_READ` and the driver decides what comes next.
#[derive(Debug, Default)]
pub struct DatagramPipe {
    /// Datagrams received, oldest first.
    pub inbox: VecDeque<Vec<u8>>,
    /// Datagrams written since the driver last took them.
    pub outbox: Vec<Vec<u8>>,
}

impl DatagramPipe {
    /// Takes what was written.
    pub fn take_outbox(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.outbox)
    }
}

impl Read for DatagramPipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inbox.pop_front() {
            // A datagram longer than the buffer is truncated, as recv(2) would.
            Some(d) => {
                let n = d.len().min(buf.len());
                buf[..n].copy_from_slice(&d[..n]);
                Ok(n)
            }
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl Write for DatagramPipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.outbox.push(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One side's end of an in-memory byte stream (TLS over TCP without the TCP).
#[derive(Debug, Default)]
pub struct StreamPipe {
    /// Bytes received and not yet read.
    pub inbox: VecDeque<u8>,
    /// Bytes written since the driver last took them.
    pub outbox: Vec<u8>,
}

impl Read for StreamPipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.inbox.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = self.inbox.len().min(buf.len());
        for (dst, src) in buf.iter_mut().zip(self.inbox.drain(..n)) {
            *dst = src;
        }
        Ok(n)
    }
}

impl Write for StreamPipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.outbox.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagram_boundaries_survive_and_empty_reads_would_block() {
        let mut p = DatagramPipe::default();
        p.write_all(b"one").unwrap();
        p.write_all(b"two!").unwrap();
        let out = p.take_outbox();
        assert_eq!(out, vec![b"one".to_vec(), b"two!".to_vec()]);
        p.inbox.extend(out);
        let mut buf = [0u8; 16];
        assert_eq!(p.read(&mut buf).unwrap(), 3);
        assert_eq!(p.read(&mut buf).unwrap(), 4);
        assert_eq!(
            p.read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
    }

    #[test]
    fn stream_reads_across_writes() {
        let mut p = StreamPipe::default();
        p.inbox.extend(b"abcdef");
        let mut buf = [0u8; 4];
        assert_eq!(p.read(&mut buf).unwrap(), 4);
        assert_eq!(p.read(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"ef");
    }
}
