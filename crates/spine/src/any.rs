//! A handshake of any protocol behind one type ([`AnyHandshake`]): what the drivers'
//! protocol registry hands out, so that a driver written once over [`Handshake`] runs a
//! protocol it was never compiled against, chosen at run time (an experiment file's
//! contender). The erasure keeps what drivers read (datagrams, timers, status, the
//! retransmission count) and turns the protocol's typed outcome into text at the edge.

use std::fmt;
use std::sync::Arc;

use crate::{Failure, Handshake, Now, ProtocolId, Role, Status, Step};

/// What a completed handshake agreed, as its protocol describes it.
#[derive(Clone)]
pub struct AnyNegotiated(Arc<dyn fmt::Debug + Send + Sync>);

impl fmt::Debug for AnyNegotiated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Why a handshake failed, as its protocol's own error says it.
#[derive(Clone)]
pub struct AnyError(Arc<dyn fmt::Display + Send + Sync>);

impl fmt::Debug for AnyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for AnyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The object-safe face of a [`Handshake`] (its associated types erased).
trait Erased: Send {
    fn protocol(&self) -> ProtocolId;
    fn role(&self) -> Role;
    fn start(&mut self, now: Now) -> Step;
    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step;
    fn deadline(&self) -> Option<u64>;
    fn handle_timeout(&mut self, now: Now) -> Step;
    fn delay_timers(&mut self, by_ns: u64);
    fn status(&self) -> Status<AnyNegotiated, AnyError>;
    fn retransmissions(&self) -> u32;
}

impl<H> Erased for H
where
    H: Handshake + Send,
    H::Negotiated: Send + Sync + 'static,
    H::Error: Send + Sync + 'static,
{
    fn protocol(&self) -> ProtocolId {
        Handshake::protocol(self)
    }
    fn role(&self) -> Role {
        Handshake::role(self)
    }
    fn start(&mut self, now: Now) -> Step {
        Handshake::start(self, now)
    }
    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        Handshake::handle_datagram(self, datagram, now)
    }
    fn deadline(&self) -> Option<u64> {
        Handshake::deadline(self)
    }
    fn handle_timeout(&mut self, now: Now) -> Step {
        Handshake::handle_timeout(self, now)
    }
    fn delay_timers(&mut self, by_ns: u64) {
        Handshake::delay_timers(self, by_ns)
    }
    fn status(&self) -> Status<AnyNegotiated, AnyError> {
        let erase = |e: H::Error| AnyError(Arc::new(e));
        match Handshake::status(self) {
            Status::Running => Status::Running,
            Status::Complete(n) => Status::Complete(AnyNegotiated(Arc::new(n))),
            Status::Failed(Failure::TimedOut { retransmissions }) => {
                Status::Failed(Failure::TimedOut { retransmissions })
            }
            Status::Failed(Failure::Peer(e)) => Status::Failed(Failure::Peer(erase(e))),
            Status::Failed(Failure::Local(e)) => Status::Failed(Failure::Local(erase(e))),
        }
    }
    fn retransmissions(&self) -> u32 {
        Handshake::retransmissions(self)
    }
}

/// One side of a handshake of a protocol chosen at run time.
pub struct AnyHandshake(Box<dyn Erased>);

impl AnyHandshake {
    pub fn new<H>(handshake: H) -> AnyHandshake
    where
        H: Handshake + Send + 'static,
        H::Negotiated: Send + Sync + 'static,
        H::Error: Send + Sync + 'static,
    {
        AnyHandshake(Box::new(handshake))
    }
}

impl fmt::Debug for AnyHandshake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyHandshake")
            .field("protocol", &self.0.protocol())
            .field("role", &self.0.role())
            .finish()
    }
}

impl Handshake for AnyHandshake {
    type Negotiated = AnyNegotiated;
    type Error = AnyError;
    type Records = ();

    fn protocol(&self) -> ProtocolId {
        self.0.protocol()
    }
    fn role(&self) -> Role {
        self.0.role()
    }
    fn start(&mut self, now: Now) -> Step {
        self.0.start(now)
    }
    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        self.0.handle_datagram(datagram, now)
    }
    fn deadline(&self) -> Option<u64> {
        self.0.deadline()
    }
    fn handle_timeout(&mut self, now: Now) -> Step {
        self.0.handle_timeout(now)
    }
    fn delay_timers(&mut self, by_ns: u64) {
        self.0.delay_timers(by_ns)
    }
    fn status(&self) -> Status<AnyNegotiated, AnyError> {
        self.0.status()
    }
    fn retransmissions(&self) -> u32 {
        self.0.retransmissions()
    }
}
