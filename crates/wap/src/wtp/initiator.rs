//! The initiator of one WTP transaction (the handset's side; WAP-224 §9.4 and Annex B's
//! initiator state table).

use super::sar::{Acked, Progress, Reassembly, Segmenter};
use super::{
    AbortReason, Body, Direction, Event, Now, Output, Pdu, ProviderReason, Tid, Timer, Timers, Tpi,
    Trailer, TransactionClass, UsageError,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The invoke (or its current group) is out; waiting for an Ack or the Result.
    InvokeSent,
    /// Class 2: the invoke was acknowledged; waiting for the Result.
    ResultWait,
    /// Class 2 with user acknowledgement: the result was delivered, the Ack waits for
    /// the user's [`Initiator::acknowledge`].
    UserAckWait,
    /// The final Ack was sent; a retransmitted Result is acknowledged again until W.
    WaitTimeout,
    Done,
}

/// One transaction started by this side.
#[derive(Debug, Clone)]
pub struct Initiator {
    tid: Tid,
    class: TransactionClass,
    user_ack: bool,
    tid_new: bool,
    /// Tell the responder a segmented result is welcome (GTR=0 TTR=1 on a one-packet
    /// invoke, as Kannel's `wtp_resp.c` reads it).
    accept_segmented_result: bool,
    timers: Timers,
    state: State,
    invoke: Segmenter,
    result: Reassembly,
    /// The last Ack sent for the result (re-sent when the result is retransmitted).
    last_ack: Option<Pdu>,
    timer: Option<Timer>,
    retransmissions: u8,
}

impl Initiator {
    /// Starts a transaction with default options and returns the first packets to send.
    pub fn start(
        tid: Tid,
        class: TransactionClass,
        data: Vec<u8>,
        timers: Timers,
        now: Now,
    ) -> Result<(Initiator, Output), UsageError> {
        Initiator::start_with(tid, class, data, timers, now, InitiatorOptions::default())
    }

    /// Starts a transaction with the U/P flag (ask for the responder's user
    /// acknowledgement), TIDnew, and acceptance of a segmented result as given.
    pub fn start_with(
        tid: Tid,
        class: TransactionClass,
        data: Vec<u8>,
        timers: Timers,
        now: Now,
        options: InitiatorOptions,
    ) -> Result<(Initiator, Output), UsageError> {
        let mut me = Initiator {
            tid,
            class,
            user_ack: options.user_ack,
            tid_new: options.tid_new,
            accept_segmented_result: options.accept_segmented_result,
            timers,
            state: State::InvokeSent,
            invoke: Segmenter::new(data, timers.segment_size, timers.group_size)?,
            result: Reassembly::default(),
            last_ack: None,
            timer: None,
            retransmissions: 0,
        };
        if class == TransactionClass::Zero && me.invoke.is_segmented() {
            // Class 0 has no acknowledgement, so no SAR (WAP-224 §9.6).
            return Err(UsageError::MessageTooLarge);
        }
        let out = me.send_group(false, now);
        Ok((me, out))
    }

    pub fn tid(&self) -> Tid {
        self.tid
    }

    /// When [`Initiator::on_timeout`] is due, if a timer runs.
    pub fn deadline(&self) -> Option<u64> {
        self.timer.map(Timer::at)
    }

    pub fn is_finished(&self) -> bool {
        self.state == State::Done
    }

    /// Retransmissions made so far (the RCR counter).
    pub fn retransmissions(&self) -> u8 {
        self.retransmissions
    }

    fn pdu(&self, rid: bool, tpis: Vec<Tpi>, body: Body) -> Pdu {
        Pdu {
            tid: self.tid,
            direction: Direction::FromInitiator,
            rid,
            tpis,
            body,
        }
    }

    /// Sends the group in flight, or again (with RID, when `rid`) its last packet.
    fn send_group(&mut self, rid: bool, now: Now) -> Output {
        let mut out = Output::default();
        for psn in self.invoke.to_send(rid) {
            let data = self.invoke.data(psn).to_vec();
            let mut trailer = self.invoke.trailer(psn);
            let body = if psn == 0 {
                if trailer == Trailer::Whole && self.accept_segmented_result {
                    trailer = Trailer::EndOfMessage;
                }
                Body::Invoke {
                    trailer,
                    version: 0,
                    tid_new: self.tid_new,
                    user_ack: self.user_ack,
                    class: self.class,
                    data,
                }
            } else {
                Body::SegmentedInvoke {
                    trailer,
                    psn: psn as u8,
                    data,
                }
            };
            out.send(self.pdu(rid, vec![], body));
        }
        match self.class {
            TransactionClass::Zero if !self.invoke.is_segmented() => {
                self.state = State::Done;
                self.timer = None;
                out.event(Event::Completed);
            }
            _ => {
                let interval = self.invoke.retry_interval_ns(&self.timers);
                self.timer = Some(Timer::Retry(now.mono_ns + interval));
            }
        }
        out
    }

    /// Takes a PDU of this transaction (the caller matched its TID and direction).
    pub fn handle(&mut self, pdu: &Pdu, now: Now) -> Output {
        let mut out = Output::default();
        if self.state == State::Done {
            return out;
        }
        match &pdu.body {
            Body::Ack {
                tid_verification: true,
            } if matches!(self.state, State::InvokeSent | State::ResultWait) => {
                // Tve: the responder asks whether this TID is current; it is.
                out.send(self.pdu(
                    false,
                    vec![],
                    Body::Ack {
                        tid_verification: true,
                    },
                ));
            }
            Body::Ack {
                tid_verification: true,
            } => {
                // The result is in: the invoke being verified is a late duplicate of
                // ours, and confirming it would run the request twice. WAP-224 §9.2:
                // a TID with no outstanding transaction is refused with INVALIDTID (our
                // transaction stays, to re-acknowledge a retransmitted result until W).
                out.send(self.pdu(
                    false,
                    vec![],
                    Body::Abort(AbortReason::Provider(ProviderReason::InvalidTid)),
                ));
            }
            Body::Ack { .. } => self.on_ack(pdu.acked_psn(), now, &mut out),
            Body::NegativeAck { missing } => {
                for psn in missing {
                    let p = usize::from(*psn);
                    if self.invoke.current_group().contains(&p) && p > 0 {
                        out.send(self.pdu(
                            true,
                            vec![],
                            Body::SegmentedInvoke {
                                trailer: self.invoke.trailer(p),
                                psn: *psn,
                                data: self.invoke.data(p).to_vec(),
                            },
                        ));
                    }
                }
            }
            Body::Result { trailer, data } => self.on_result(0, *trailer, data, now, &mut out),
            Body::SegmentedResult {
                trailer, psn, data, ..
            } => self.on_result(*psn, *trailer, data, now, &mut out),
            Body::Abort(reason) => self.finish(
                &mut out,
                Event::Aborted {
                    reason: *reason,
                    by_peer: true,
                },
            ),
            Body::Invoke { .. } | Body::SegmentedInvoke { .. } => {
                self.abort(ProviderReason::ProtocolError, &mut out)
            }
        }
        out
    }

    fn on_ack(&mut self, psn: Option<u8>, now: Now, out: &mut Output) {
        if self.state != State::InvokeSent {
            return;
        }
        if self.invoke.is_segmented() {
            let Some(psn) = psn else { return };
            match self.invoke.acknowledge(psn) {
                Acked::Stale => return,
                Acked::Group => {
                    self.retransmissions = 0;
                    out.send.extend(self.send_group(false, now).send);
                    return;
                }
                Acked::Message => {}
            }
        }
        out.event(Event::InvokeAcknowledged);
        match self.class {
            TransactionClass::Two => {
                self.state = State::ResultWait;
                // The responder now owns the retransmissions; wait as long as a result
                // may take (W per retry), then give up.
                self.timer = Some(Timer::Wait(now.mono_ns + self.timers.wait_timeout_ns));
            }
            _ => self.finish(out, Event::Completed),
        }
    }

    fn on_result(&mut self, psn: u8, trailer: Trailer, data: &[u8], now: Now, out: &mut Output) {
        if self.class != TransactionClass::Two {
            return self.abort(ProviderReason::ProtocolError, out);
        }
        if matches!(self.state, State::WaitTimeout | State::UserAckWait) {
            // A retransmission: our Ack was lost (or is still due). Repeat it.
            if let Some(ack) = &self.last_ack {
                out.send(Pdu {
                    rid: true,
                    ..ack.clone()
                });
            }
            return;
        }
        if matches!(self.state, State::InvokeSent | State::ResultWait) {
            // Any packet of the result acknowledges the invoke implicitly: the responder
            // now owns the retransmissions, and the rest of a segmented result must come
            // within W. (Retransmitting the invoke under R meanwhile aborted every result
            // that took RCR_MAX x R to arrive: 20 KB over GSM CSD.)
            self.state = State::ResultWait;
            self.timer = Some(Timer::Wait(now.mono_ns + self.timers.wait_timeout_ns));
        }
        match self.result.add(psn, trailer, data) {
            Progress::Pending => {}
            Progress::AckGroup(end) => out.send(self.ack(Some(end))),
            Progress::Missing(missing) => {
                out.send(self.pdu(false, vec![], Body::NegativeAck { missing }))
            }
            Progress::Complete { data, last_psn } => {
                out.event(Event::Result(data));
                self.last_ack = Some(self.ack(last_psn));
                if self.user_ack {
                    self.state = State::UserAckWait;
                    self.timer = Some(Timer::Ack(now.mono_ns + self.timers.ack_interval_ns));
                } else {
                    self.send_final_ack(now, out);
                }
            }
        }
    }

    fn ack(&self, psn: Option<u8>) -> Pdu {
        let tpis = psn.map(Tpi::PacketSequenceNumber).into_iter().collect();
        self.pdu(
            false,
            tpis,
            Body::Ack {
                tid_verification: false,
            },
        )
    }

    fn send_final_ack(&mut self, now: Now, out: &mut Output) {
        if let Some(ack) = &self.last_ack {
            out.send(ack.clone());
        }
        out.event(Event::Completed);
        self.state = State::WaitTimeout;
        self.timer = Some(Timer::Wait(now.mono_ns + self.timers.wait_timeout_ns));
    }

    /// The user acknowledges the result (transactions started with the U/P option).
    pub fn acknowledge(&mut self, now: Now) -> Result<Output, UsageError> {
        if self.state != State::UserAckWait {
            return Err(UsageError::WrongState);
        }
        let mut out = Output::default();
        self.send_final_ack(now, &mut out);
        Ok(out)
    }

    /// The user aborts the transaction with its own reason (for WSP, WAP-230 Table 35).
    pub fn user_abort(&mut self, reason: u8) -> Output {
        let mut out = Output::default();
        if self.state != State::Done {
            out.send(self.pdu(false, vec![], Body::Abort(AbortReason::User(reason))));
            self.finish(
                &mut out,
                Event::Aborted {
                    reason: AbortReason::User(reason),
                    by_peer: false,
                },
            );
        }
        out
    }

    fn abort(&mut self, reason: ProviderReason, out: &mut Output) {
        let reason = AbortReason::Provider(reason);
        out.send(self.pdu(false, vec![], Body::Abort(reason)));
        self.finish(
            out,
            Event::Aborted {
                reason,
                by_peer: false,
            },
        );
    }

    fn finish(&mut self, out: &mut Output, event: Event) {
        self.state = State::Done;
        self.timer = None;
        out.event(event);
    }

    /// The timer expired: retransmit, give up, or close.
    pub fn on_timeout(&mut self, now: Now) -> Output {
        let mut out = Output::default();
        let Some(timer) = self.timer else { return out };
        if now.mono_ns < timer.at() {
            return out;
        }
        match (self.state, timer) {
            (State::InvokeSent, _) => {
                if self.retransmissions >= self.timers.max_retransmissions {
                    self.abort(ProviderReason::NoResponse, &mut out);
                } else {
                    self.retransmissions += 1;
                    out = self.send_group(true, now);
                }
            }
            (State::UserAckWait, _) => self.abort(ProviderReason::NoResponse, &mut out),
            (State::ResultWait, _) => {
                // No result within W after the hold-on Ack.
                self.abort(ProviderReason::NoResponse, &mut out)
            }
            (State::WaitTimeout, _) => {
                self.state = State::Done;
                self.timer = None;
            }
            (State::Done, _) => self.timer = None,
        }
        out
    }
}

/// Options of [`Initiator::start_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitiatorOptions {
    pub user_ack: bool,
    pub tid_new: bool,
    pub accept_segmented_result: bool,
}

impl Default for InitiatorOptions {
    fn default() -> Self {
        InitiatorOptions {
            user_ack: false,
            tid_new: false,
            accept_segmented_result: true,
        }
    }
}
