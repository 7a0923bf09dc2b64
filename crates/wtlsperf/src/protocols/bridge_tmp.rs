//! TEMPORARY (not for merge): the old datagram `Endpoint` adapters seen through the
//! spine's `Handshake`, until the DTLS and EDHOC adapters implement it themselves.

use std::cell::RefCell;
use std::time::Duration;

use wtlsperf_spine::{Failure, Handshake, Now, Protocol, Role, Status, Step};

use super::Endpoint;

pub struct Bridged<E> {
    inner: RefCell<E>,
    protocol: Protocol,
    role: Role,
    failed: Option<String>,
}

impl<E: Endpoint> Bridged<E> {
    pub fn new(inner: E, protocol: Protocol, role: Role) -> Self {
        Bridged {
            inner: RefCell::new(inner),
            protocol,
            role,
            failed: None,
        }
    }

    fn take(&mut self, r: anyhow::Result<Vec<Vec<u8>>>) -> Step {
        match r {
            Ok(d) => Step::send(d),
            Err(e) => {
                self.failed = Some(format!("{e:#}"));
                Step::default()
            }
        }
    }
}

fn at(now: Now) -> Duration {
    Duration::from_nanos(now.mono_ns)
}

impl<E: Endpoint> Handshake for Bridged<E> {
    type Negotiated = ();
    type Error = String;
    type Records = ();

    fn protocol(&self) -> Protocol {
        self.protocol
    }
    fn role(&self) -> Role {
        self.role
    }
    fn start(&mut self, now: Now) -> Step {
        let r = self.inner.get_mut().start(at(now));
        self.take(r)
    }
    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        let r = self.inner.get_mut().on_datagram(datagram, at(now));
        self.take(r)
    }
    fn deadline(&self) -> Option<u64> {
        if self.failed.is_some() {
            return None;
        }
        let now = at(crate::setup::now());
        self.inner
            .borrow_mut()
            .next_timeout(now)
            .map(|d| d.as_nanos() as u64)
    }
    fn handle_timeout(&mut self, now: Now) -> Step {
        let r = self.inner.get_mut().on_timer(at(now));
        self.take(r)
    }
    fn delay_timers(&mut self, by_ns: u64) {
        self.inner
            .get_mut()
            .delay_timers(Duration::from_nanos(by_ns));
    }
    fn status(&self) -> Status<(), String> {
        if let Some(f) = &self.failed {
            return Status::Failed(Failure::Local(f.clone()));
        }
        if self.inner.borrow().is_complete() {
            Status::Complete(())
        } else {
            Status::Running
        }
    }
    fn retransmissions(&self) -> u32 {
        self.inner.borrow().retransmissions()
    }
}
