//! A port's origin requests: the deck cache first, then a thread per request up to
//! `max_in_flight`, a queue of at most [`MAX_WAITING`] beyond them, and 503 beyond that.
//! Each answer comes back by channel and wakes the port.

use std::sync::atomic::Ordering;

use wtlsperf_wap::wsp;

use super::deck_cache::{DeckKey, Lookup};
use super::origin::{self, OriginRequest};
use super::service::ReplyTo;
use super::{setup, Port, MAX_WAITING};

/// An origin request for a Get or Post: what it answers, and the deck cache's key and
/// validators (a stale deck is asked for conditionally).
pub(super) struct Fetch {
    request: OriginRequest,
    reply_to: ReplyTo,
    key: Option<DeckKey>,
    validators: Option<origin::Validators>,
}

impl Port {
    /// Answers from the deck cache when it holds the deck fresh; otherwise asks the
    /// origin (conditionally, for a stale deck), now if a turn is free, else when one is
    /// (answered 503 when too many wait already).
    pub(super) fn fetch(&mut self, request: OriginRequest, reply_to: ReplyTo) {
        let key = DeckKey::of(&request).filter(|_| self.limits.cache_bytes > 0);
        let now_ns = setup::now().mono_ns;
        let found = key
            .as_ref()
            .and_then(|k| self.cache(|c| c.lookup(k, now_ns)));
        let validators = match found {
            Some(Lookup::Fresh(reply)) => {
                self.own.cache_answers += 1;
                self.answer(reply_to, &request, reply);
                return;
            }
            Some(Lookup::Stale(v)) => Some(v),
            _ => None,
        };
        let fetch = Fetch {
            request,
            reply_to,
            key,
            validators,
        };
        if self.in_flight.load(Ordering::SeqCst) < self.limits.max_in_flight {
            return self.start(fetch);
        }
        if self.waiting.len() < MAX_WAITING {
            return self.waiting.push_back(fetch);
        }
        if let Ok(mut r) = self.report.lock() {
            r.busy_refusals += 1;
        }
        let Fetch {
            request, reply_to, ..
        } = fetch;
        let busy = origin::reply_for(
            &request,
            Err(origin::OriginFailure::Failed("the gateway is busy".into())),
        );
        let busy = match busy {
            wsp::Pdu::Reply {
                content_type,
                headers,
                body,
                ..
            } => wsp::Pdu::Reply {
                status: wsp::Status::from_http_or_class(503),
                content_type,
                headers,
                body,
            },
            other => other,
        };
        self.answer(reply_to, &request, busy);
    }

    /// Starts waiting requests while turns are free.
    pub(super) fn start_waiting(&mut self) {
        while self.in_flight.load(Ordering::SeqCst) < self.limits.max_in_flight {
            let Some(fetch) = self.waiting.pop_front() else {
                return;
            };
            self.start(fetch);
        }
    }

    /// Asks the origin on a thread of its own; the answer comes back by channel and
    /// wakes the port.
    fn start(&mut self, fetch: Fetch) {
        let Fetch {
            request,
            reply_to,
            key,
            validators,
        } = fetch;
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        // Kept to answer 503 if no thread can be started (the transaction must not wait
        // for an answer that will never come).
        let kept = (reply_to, request.clone());
        let origin = self.origin.clone();
        let tx = self.answers_tx.clone();
        let in_flight = self.in_flight.clone();
        let report = self.report.clone();
        let waker = self.waker.clone();
        let spawned = std::thread::Builder::new()
            .name("wap-origin".into())
            .spawn(move || {
                let answer = origin.fetch(&request, validators.as_ref());
                if answer.is_err() {
                    if let Ok(mut r) = report.lock() {
                        r.origin_failures += 1;
                    }
                }
                in_flight.fetch_sub(1, Ordering::SeqCst);
                if tx.send((reply_to, request, key, answer)).is_ok() {
                    let _ = waker.wake();
                }
            });
        if let Err(e) = spawned {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!(error = %e, "could not start an origin request");
            let (to, request) = kept;
            let busy = origin::plain(503, "the gateway could not start the request".into());
            self.answer(to, &request, busy);
        }
    }
}
