//! The responder of one WTP transaction (the gateway's side; WAP-224 §9.5 and the
//! responder state table of its Annex B).

use super::sar::{Acked, Progress, Reassembly, Segmenter};
use super::{
    AbortReason, Body, Direction, Event, Now, Output, Pdu, ProviderReason, Tid, TidVerdict, Timer,
    Timers, Tpi, Trailer, TransactionClass, UsageError,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A Tve Ack is out; the invoke waits for the initiator's Tok.
    TidVerifying,
    /// A segmented invoke is arriving.
    ReceivingInvoke,
    /// Class 2: the invoke is with the user; the result (or the user's ack) is awaited.
    InvokeDelivered,
    /// Class 1 with user acknowledgement: the Ack waits for the user.
    UserAckWait,
    /// The result (or its current group) is out; waiting for the initiator's Ack.
    ResultSent,
    /// Class 1: the Ack is out; a retransmitted invoke is acknowledged again until W.
    WaitTimeout,
    Done,
}

/// One transaction started by the peer.
#[derive(Debug, Clone)]
pub struct Responder {
    tid: Tid,
    class: TransactionClass,
    /// The initiator asked for user acknowledgement (U/P).
    user_ack: bool,
    /// The initiator signalled it reassembles segmented results (its invoke was not
    /// marked "whole", the reading of Kannel's `wtp_resp.c`).
    peer_does_sar: bool,
    timers: Timers,
    state: State,
    invoke: Reassembly,
    /// The first packet, kept while the TID is being verified.
    pending: Option<(Trailer, Vec<u8>)>,
    result: Option<Segmenter>,
    /// An Ack already sent for the invoke, repeated for a retransmitted invoke.
    invoke_ack: Option<Pdu>,
    /// The last PSN of a segmented invoke, which a class 2 hold-on Ack names.
    invoke_last_psn: Option<u8>,
    timer: Option<Timer>,
    retransmissions: u8,
    ack_expirations: u8,
}

impl Responder {
    /// Opens a transaction for an Invoke PDU that matched no running one. `verdict` is
    /// the [`super::TidCache`]'s answer for it. `None` when the PDU is not an Invoke.
    pub fn on_invoke(
        pdu: &Pdu,
        verdict: TidVerdict,
        timers: Timers,
        now: Now,
    ) -> Option<(Responder, Output)> {
        let Body::Invoke {
            trailer,
            version,
            user_ack,
            class,
            data,
            ..
        } = &pdu.body
        else {
            return None;
        };
        let mut me = Responder {
            tid: pdu.tid,
            class: *class,
            user_ack: *user_ack,
            peer_does_sar: *trailer != Trailer::Whole,
            timers,
            state: State::ReceivingInvoke,
            invoke: Reassembly::default(),
            pending: None,
            result: None,
            invoke_ack: None,
            invoke_last_psn: None,
            timer: None,
            retransmissions: 0,
            ack_expirations: 0,
        };
        let mut out = Output::default();
        if *version != 0 {
            me.abort(ProviderReason::VersionNotSupported, &mut out);
        } else if verdict == TidVerdict::Verify {
            out.send(me.pdu(
                false,
                vec![],
                Body::Ack {
                    tid_verification: true,
                },
            ));
            me.pending = Some((*trailer, data.clone()));
            me.state = State::TidVerifying;
            me.timer = Some(Timer::Wait(now.mono_ns + timers.wait_timeout_ns));
        } else {
            me.take_invoke_packet(0, *trailer, data, now, &mut out);
        }
        Some((me, out))
    }

    pub fn tid(&self) -> Tid {
        self.tid
    }

    pub fn class(&self) -> TransactionClass {
        self.class
    }

    pub fn deadline(&self) -> Option<u64> {
        self.timer.map(Timer::at)
    }

    pub fn is_finished(&self) -> bool {
        self.state == State::Done
    }

    /// Whether the transaction waits on a TID test (its invoke not yet with the user).
    pub fn is_verifying_tid(&self) -> bool {
        self.state == State::TidVerifying
    }

    /// Retransmissions of the result so far (the RCR counter).
    pub fn retransmissions(&self) -> u8 {
        self.retransmissions
    }

    fn pdu(&self, rid: bool, tpis: Vec<Tpi>, body: Body) -> Pdu {
        Pdu {
            tid: self.tid,
            direction: Direction::FromResponder,
            rid,
            tpis,
            body,
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

    fn take_invoke_packet(
        &mut self,
        psn: u8,
        trailer: Trailer,
        data: &[u8],
        now: Now,
        out: &mut Output,
    ) {
        if psn > 0 && self.class == TransactionClass::Zero {
            return self.abort(ProviderReason::SarNotImplemented, out);
        }
        match self.invoke.add(psn, trailer, data) {
            Progress::Pending => {}
            Progress::AckGroup(end) => out.send(self.ack(Some(end))),
            Progress::Missing(missing) => {
                out.send(self.pdu(false, vec![], Body::NegativeAck { missing }))
            }
            Progress::Complete { data, last_psn } => self.deliver(data, last_psn, now, out),
        }
        if self.state == State::ReceivingInvoke {
            // The rest of a segmented invoke must come within W.
            self.timer = Some(Timer::Wait(now.mono_ns + self.timers.wait_timeout_ns));
        }
    }

    fn deliver(&mut self, data: Vec<u8>, last_psn: Option<u8>, now: Now, out: &mut Output) {
        out.event(Event::Invoke {
            class: self.class,
            data,
        });
        let ack = self.ack(last_psn);
        match self.class {
            TransactionClass::Zero => self.finish(out, Event::Completed),
            TransactionClass::One if self.user_ack => {
                self.invoke_ack = Some(ack);
                self.state = State::UserAckWait;
                self.timer = Some(Timer::Ack(now.mono_ns + self.timers.ack_interval_ns));
            }
            TransactionClass::One => {
                out.send(ack.clone());
                self.invoke_ack = Some(ack);
                self.enter_wait_timeout(now, out);
            }
            TransactionClass::Two => {
                // The invoke, whole or the last group of a segmented one, is acknowledged
                // by the result, or by a hold-on Ack when A expires (as Kannel's wapbox
                // does: fakewap, having sent its last group, peeks for the result and
                // takes an Ack there for a TID verification, forever).
                self.invoke_last_psn = last_psn;
                self.state = State::InvokeDelivered;
                self.timer = Some(Timer::Ack(now.mono_ns + self.timers.ack_interval_ns));
            }
        }
    }

    fn enter_wait_timeout(&mut self, now: Now, out: &mut Output) {
        out.event(Event::Completed);
        self.state = State::WaitTimeout;
        self.timer = Some(Timer::Wait(now.mono_ns + self.timers.wait_timeout_ns));
    }

    /// Takes a later PDU of this transaction (the caller matched TID and direction).
    pub fn handle(&mut self, pdu: &Pdu, now: Now) -> Output {
        let mut out = Output::default();
        match (&pdu.body, self.state) {
            (_, State::Done) => {}
            (Body::Abort(reason), _) => self.finish(
                &mut out,
                Event::Aborted {
                    reason: *reason,
                    by_peer: true,
                },
            ),
            (
                Body::Ack {
                    tid_verification: true,
                },
                State::TidVerifying,
            ) => {
                out.event(Event::TidConfirmed);
                if let Some((trailer, data)) = self.pending.take() {
                    self.state = State::ReceivingInvoke;
                    self.timer = None;
                    self.take_invoke_packet(0, trailer, &data, now, &mut out);
                }
            }
            (Body::Ack { .. }, State::ResultSent) => {
                self.on_result_ack(pdu.acked_psn(), now, &mut out)
            }
            (Body::NegativeAck { missing }, State::ResultSent) => {
                self.resend_missing(missing, &mut out)
            }
            (Body::Invoke { .. }, State::TidVerifying) if pdu.rid => {
                // Our Tve (or the initiator's Tok) was lost: ask again (WAP-224's
                // responder table, TIDOK WAIT on a retransmitted invoke).
                out.send(self.pdu(
                    true,
                    vec![],
                    Body::Ack {
                        tid_verification: true,
                    },
                ));
            }
            (Body::Invoke { .. }, state) if pdu.rid && state != State::UserAckWait => {
                // A retransmitted invoke: the Ack we sent was lost.
                if let Some(ack) = &self.invoke_ack {
                    out.send(Pdu {
                        rid: true,
                        ..ack.clone()
                    });
                }
            }
            (Body::SegmentedInvoke { trailer, psn, data }, State::ReceivingInvoke) => {
                self.take_invoke_packet(*psn, *trailer, data, now, &mut out)
            }
            (Body::Result { .. } | Body::SegmentedResult { .. }, _) => {
                self.abort(ProviderReason::ProtocolError, &mut out)
            }
            // Anything else does not fit the state and is ignored (WAP-224 §9.5).
            _ => {}
        }
        out
    }

    fn on_result_ack(&mut self, psn: Option<u8>, now: Now, out: &mut Output) {
        let Some(result) = &mut self.result else {
            return;
        };
        if result.is_segmented() {
            let Some(psn) = psn else { return };
            match result.acknowledge(psn) {
                Acked::Stale => return,
                Acked::Group => {
                    self.retransmissions = 0;
                    self.send_group(false, now, out);
                    return;
                }
                Acked::Message => {}
            }
        }
        self.finish(out, Event::Completed);
    }

    fn resend_missing(&mut self, missing: &[u8], out: &mut Output) {
        let Some(result) = &self.result else { return };
        for psn in missing {
            let p = usize::from(*psn);
            if result.current_group().contains(&p) {
                out.send(self.result_packet(result, p, true));
            }
        }
    }

    fn result_packet(&self, result: &Segmenter, psn: usize, rid: bool) -> Pdu {
        let trailer = result.trailer(psn);
        let data = result.data(psn).to_vec();
        let body = if psn == 0 {
            Body::Result { trailer, data }
        } else {
            Body::SegmentedResult {
                trailer,
                psn: psn as u8,
                data,
            }
        };
        self.pdu(rid, vec![], body)
    }

    fn send_group(&mut self, rid: bool, now: Now, out: &mut Output) {
        if let Some(result) = &self.result {
            for psn in result.to_send(rid) {
                out.send(self.result_packet(result, psn, rid));
            }
        }
        self.state = State::ResultSent;
        let interval = self
            .result
            .as_ref()
            .map_or(self.timers.retry_interval_ns, |r| {
                r.retry_interval_ns(&self.timers)
            });
        self.timer = Some(Timer::Retry(now.mono_ns + interval));
    }

    /// The user's result for a class 2 invoke (it acknowledges the invoke implicitly).
    pub fn result(&mut self, data: Vec<u8>, now: Now) -> Result<Output, UsageError> {
        if self.state != State::InvokeDelivered {
            return Err(UsageError::WrongState);
        }
        // A peer that did not offer SAR gets the whole result in one packet.
        let segment_size = if self.peer_does_sar {
            self.timers.segment_size
        } else {
            usize::MAX
        };
        self.result = Some(Segmenter::new(data, segment_size, self.timers.group_size)?);
        let mut out = Output::default();
        self.send_group(false, now, &mut out);
        Ok(out)
    }

    /// The user acknowledges the invoke (initiators that set U/P): class 1 completes,
    /// class 2 gets its hold-on Ack while the result is prepared.
    pub fn acknowledge(&mut self, now: Now) -> Result<Output, UsageError> {
        let mut out = Output::default();
        match self.state {
            State::UserAckWait => {
                if let Some(ack) = &self.invoke_ack {
                    out.send(ack.clone());
                }
                self.enter_wait_timeout(now, &mut out);
            }
            State::InvokeDelivered if self.invoke_ack.is_none() => {
                self.send_hold_on(&mut out);
            }
            _ => return Err(UsageError::WrongState),
        }
        Ok(out)
    }

    fn send_hold_on(&mut self, out: &mut Output) {
        let ack = self.ack(self.invoke_last_psn);
        out.send(ack.clone());
        self.invoke_ack = Some(ack);
        // The result may take as long as the origin needs; the initiator's W bounds it.
        self.timer = None;
    }

    /// The user aborts with its own reason (for WSP, WAP-230 Table 35).
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

    /// The timer expired: hold-on Ack, retransmission, abort, or close.
    pub fn on_timeout(&mut self, now: Now) -> Output {
        let mut out = Output::default();
        let Some(timer) = self.timer else { return out };
        if now.mono_ns < timer.at() {
            return out;
        }
        match self.state {
            State::InvokeDelivered | State::UserAckWait if self.user_ack => {
                self.ack_expirations += 1;
                if self.ack_expirations > self.timers.max_ack_expirations {
                    self.abort(ProviderReason::NoResponse, &mut out);
                } else {
                    self.timer = Some(Timer::Ack(now.mono_ns + self.timers.ack_interval_ns));
                }
            }
            State::InvokeDelivered => self.send_hold_on(&mut out),
            State::ResultSent => {
                if self.retransmissions >= self.timers.max_retransmissions {
                    self.abort(ProviderReason::NoResponse, &mut out);
                } else {
                    self.retransmissions += 1;
                    self.send_group(true, now, &mut out);
                }
            }
            State::TidVerifying
            | State::WaitTimeout
            | State::ReceivingInvoke
            | State::UserAckWait
            | State::Done => {
                self.state = State::Done;
                self.timer = None;
            }
        }
        out
    }
}
