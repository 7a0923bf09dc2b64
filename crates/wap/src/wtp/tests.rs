//! Initiator against responder in virtual time, over a link that can drop chosen packets.

use super::*;

const S: u64 = 1_000_000_000;

fn at(ns: u64) -> Now {
    Now::new(ns, 0)
}

/// When the responder's user answers an invoke.
#[derive(Clone, Copy)]
enum Answer {
    /// With `len` octets of result after `delay_ns`.
    Result { len: usize, delay_ns: u64 },
    /// With U/P: the user acknowledges after `delay_ns` (and, in class 2, answers
    /// with `len` octets after twice that).
    Acknowledge { delay_ns: u64, len: usize },
    /// Never.
    Silent,
}

fn result_bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

struct Run {
    init: Initiator,
    resp: Option<Responder>,
    cache: TidCache<u8>,
    timers: Timers,
    now: u64,
    to_resp: Vec<Vec<u8>>,
    to_init: Vec<Vec<u8>>,
    /// Every datagram that crossed or was dropped, in order: (from initiator, dropped, PDU).
    wire: Vec<(bool, bool, Pdu)>,
    init_events: Vec<Event>,
    resp_events: Vec<Event>,
    answer: Answer,
    user_steps: Vec<u64>,
}

impl Run {
    fn new(class: TransactionClass, invoke: Vec<u8>, timers: Timers, answer: Answer) -> Run {
        Run::with(
            class,
            invoke,
            timers,
            answer,
            InitiatorOptions::default(),
            TidCache::default(),
        )
    }

    fn with(
        class: TransactionClass,
        invoke: Vec<u8>,
        timers: Timers,
        answer: Answer,
        options: InitiatorOptions,
        cache: TidCache<u8>,
    ) -> Run {
        let (init, out) =
            Initiator::start_with(Tid::new(100), class, invoke, timers, at(0), options).unwrap();
        Run {
            init,
            resp: None,
            cache,
            timers,
            now: 0,
            to_resp: out.send,
            to_init: vec![],
            wire: vec![],
            init_events: out.events,
            resp_events: vec![],
            answer,
            user_steps: vec![],
        }
    }

    fn take_resp(&mut self, out: Output) {
        self.to_init.extend(out.send);
        for e in &out.events {
            if let Event::Invoke { .. } = e {
                match self.answer {
                    Answer::Result { delay_ns, .. } => self.user_steps.push(self.now + delay_ns),
                    Answer::Acknowledge { delay_ns, .. } => {
                        self.user_steps.push(self.now + delay_ns);
                        self.user_steps.push(self.now + 2 * delay_ns);
                    }
                    Answer::Silent => {}
                }
            }
            if let Event::TidConfirmed = e {
                self.cache.confirm(0, self.init.tid(), at(self.now));
            }
        }
        self.resp_events.extend(out.events);
    }

    fn user_step(&mut self, first: bool) {
        let now = at(self.now);
        let Some(resp) = &mut self.resp else { return };
        let out = match self.answer {
            Answer::Result { len, .. } => resp.result(result_bytes(len), now),
            Answer::Acknowledge { .. } if first => resp.acknowledge(now),
            Answer::Acknowledge { len, .. } => resp.result(result_bytes(len), now),
            Answer::Silent => return,
        };
        if let Ok(out) = out {
            self.take_resp(out);
        }
    }

    /// Moves every queued datagram, dropping those `drop` picks, then advances the
    /// clock to the next deadline; until both sides are finished or 2000 steps.
    fn drive(&mut self, mut drop: impl FnMut(bool, &Pdu, usize) -> bool) {
        let mut sent = 0;
        for _ in 0..2000 {
            let now = at(self.now);
            for bytes in std::mem::take(&mut self.to_resp) {
                for pdu in decode_datagram(&bytes).unwrap() {
                    assert_eq!(pdu.direction, Direction::FromInitiator);
                    sent += 1;
                    let dropped = drop(true, &pdu, sent);
                    self.wire.push((true, dropped, pdu.clone()));
                    if dropped {
                        continue;
                    }
                    let out = match &mut self.resp {
                        Some(r) => r.handle(&pdu, now),
                        None => {
                            let Body::Invoke { tid_new, .. } = pdu.body else {
                                continue;
                            };
                            let verdict = self.cache.verdict(0, pdu.tid, tid_new, now);
                            let (r, out) =
                                Responder::on_invoke(&pdu, verdict, self.timers, now).unwrap();
                            self.resp = Some(r);
                            out
                        }
                    };
                    self.take_resp(out);
                }
            }
            for bytes in std::mem::take(&mut self.to_init) {
                for pdu in decode_datagram(&bytes).unwrap() {
                    assert_eq!(pdu.direction, Direction::FromResponder);
                    sent += 1;
                    let dropped = drop(false, &pdu, sent);
                    self.wire.push((false, dropped, pdu.clone()));
                    if !dropped {
                        let out = self.init.handle(&pdu, now);
                        self.to_resp.extend(out.send);
                        self.init_events.extend(out.events);
                    }
                }
            }
            if !self.to_resp.is_empty() || !self.to_init.is_empty() {
                continue;
            }
            let resp_deadline = self.resp.as_ref().and_then(Responder::deadline);
            let next = [
                self.init.deadline(),
                resp_deadline,
                self.user_steps.first().copied(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next else { return };
            self.now = self.now.max(next);
            let now = at(self.now);
            if self.user_steps.first() == Some(&next) {
                let first =
                    self.user_steps.len() == 2 || matches!(self.answer, Answer::Result { .. });
                self.user_steps.remove(0);
                self.user_step(first);
                continue;
            }
            let out = self.init.on_timeout(now);
            self.to_resp.extend(out.send);
            self.init_events.extend(out.events);
            if let Some(r) = &mut self.resp {
                let out = r.on_timeout(now);
                self.take_resp(out);
            }
        }
        panic!("the transaction did not settle in 2000 steps");
    }

    fn result(&self) -> Option<&Vec<u8>> {
        self.init_events.iter().find_map(|e| match e {
            Event::Result(d) => Some(d),
            _ => None,
        })
    }

    fn types(&self, from_initiator: bool) -> Vec<PduType> {
        self.wire
            .iter()
            .filter(|(i, _, _)| *i == from_initiator)
            .map(|(_, _, p)| p.pdu_type())
            .collect()
    }
}

/// An initiator's one-packet Get with TID 7, at time 0.
fn a_get(timers: Timers) -> (Initiator, Output) {
    Initiator::start(
        Tid::new(7),
        TransactionClass::Two,
        b"GET".to_vec(),
        timers,
        at(0),
    )
    .unwrap()
}

/// A responder to [`a_get`].
fn responder_to_a_get(timers: Timers) -> (Responder, Pdu) {
    let (_, out) = a_get(timers);
    let invoke = decode_datagram(&out.send[0]).unwrap().remove(0);
    let (resp, _) = Responder::on_invoke(&invoke, TidVerdict::Accept, timers, at(0)).unwrap();
    (resp, invoke)
}

fn fast() -> Timers {
    Timers {
        ack_interval_ns: S,
        retry_interval_ns: 2 * S,
        group_retry_interval_ns: 2 * S,
        wait_timeout_ns: 10 * S,
        max_retransmissions: 4,
        max_ack_expirations: 2,
        segment_size: 100,
        group_size: 3,
        mpl_ns: 3 * S,
    }
}

#[test]
fn class2_result_acknowledges_the_invoke() {
    let mut run = Run::new(
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        Answer::Result {
            len: 50,
            delay_ns: 0,
        },
    );
    run.drive(|_, _, _| false);
    assert_eq!(run.result(), Some(&result_bytes(50)));
    // Invoke, Result, Ack: the result is the implicit acknowledgement.
    assert_eq!(run.types(true), [PduType::Invoke, PduType::Ack]);
    assert_eq!(run.types(false), [PduType::Result]);
    assert!(run.resp_events.contains(&Event::Completed));
    assert!(run.init.is_finished() && run.resp.as_ref().unwrap().is_finished());
}

#[test]
fn a_late_result_gets_a_hold_on_ack_first() {
    let mut run = Run::new(
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        Answer::Result {
            len: 10,
            delay_ns: 3 * S,
        },
    );
    run.drive(|_, _, _| false);
    assert_eq!(run.types(false), [PduType::Ack, PduType::Result]);
    assert_eq!(run.init_events[0], Event::InvokeAcknowledged);
    assert_eq!(run.result(), Some(&result_bytes(10)));
    // The hold-on Ack stopped the initiator's retransmissions.
    assert_eq!(run.init.retransmissions(), 0);
}

#[test]
fn a_lost_invoke_is_retransmitted_with_rid() {
    let mut run = Run::new(
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        Answer::Result {
            len: 10,
            delay_ns: 0,
        },
    );
    run.drive(|from_init, _, n| from_init && n == 1);
    let invokes: Vec<bool> = run
        .wire
        .iter()
        .filter(|(_, _, p)| p.pdu_type() == PduType::Invoke)
        .map(|(_, _, p)| p.rid)
        .collect();
    assert_eq!(invokes, [false, true]);
    assert_eq!(run.init.retransmissions(), 1);
    assert_eq!(run.result(), Some(&result_bytes(10)));
}

#[test]
fn a_lost_result_is_retransmitted_and_reacknowledged() {
    let mut run = Run::new(
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        Answer::Result {
            len: 10,
            delay_ns: 0,
        },
    );
    // Drop the first Result and the first final Ack.
    let mut dropped_result = false;
    let mut dropped_ack = false;
    run.drive(|from_init, p, _| match p.pdu_type() {
        PduType::Result if !dropped_result => {
            dropped_result = true;
            true
        }
        PduType::Ack if from_init && !dropped_ack => {
            dropped_ack = true;
            true
        }
        _ => false,
    });
    assert_eq!(
        run.types(false),
        [PduType::Result, PduType::Result, PduType::Result]
    );
    assert_eq!(run.resp.as_ref().unwrap().retransmissions(), 2);
    assert!(run.resp_events.contains(&Event::Completed));
    assert_eq!(run.result(), Some(&result_bytes(10)));
}

#[test]
fn silence_ends_in_a_noresponse_abort_after_the_retry_limit() {
    let mut run = Run::new(
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        Answer::Silent,
    );
    run.drive(|from_init, _, _| from_init);
    assert_eq!(run.types(true).len(), 1 + 4 + 1);
    assert_eq!(
        run.init_events.last(),
        Some(&Event::Aborted {
            reason: AbortReason::Provider(ProviderReason::NoResponse),
            by_peer: false
        })
    );
    // Retries came R apart: the last at 4 R, the abort at 5 R.
    assert_eq!(run.now, 5 * fast().retry_interval_ns);
}

#[test]
fn class1_is_acknowledged_and_a_duplicate_reacknowledged() {
    let mut run = Run::new(
        TransactionClass::One,
        b"push".to_vec(),
        fast(),
        Answer::Silent,
    );
    let mut first_ack = true;
    run.drive(|from_init, p, _| {
        let drop = !from_init && p.pdu_type() == PduType::Ack && first_ack;
        first_ack = first_ack && !drop;
        drop
    });
    assert_eq!(run.types(false), [PduType::Ack, PduType::Ack]);
    assert!(run.wire[2].2.rid, "the repeated Ack carries RID");
    assert!(run.init_events.contains(&Event::Completed));
    assert!(matches!(
        run.resp_events[0],
        Event::Invoke {
            class: TransactionClass::One,
            ..
        }
    ));
}

#[test]
fn class0_sends_once_and_expects_nothing() {
    let mut run = Run::new(
        TransactionClass::Zero,
        b"x".to_vec(),
        fast(),
        Answer::Silent,
    );
    assert_eq!(run.init_events, [Event::Completed]);
    run.drive(|_, _, _| false);
    assert_eq!(run.types(false), []);
    assert_eq!(run.resp_events.last(), Some(&Event::Completed));
}

#[test]
fn tid_verification_asks_and_the_initiator_confirms() {
    let mut cache = TidCache::default();
    // The last TID from this peer was 200: 100 is outside the window.
    assert_eq!(
        cache.verdict(0u8, Tid::new(200), false, at(0)),
        TidVerdict::Accept
    );
    let mut run = Run::with(
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        Answer::Result {
            len: 5,
            delay_ns: 0,
        },
        InitiatorOptions::default(),
        cache,
    );
    run.drive(|_, _, _| false);
    let acks: Vec<bool> = run
        .wire
        .iter()
        .filter_map(|(_, _, p)| match p.body {
            Body::Ack { tid_verification } => Some(tid_verification),
            _ => None,
        })
        .collect();
    // Tve from the responder, Tok from the initiator, then the final Ack.
    assert_eq!(acks, [true, true, false]);
    assert_eq!(run.resp_events[0], Event::TidConfirmed);
    assert_eq!(run.result(), Some(&result_bytes(5)));
    assert_eq!(
        run.cache.verdict(0, Tid::new(101), false, at(run.now)),
        TidVerdict::Accept
    );
}

/// A class 2 initiator with TID `tid` and its invoke.
fn class2_get(tid: u16) -> (Initiator, Pdu) {
    let (init, out) = Initiator::start(
        Tid::new(tid),
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        at(0),
    )
    .unwrap();
    let invoke = Pdu::decode(&out.send[0]).unwrap();
    (init, invoke)
}

#[test]
fn a_lost_tve_is_asked_again_when_the_invoke_is_retransmitted() {
    let (mut init, invoke) = class2_get(7);
    let (mut resp, out) = Responder::on_invoke(&invoke, TidVerdict::Verify, fast(), at(0)).unwrap();
    assert!(
        Pdu::decode(&out.send[0]).unwrap().body
            == Body::Ack {
                tid_verification: true
            }
    );
    // The Tve is lost; the initiator's timer R sends the invoke again, with RID.
    let retry = init.on_timeout(at(init.deadline().unwrap()));
    let again = Pdu::decode(&retry.send[0]).unwrap();
    assert!(again.rid);
    let out = resp.handle(&again, at(2 * S));
    let tve = Pdu::decode(&out.send[0]).unwrap();
    assert_eq!(
        tve.body,
        Body::Ack {
            tid_verification: true
        }
    );
    assert!(tve.rid);
    // The initiator confirms it and the responder delivers the invoke.
    let tok = init.handle(&tve, at(2 * S));
    let out = resp.handle(&Pdu::decode(&tok.send[0]).unwrap(), at(2 * S));
    assert!(out.events.contains(&Event::TidConfirmed));
    assert!(out.events.iter().any(|e| matches!(e, Event::Invoke { .. })));
}

#[test]
fn a_late_duplicate_invoke_is_refused_once_the_result_is_in() {
    let (mut init, invoke) = class2_get(9);
    let (mut resp, _) = Responder::on_invoke(&invoke, TidVerdict::Accept, fast(), at(0)).unwrap();
    let result = resp.result(b"page".to_vec(), at(0)).unwrap();
    let done = init.handle(&Pdu::decode(&result.send[0]).unwrap(), at(0));
    assert!(done.events.contains(&Event::Result(b"page".to_vec())));
    // A copy of the invoke, delayed in the network, reaches the responder after the
    // transaction ended there: the TID test asks the initiator, which must not confirm
    // a transaction it has finished (the request would run twice).
    let (mut dup, out) = Responder::on_invoke(&invoke, TidVerdict::Verify, fast(), at(S)).unwrap();
    let answer = init.handle(&Pdu::decode(&out.send[0]).unwrap(), at(S));
    let refusal = Pdu::decode(&answer.send[0]).unwrap();
    assert_eq!(
        refusal.body,
        Body::Abort(AbortReason::Provider(ProviderReason::InvalidTid))
    );
    let out = dup.handle(&refusal, at(S));
    assert!(dup.is_finished());
    assert!(!out.events.iter().any(|e| matches!(e, Event::Invoke { .. })));
}

#[test]
fn tidnew_forces_verification() {
    let mut cache = TidCache::default();
    let mut verdict = |tid, tid_new| cache.verdict(1u8, Tid::new(tid), tid_new, at(0));
    assert_eq!(verdict(3, true), TidVerdict::Verify);
    assert_eq!(verdict(3, false), TidVerdict::Accept);
    assert_eq!(verdict(3, false), TidVerdict::Verify);
    assert_eq!(verdict(4, false), TidVerdict::Accept);
}

#[test]
fn a_cached_tid_lives_for_the_mpl_after_its_peer_was_last_heard() {
    // A new initiator on a reused address starts below the old one's last TID (500).
    let mpl = Timers::default().tid_lifetime_ns();
    let mut cache = TidCache::new(mpl);
    assert_eq!(
        cache.verdict(1u8, Tid::new(500), false, at(0)),
        TidVerdict::Accept
    );
    // Within the MPL a lower TID may be an old duplicate: verify it.
    assert_eq!(
        cache.verdict(1u8, Tid::new(7), false, at(mpl)),
        TidVerdict::Verify
    );
    // Heard from again (its transaction ended): the lifetime starts over.
    cache.heard(&1, at(mpl));
    let later = mpl + mpl / 2;
    assert_eq!(
        cache.verdict(1u8, Tid::new(7), false, at(later)),
        TidVerdict::Verify
    );
    // Once the MPL has passed in silence no duplicate can be left (and hearing from the
    // address again does not revive the entry): accept and record.
    let gone = 2 * mpl + 1;
    cache.heard(&1, at(gone));
    assert_eq!(
        cache.verdict(1u8, Tid::new(7), false, at(gone)),
        TidVerdict::Accept
    );
    assert_eq!(
        cache.verdict(1u8, Tid::new(6), false, at(gone)),
        TidVerdict::Verify
    );
    // TIDnew asks for verification whatever the cache holds.
    assert_eq!(
        cache.verdict(2u8, Tid::new(1), true, at(gone)),
        TidVerdict::Verify
    );
}

#[test]
fn a_segmented_result_is_reassembled_with_a_selective_nack() {
    // 1000 octets in packets of 100, groups of 3: PSNs 0..=9; drop PSN 4 once.
    let mut run = Run::new(
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        Answer::Result {
            len: 1000,
            delay_ns: 0,
        },
    );
    let mut dropped = false;
    run.drive(|from_init, p, _| {
        let hit = !from_init && matches!(p.body, Body::SegmentedResult { psn: 4, .. }) && !dropped;
        dropped |= hit;
        hit
    });
    assert_eq!(run.result(), Some(&result_bytes(1000)));
    let nacks: Vec<Vec<u8>> = run
        .wire
        .iter()
        .filter_map(|(_, _, p)| match &p.body {
            Body::NegativeAck { missing } => Some(missing.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(nacks, [vec![4]]);
    let group_acks: Vec<u8> = run
        .wire
        .iter()
        .filter_map(|(_, _, p)| p.acked_psn())
        .collect();
    assert_eq!(group_acks, [2, 5, 8, 9]);
    assert!(run.resp_events.contains(&Event::Completed));
}

#[test]
fn a_peer_without_sar_gets_the_result_whole() {
    let options = InitiatorOptions {
        accept_segmented_result: false,
        ..InitiatorOptions::default()
    };
    let mut run = Run::with(
        TransactionClass::Two,
        b"GET".to_vec(),
        fast(),
        Answer::Result {
            len: 1000,
            delay_ns: 0,
        },
        options,
        TidCache::default(),
    );
    run.drive(|_, _, _| false);
    assert_eq!(run.types(false), [PduType::Result]);
    assert_eq!(run.result(), Some(&result_bytes(1000)));
}

#[test]
fn a_segmented_invoke_is_reassembled() {
    let post = result_bytes(450);
    let mut run = Run::new(
        TransactionClass::Two,
        post.clone(),
        fast(),
        Answer::Result {
            len: 3,
            delay_ns: 0,
        },
    );
    run.drive(|_, _, _| false);
    assert_eq!(
        run.resp_events[0],
        Event::Invoke {
            class: TransactionClass::Two,
            data: post
        }
    );
    assert_eq!(run.result(), Some(&result_bytes(3)));
}

#[test]
fn user_acknowledgement_in_class1_and_class2() {
    let options = InitiatorOptions {
        user_ack: true,
        ..InitiatorOptions::default()
    };
    let answer = Answer::Acknowledge {
        delay_ns: S / 2,
        len: 7,
    };
    let mut run = Run::with(
        TransactionClass::One,
        b"x".to_vec(),
        fast(),
        answer,
        options,
        TidCache::default(),
    );
    run.drive(|_, _, _| false);
    assert_eq!(run.types(false), [PduType::Ack]);
    assert!(run.init_events.contains(&Event::Completed));

    let mut run = Run::with(
        TransactionClass::Two,
        b"x".to_vec(),
        fast(),
        answer,
        options,
        TidCache::default(),
    );
    run.drive(|_, _, _| false);
    // The user's Ack (hold-on), then the result; the initiator's user acknowledges too.
    assert_eq!(run.types(false), [PduType::Ack, PduType::Result]);
    assert_eq!(run.result(), Some(&result_bytes(7)));
}

#[test]
fn a_user_that_never_acknowledges_is_aborted() {
    let options = InitiatorOptions {
        user_ack: true,
        ..InitiatorOptions::default()
    };
    let mut run = Run::with(
        TransactionClass::One,
        b"x".to_vec(),
        fast(),
        Answer::Silent,
        options,
        TidCache::default(),
    );
    run.drive(|_, _, _| false);
    assert!(run.resp_events.contains(&Event::Aborted {
        reason: AbortReason::Provider(ProviderReason::NoResponse),
        by_peer: false
    }));
    assert!(run.init_events.contains(&Event::Aborted {
        reason: AbortReason::Provider(ProviderReason::NoResponse),
        by_peer: true
    }));
}

#[test]
fn user_abort_reaches_the_peer() {
    let (mut init, _) =
        Initiator::start(Tid::new(1), TransactionClass::Two, vec![1], fast(), at(0)).unwrap();
    let out = init.user_abort(0xE9);
    let pdu = Pdu::decode(&out.send[0]).unwrap();
    assert_eq!(pdu.body, Body::Abort(AbortReason::User(0xE9)));
    assert!(init.is_finished());
    let (mut resp, _) = Responder::on_invoke(
        &Pdu::decode(&{
            let (_, o) =
                Initiator::start(Tid::new(1), TransactionClass::Two, vec![1], fast(), at(0))
                    .unwrap();
            o.send[0].clone()
        })
        .unwrap(),
        TidVerdict::Accept,
        fast(),
        at(0),
    )
    .unwrap();
    let out = resp.handle(
        &Pdu {
            direction: Direction::FromInitiator,
            ..pdu
        },
        at(1),
    );
    assert_eq!(
        out.events,
        [Event::Aborted {
            reason: AbortReason::User(0xE9),
            by_peer: true
        }]
    );
    assert_eq!(
        resp.result(vec![], at(2)).unwrap_err(),
        UsageError::WrongState
    );
}

#[test]
fn a_wrong_version_is_aborted() {
    let bytes = [0x0E, 0x00, 0x01, 0x42];
    let pdu = Pdu::decode(&bytes).unwrap();
    let (resp, out) = Responder::on_invoke(&pdu, TidVerdict::Accept, fast(), at(0)).unwrap();
    assert!(resp.is_finished());
    assert_eq!(
        Pdu::decode(&out.send[0]).unwrap().body,
        Body::Abort(AbortReason::Provider(ProviderReason::VersionNotSupported))
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever packets a lossy link drops, a class 2 transaction ends with the
        /// whole result or an abort on the initiator's side, in bounded virtual time.
        #[test]
        fn loss_never_corrupts_a_result(
            len in 0usize..1200,
            losses in proptest::collection::vec(any::<bool>(), 64),
        ) {
            let mut run = Run::new(
                TransactionClass::Two,
                b"GET".to_vec(),
                fast(),
                Answer::Result { len, delay_ns: 0 },
            );
            run.drive(|_, _, n| losses.get(n).copied().unwrap_or(false));
            let ended = run.init_events.iter().any(|e| matches!(
                e,
                Event::Completed | Event::Aborted { .. }
            ));
            prop_assert!(ended);
            if let Some(r) = run.result() {
                prop_assert_eq!(r, &result_bytes(len));
            }
        }

        /// Random PDUs thrown at a running responder and initiator never panic.
        #[test]
        fn random_pdus_never_panic(bytes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 3..20), 1..20)) {
            let (mut init, _) = Initiator::start(Tid::new(1), TransactionClass::Two, vec![1], fast(), at(0)).unwrap();
            let mut resp: Option<Responder> = None;
            for (i, b) in bytes.iter().enumerate() {
                let Ok(pdus) = decode_datagram(b) else { continue };
                for pdu in pdus {
                    let now = at(i as u64 * S);
                    let _ = init.handle(&pdu, now);
                    let _ = init.on_timeout(now);
                    match &mut resp {
                        Some(r) => { let _ = r.handle(&pdu, now); let _ = r.on_timeout(now); }
                        None => resp = Responder::on_invoke(&pdu, TidVerdict::Accept, fast(), now).map(|(r, _)| r),
                    }
                }
            }
        }
    }
}

/// WAP-224 Appendix A's "Timer Usage": the last packet of a packet group waits G_R, the
/// result message (its last group) R; the initiator's segmented invoke likewise.
#[test]
fn a_group_before_the_last_waits_g_r_and_the_last_group_r() {
    let timers = Timers {
        group_retry_interval_ns: S,
        retry_interval_ns: 5 * S,
        ..fast()
    };
    let deadline_after_result = |len: usize| {
        let (mut resp, _) = responder_to_a_get(timers);
        resp.result(result_bytes(len), at(0)).unwrap();
        resp.deadline()
    };
    // 9 packets of 100 octets: the first group of 3 is not the last.
    assert_eq!(deadline_after_result(900), Some(S));
    // 3 packets: one group, the message's last.
    assert_eq!(deadline_after_result(250), Some(5 * S));
    let invoke_deadline = |len: usize| {
        let (init, _) = Initiator::start(
            Tid::new(8),
            TransactionClass::Two,
            vec![0; len],
            timers,
            at(0),
        )
        .unwrap();
        init.deadline()
    };
    assert_eq!(invoke_deadline(900), Some(S));
    assert_eq!(invoke_deadline(250), Some(5 * S));
}

/// A copy of an earlier group's Ack (the initiator answering a retransmission of that
/// group's last packet, sent before its first Ack came back) moves nothing: the group in
/// flight is not sent again, and its retransmission count stands.
#[test]
fn a_stale_group_ack_does_not_resend_the_group_in_flight() {
    let timers = fast();
    let (mut resp, invoke) = responder_to_a_get(timers);
    // 9 packets of 100 octets in groups of 3.
    assert_eq!(resp.result(result_bytes(900), at(0)).unwrap().send.len(), 3);
    let ack = |psn: u8| Pdu {
        rid: false,
        tid: invoke.tid,
        direction: Direction::FromInitiator,
        tpis: vec![Tpi::PacketSequenceNumber(psn)],
        body: Body::Ack {
            tid_verification: false,
        },
    };
    assert_eq!(
        resp.handle(&ack(2), at(S)).send.len(),
        3,
        "the second group"
    );
    assert!(
        resp.handle(&ack(2), at(S + 1)).send.is_empty(),
        "a stale Ack"
    );
    assert_eq!(resp.deadline(), Some(S + timers.group_retry_interval_ns));
    assert_eq!(
        resp.handle(&ack(5), at(2 * S)).send.len(),
        3,
        "the third group"
    );
    let done = resp.handle(&ack(8), at(3 * S));
    assert!(done.events.contains(&Event::Completed) && resp.is_finished());
}

/// The first packet of a segmented result acknowledges the invoke: the initiator stops
/// retransmitting it and waits W for the rest (a result that takes longer than RCR_MAX x R
/// to arrive, as a large deck over a slow bearer does, is not aborted).
#[test]
fn the_first_packet_of_a_segmented_result_stops_the_invokes_retransmission() {
    let timers = fast();
    let (mut init, _) = a_get(timers);
    let first = Pdu {
        rid: false,
        tid: Tid::new(7),
        direction: Direction::FromResponder,
        tpis: vec![],
        body: Body::Result {
            trailer: Trailer::More,
            data: vec![1; 100],
        },
    };
    assert!(init.handle(&first, at(S / 2)).send.is_empty());
    assert_eq!(init.deadline(), Some(S / 2 + timers.wait_timeout_ns));
    // Past RCR_MAX retries of R (4 x 2 s), still within W (10 s): no retransmission.
    let retries = u64::from(timers.max_retransmissions) * timers.retry_interval_ns;
    assert!(init.on_timeout(at(S / 2 + retries)).send.is_empty());
    assert!(!init.is_finished());
    assert_eq!(init.retransmissions(), 0);
    // W without the rest: the transaction gives up.
    init.on_timeout(at(S / 2 + timers.wait_timeout_ns));
    assert!(init.is_finished());
}

/// WAP-224 §7.14.3: on the retry timer only the group's last packet goes again (RID set),
/// not the whole group; the receiver's Ack or Nack says the rest.
#[test]
fn the_retry_timer_resends_only_the_groups_last_packet() {
    let timers = fast();
    let (mut resp, _) = responder_to_a_get(timers);
    assert_eq!(resp.result(result_bytes(900), at(0)).unwrap().send.len(), 3);
    let again = resp.on_timeout(at(timers.group_retry_interval_ns));
    assert_eq!(again.send.len(), 1);
    let pdu = decode_datagram(&again.send[0]).unwrap().remove(0);
    assert!(pdu.rid);
    assert!(matches!(
        pdu.body,
        Body::SegmentedResult {
            psn: 2,
            trailer: Trailer::EndOfGroup,
            ..
        }
    ));
    let (mut init, _) = Initiator::start(
        Tid::new(8),
        TransactionClass::Two,
        vec![0; 900],
        timers,
        at(0),
    )
    .unwrap();
    assert_eq!(
        init.on_timeout(at(timers.group_retry_interval_ns))
            .send
            .len(),
        1
    );
}
