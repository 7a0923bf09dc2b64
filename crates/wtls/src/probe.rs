//! Per-message and per-operation timing of a handshake, under the thesis' names
//! (Tables 3.4 and 3.6: `T_M_C_CH` ... `T_S_S_SFIN`).
//!
//! The engine never reads a clock itself: the caller hands it a [`Clock`]. Reading the
//! thread CPU clock is a system call (about 0.2-0.3 us here), which is not negligible
//! next to a 45 us elliptic-curve handshake, so the probe reads as few clocks as it can:
//! consecutive messages share their boundary stamp (the end of one message is the start
//! of the next), and operations read the wall clock only (a vDSO call, about 20 ns).
//!
//! [`ProbeLevel::Full`] reads the thread CPU clock once at the start and once at the end
//! of each job (a datagram taken in, or a flight produced) and shares the job's CPU time
//! among its messages in proportion to their wall time: within one job on one thread,
//! wall and CPU time differ only by preemption, so the split is faithful while the
//! probe's cost stays under 1% of a handshake. [`ProbeLevel::ExactCpu`] reads the CPU
//! clock at every message boundary instead (exact per-message CPU, a few percent of
//! cost). [`ProbeLevel::Off`] reads nothing. The runner measures and reports the cost.

use std::sync::Arc;

/// A wall-clock and thread-CPU reading, in nanoseconds from arbitrary origins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    pub wall_ns: u64,
    pub cpu_ns: u64,
}

/// The caller's clocks. `wall_ns` must be monotonic; `cpu_ns` is the calling thread's
/// CPU time.
pub trait Clock: Send + Sync {
    fn wall_ns(&self) -> u64;
    fn cpu_ns(&self) -> u64;
    fn stamp(&self) -> Stamp {
        Stamp {
            wall_ns: self.wall_ns(),
            cpu_ns: self.cpu_ns(),
        }
    }
}

/// A clock that always reads zero: for runs that do not measure.
#[derive(Debug, Default)]
pub struct NoClock;

impl Clock for NoClock {
    fn wall_ns(&self) -> u64 {
        0
    }
    fn cpu_ns(&self) -> u64 {
        0
    }
}

/// How much the probe records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProbeLevel {
    /// Nothing: no clock is read.
    Off,
    /// Wall time per message and operation; thread CPU per job, shared among the
    /// job's messages by their wall time.
    #[default]
    Full,
    /// Wall and thread CPU read at every message boundary; wall per operation.
    ExactCpu,
}

/// The thesis' per-message time components (Tables 3.4 and 3.6). `SKX` (anonymous
/// ServerKeyExchange) and `APP` (application data) are not in the thesis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Message {
    /// ClientHello
    CH,
    /// ServerHello
    SH,
    /// server Certificate
    SCERT,
    /// ServerKeyExchange (anonymous suites only)
    SKX,
    /// CertificateRequest
    CERTREQ,
    /// ServerHelloDone
    SHD,
    /// client Certificate
    CCERT,
    /// ClientKeyExchange (for mutual ECDH_ECDSA: the key computation that replaces it)
    CKX,
    /// CertificateVerify
    CERTVRFY,
    /// client ChangeCipherSpec
    CCCS,
    /// client Finished
    CFIN,
    /// server ChangeCipherSpec
    SCCS,
    /// server Finished
    SFIN,
}

impl Message {
    pub const ALL: [Message; 13] = [
        Message::CH,
        Message::SH,
        Message::SCERT,
        Message::SKX,
        Message::CERTREQ,
        Message::SHD,
        Message::CCERT,
        Message::CKX,
        Message::CERTVRFY,
        Message::CCCS,
        Message::CFIN,
        Message::SCCS,
        Message::SFIN,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Message::CH => "CH",
            Message::SH => "SH",
            Message::SCERT => "SCERT",
            Message::SKX => "SKX",
            Message::CERTREQ => "CERTREQ",
            Message::SHD => "SHD",
            Message::CCERT => "CCERT",
            Message::CKX => "CKX",
            Message::CERTVRFY => "CERTVRFY",
            Message::CCCS => "CCCS",
            Message::CFIN => "CFIN",
            Message::SCCS => "SCCS",
            Message::SFIN => "SFIN",
        }
    }
}

/// Operations inside a message whose share the thesis reports (ECDH, MS, RSAENC,
/// RSADEC), plus the other public-key operations we time separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// ECDH shared-secret computation
    ECDH,
    /// master secret from the pre-master secret
    MS,
    /// RSA encryption of the RSA secret (client)
    RSAENC,
    /// RSA decryption of the RSA secret (server)
    RSADEC,
    /// certificate validation (signature, issuer, subject, validity)
    CERTCHECK,
    /// CertificateVerify signature (client)
    CVSIGN,
    /// CertificateVerify verification (server)
    CVVERIFY,
    /// generation of an ephemeral EC key for ClientKeyExchange
    KEYGEN,
    /// Finished computation or check
    FIN,
}

impl Operation {
    pub fn name(self) -> &'static str {
        match self {
            Operation::ECDH => "ECDH",
            Operation::MS => "MS",
            Operation::RSAENC => "RSAENC",
            Operation::RSADEC => "RSADEC",
            Operation::CERTCHECK => "CERTCHECK",
            Operation::CVSIGN => "CVSIGN",
            Operation::CVVERIFY => "CVVERIFY",
            Operation::KEYGEN => "KEYGEN",
            Operation::FIN => "FIN",
        }
    }

    /// Public-key operations: the ones whose sum bounds a handshake's CPU time.
    pub fn is_public_key(self) -> bool {
        !matches!(self, Operation::MS | Operation::FIN)
    }
}

/// One measured message: processing time and its size on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageTiming {
    pub message: Message,
    pub wall_ns: u64,
    pub cpu_ns: u64,
    /// Bytes of the handshake message (type, length, body) or of the CCS record body.
    pub bytes: usize,
}

/// One measured operation inside `message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationTiming {
    pub message: Message,
    pub operation: Operation,
    pub wall_ns: u64,
}

/// One datagram sent or received by this side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramTiming {
    pub sent: bool,
    pub bytes: usize,
    pub records: usize,
}

/// What one side measured over one handshake.
#[derive(Debug, Clone, Default)]
pub struct HandshakeProbe {
    pub messages: Vec<MessageTiming>,
    pub operations: Vec<OperationTiming>,
    pub datagrams: Vec<DatagramTiming>,
}

impl HandshakeProbe {
    /// Sum of the per-message CPU times (the side's T_PD, Eq. 3.2/3.3, 3.5/3.6).
    pub fn total_cpu_ns(&self) -> u64 {
        self.messages.iter().map(|m| m.cpu_ns).sum()
    }

    pub fn total_wall_ns(&self) -> u64 {
        self.messages.iter().map(|m| m.wall_ns).sum()
    }

    /// Wall time of the public-key operations.
    pub fn public_key_wall_ns(&self) -> u64 {
        self.operations
            .iter()
            .filter(|o| o.operation.is_public_key())
            .map(|o| o.wall_ns)
            .sum()
    }

    pub fn message(&self, m: Message) -> Option<&MessageTiming> {
        self.messages.iter().find(|t| t.message == m)
    }

    pub fn operation(&self, m: Message, op: Operation) -> Option<&OperationTiming> {
        self.operations
            .iter()
            .find(|t| t.message == m && t.operation == op)
    }

    pub fn bytes_sent(&self) -> usize {
        self.datagrams
            .iter()
            .filter(|d| d.sent)
            .map(|d| d.bytes)
            .sum()
    }

    pub fn bytes_received(&self) -> usize {
        self.datagrams
            .iter()
            .filter(|d| !d.sent)
            .map(|d| d.bytes)
            .sum()
    }
}

/// The recorder the engine drives. Message boundaries share stamps: `begin_job` takes
/// the first stamp, and each `end_message` closes the current message and opens the
/// next one with the same reading.
pub struct Probe {
    clock: Arc<dyn Clock>,
    level: ProbeLevel,
    mark: Stamp,
    /// CPU reading at the start of the current job, and its first message's index.
    job_cpu_start: u64,
    job_first_message: usize,
    pub data: HandshakeProbe,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe")
            .field("level", &self.level)
            .field("data", &self.data)
            .finish()
    }
}

impl Probe {
    pub fn new(clock: Arc<dyn Clock>, level: ProbeLevel) -> Self {
        Probe {
            clock,
            level,
            mark: Stamp::default(),
            job_cpu_start: 0,
            job_first_message: 0,
            // Room for a whole handshake up front: no reallocation while measuring.
            data: if level == ProbeLevel::Off {
                HandshakeProbe::default()
            } else {
                HandshakeProbe {
                    messages: Vec::with_capacity(16),
                    operations: Vec::with_capacity(16),
                    datagrams: Vec::with_capacity(8),
                }
            },
        }
    }

    /// A probe that records nothing. It shares one clock object with every other such
    /// probe, so a connection that is not measured allocates nothing for it.
    pub fn off() -> Self {
        static NO_CLOCK: std::sync::OnceLock<Arc<NoClock>> = std::sync::OnceLock::new();
        let clock: Arc<dyn Clock> = NO_CLOCK.get_or_init(|| Arc::new(NoClock)).clone();
        Probe::new(clock, ProbeLevel::Off)
    }

    pub fn enabled(&self) -> bool {
        self.level != ProbeLevel::Off
    }

    /// Start of a unit of work (a datagram taken in, or a flight to produce).
    pub fn begin_job(&mut self) {
        if self.enabled() {
            self.mark = self.clock.stamp();
            self.job_cpu_start = self.mark.cpu_ns;
            self.job_first_message = self.data.messages.len();
        }
    }

    /// End of the job: with [`ProbeLevel::Full`], its CPU time is shared among the
    /// messages it produced, in proportion to their wall time.
    pub fn end_job(&mut self) {
        if self.level != ProbeLevel::Full {
            return;
        }
        let cpu = self.clock.cpu_ns().saturating_sub(self.job_cpu_start);
        let first = self.job_first_message.min(self.data.messages.len());
        let messages = &mut self.data.messages[first..];
        let wall: u64 = messages.iter().map(|m| m.wall_ns).sum();
        if wall == 0 {
            return;
        }
        for m in messages.iter_mut() {
            m.cpu_ns = (u128::from(cpu) * u128::from(m.wall_ns) / u128::from(wall)) as u64;
        }
        self.job_first_message = self.data.messages.len();
    }

    /// The current message is done: record it and start the next one at the same stamp.
    pub fn end_message(&mut self, message: Message, bytes: usize) {
        if !self.enabled() {
            return;
        }
        let now = if self.level == ProbeLevel::ExactCpu {
            self.clock.stamp()
        } else {
            Stamp {
                wall_ns: self.clock.wall_ns(),
                cpu_ns: self.mark.cpu_ns,
            }
        };
        self.data.messages.push(MessageTiming {
            message,
            wall_ns: now.wall_ns.saturating_sub(self.mark.wall_ns),
            cpu_ns: now.cpu_ns.saturating_sub(self.mark.cpu_ns),
            bytes,
        });
        self.mark = now;
    }

    /// Time `f` as `operation` inside `message` (wall clock only; see the module doc).
    pub fn operation<T>(
        &mut self,
        message: Message,
        operation: Operation,
        f: impl FnOnce() -> T,
    ) -> T {
        if !self.enabled() {
            return f();
        }
        let start = self.clock.wall_ns();
        let out = f();
        let wall_ns = self.clock.wall_ns().saturating_sub(start);
        self.data.operations.push(OperationTiming {
            message,
            operation,
            wall_ns,
        });
        out
    }

    /// How much has been recorded so far, to [`Probe::rollback`] to.
    pub(crate) fn checkpoint(&self) -> [usize; 3] {
        [
            self.data.messages.len(),
            self.data.operations.len(),
            self.data.datagrams.len(),
        ]
    }

    /// Forget what was recorded after `checkpoint`: the input was dropped, and the
    /// handshake's timings must not count the work of an input it never took in.
    pub(crate) fn rollback(&mut self, checkpoint: [usize; 3]) {
        let [messages, operations, datagrams] = checkpoint;
        self.data.messages.truncate(messages);
        self.data.operations.truncate(operations);
        self.data.datagrams.truncate(datagrams);
    }

    pub fn datagram(&mut self, sent: bool, bytes: usize, records: usize) {
        self.data.datagrams.push(DatagramTiming {
            sent,
            bytes,
            records,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A clock that advances 10 ns wall and 7 ns CPU per reading.
    #[derive(Default)]
    struct Ticking(AtomicU64);
    impl Clock for Ticking {
        fn wall_ns(&self) -> u64 {
            self.0.fetch_add(10, Ordering::SeqCst)
        }
        fn cpu_ns(&self) -> u64 {
            self.0.load(Ordering::SeqCst) / 10 * 7
        }
    }

    #[test]
    fn messages_share_boundaries() {
        let mut p = Probe::new(Arc::new(Ticking::default()), ProbeLevel::ExactCpu);
        p.begin_job();
        p.end_message(Message::CH, 40);
        p.end_message(Message::SH, 30);
        assert_eq!(p.data.messages.len(), 2);
        assert_eq!(p.data.messages[0].wall_ns, 10);
        assert_eq!(p.data.messages[1].wall_ns, 10);
        assert_eq!(p.data.total_wall_ns(), 20);
    }

    #[test]
    fn full_level_shares_job_cpu_by_wall_time() {
        let mut p = Probe::new(Arc::new(Ticking::default()), ProbeLevel::Full);
        p.begin_job();
        p.end_message(Message::CH, 40);
        p.end_message(Message::SH, 30);
        p.end_job();
        let cpu: Vec<u64> = p.data.messages.iter().map(|m| m.cpu_ns).collect();
        assert_eq!(p.data.messages[0].wall_ns, p.data.messages[1].wall_ns);
        assert_eq!(cpu[0], cpu[1]);
        assert!(cpu[0] > 0);
    }

    #[test]
    fn off_records_nothing() {
        let mut p = Probe::off();
        p.begin_job();
        p.end_message(Message::CH, 1);
        let v = p.operation(Message::CKX, Operation::ECDH, || 5);
        assert_eq!(v, 5);
        assert!(p.data.messages.is_empty() && p.data.operations.is_empty());
    }
}
