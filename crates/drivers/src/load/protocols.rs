//! The clients a load run offers: WTLS with its caches and resumed sessions, and any
//! protocol on the spine with fresh connections of one configuration (its registry
//! entry's [`crate::registry::LoadSides`]). The generator and the gateway worker are the
//! same for all of them.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::RngExt;
use wtls::handshake::{AuthMode, Client, ClientConfig, Negotiated, StoredSession};
use wtls::probe::Probe;
use wtlsperf_spine::{AnyHandshake, Now};

use super::generator::LoadClients;

/// Sessions kept for resumption.
const SESSION_POOL: usize = 1024;

/// WTLS clients of one configuration; a share of them resumes a session kept from an
/// earlier completed handshake.
pub(crate) struct WtlsClients {
    cfg: Arc<ClientConfig>,
    auth: AuthMode,
    resume_ratio: f64,
    sessions: Vec<StoredSession>,
}

impl WtlsClients {
    pub(crate) fn new(cfg: Arc<ClientConfig>, auth: AuthMode, resume_ratio: f64) -> Self {
        WtlsClients {
            cfg,
            auth,
            resume_ratio,
            sessions: Vec::new(),
        }
    }
}

impl LoadClients for WtlsClients {
    type Client = Client;

    fn client(&mut self, now: Now, rng: &mut StdRng) -> Option<(Client, bool)> {
        let resume = (!self.sessions.is_empty() && rng.random::<f64>() < self.resume_ratio)
            .then(|| self.sessions[rng.random_range(0..self.sessions.len())].clone());
        let resumed = resume.is_some();
        let client = Client::new(self.cfg.clone(), self.auth, resume, Probe::off(), now);
        Some((client, resumed))
    }

    fn kind(negotiated: &Negotiated) -> &'static str {
        wtls::endpoint::kind_name(negotiated.kind)
    }

    fn completed(&mut self, client: &Client, rng: &mut StdRng) {
        if self.resume_ratio <= 0.0 {
            return;
        }
        if let Some(s) = client.session() {
            if self.sessions.len() < SESSION_POOL {
                self.sessions.push(s);
            } else {
                let j = rng.random_range(0..SESSION_POOL);
                self.sessions[j] = s;
            }
        }
    }
}

/// Fresh clients of a protocol on the spine (no resumption), each made with its own
/// number (EDHOC's initiators draw their CoAP timers and connection identifier from it).
pub(crate) struct SpineClients {
    pub(crate) make: Box<dyn FnMut(u64) -> anyhow::Result<AnyHandshake> + Send>,
    pub(crate) next: u64,
}

impl LoadClients for SpineClients {
    type Client = AnyHandshake;

    fn client(&mut self, _now: Now, _rng: &mut StdRng) -> Option<(AnyHandshake, bool)> {
        self.next += 1;
        (self.make)(self.next).ok().map(|c| (c, false))
    }
}
