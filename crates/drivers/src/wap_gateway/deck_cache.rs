//! The gateway's cache of compiled decks: the WSP Reply made of an origin's answer to a
//! Get, kept by URL and by whether it was compiled, for as long as the origin's
//! `Cache-Control: max-age` says (RFC 9111 §4.2.1), then revalidated with its `ETag` and
//! `Last-Modified` (§4.3.1: a 304 keeps the compiled deck, so WML is not compiled again).
//!
//! What is not kept: answers other than 200, answers marked `no-store` or `private` (the
//! gateway is a shared cache, §5.2.2), answers with neither a max-age nor a validator,
//! requests carrying `Authorization` or `Cookie` (§3.5), and methods other than Get. The
//! cache is bounded in bytes (the Reply's body and URL); the least recently used deck
//! goes first.

use lru::LruCache;
use wtlsperf_wap::wsp;

use super::origin::{CacheHeaders, OriginRequest, Validators};

/// A deck's key: its URL, and whether the client gets WMLC (the compiled form) or the
/// origin's text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeckKey {
    uri: String,
    compiled: bool,
}

impl DeckKey {
    /// The key of a request the cache may answer; `None` for one it must pass on.
    pub fn of(request: &OriginRequest) -> Option<DeckKey> {
        let personal = request.headers.iter().any(|(name, _)| {
            name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("cookie")
        });
        (request.method == "GET" && request.body.is_none() && !personal).then(|| DeckKey {
            uri: request.uri.clone(),
            compiled: request.accepts_wmlc || !request.accepts_wml,
        })
    }
}

/// How long an answer may be served without asking the origin, and how to ask.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Freshness {
    /// `None`: not to be stored.
    pub max_age_s: Option<u64>,
    pub validators: Validators,
}

impl Freshness {
    /// Reads `Cache-Control`, `ETag` and `Last-Modified`.
    pub fn of(headers: &CacheHeaders) -> Freshness {
        let validators = Validators {
            etag: headers.etag.clone(),
            last_modified: headers.last_modified.clone(),
        };
        let mut max_age = None;
        let mut store = true;
        for directive in headers.cache_control.iter().flat_map(|c| c.split(',')) {
            let directive = directive.trim().to_ascii_lowercase();
            match directive.split_once('=') {
                Some(("max-age" | "s-maxage", v)) => {
                    // s-maxage is for shared caches and wins (§5.2.2.10); a bad value
                    // makes the answer stale at once (§4.2.1).
                    let v = v.trim_matches('"').parse().unwrap_or(0);
                    if directive.starts_with("s-") || max_age.is_none() {
                        max_age = Some(v);
                    }
                }
                _ if directive == "no-store" || directive == "private" => store = false,
                _ if directive == "no-cache" => max_age = Some(0),
                _ => {}
            }
        }
        let has_validator = validators.etag.is_some() || validators.last_modified.is_some();
        let max_age_s = match max_age {
            Some(s) if store && (s > 0 || has_validator) => Some(s),
            None if store && has_validator => Some(0),
            _ => None,
        };
        Freshness {
            max_age_s,
            validators,
        }
    }
}

/// What the cache has for a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Fresh(wsp::Pdu),
    /// Kept but stale: ask the origin with these validators.
    Stale(Validators),
    Miss,
}

#[derive(Debug, Clone)]
struct Deck {
    reply: wsp::Pdu,
    fresh_until_ns: u64,
    validators: Validators,
    bytes: usize,
}

/// The cache's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub revalidated: u64,
    pub misses: u64,
    pub stored: u64,
    pub evicted: u64,
    pub entries: usize,
    pub bytes: usize,
    pub max_bytes: usize,
}

/// The decks, bounded in bytes.
#[derive(Debug)]
pub struct DeckCache {
    decks: LruCache<DeckKey, Deck>,
    stats: CacheStats,
}

/// Bytes a deck counts for: its body and URL, plus a fixed share for the entry.
fn size_of(key: &DeckKey, reply: &wsp::Pdu) -> usize {
    let body = match reply {
        wsp::Pdu::Reply { body, .. } => body.len(),
        _ => 0,
    };
    body + key.uri.len() + 128
}

impl DeckCache {
    /// A cache of at most `max_bytes` (0: the cache is off).
    pub fn new(max_bytes: usize) -> DeckCache {
        DeckCache {
            decks: LruCache::unbounded(),
            stats: CacheStats {
                max_bytes,
                ..CacheStats::default()
            },
        }
    }

    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    pub fn lookup(&mut self, key: &DeckKey, now_ns: u64) -> Lookup {
        let found = match self.decks.get(key) {
            Some(d) if d.fresh_until_ns > now_ns => Lookup::Fresh(d.reply.clone()),
            Some(d) => Lookup::Stale(d.validators.clone()),
            None => Lookup::Miss,
        };
        match found {
            Lookup::Fresh(_) => self.stats.hits += 1,
            _ => self.stats.misses += 1,
        }
        found
    }

    /// Keeps `reply` (a 200 the origin allows a shared cache to keep).
    pub fn store(&mut self, key: DeckKey, reply: &wsp::Pdu, freshness: Freshness, now_ns: u64) {
        let ok = matches!(reply, wsp::Pdu::Reply { status, .. } if *status == wsp::Status::OK);
        let Some(max_age) = freshness.max_age_s.filter(|_| ok) else {
            return;
        };
        let bytes = size_of(&key, reply);
        if bytes > self.stats.max_bytes {
            return;
        }
        if let Some(old) = self.decks.pop(&key) {
            self.stats.bytes -= old.bytes;
        }
        while self.stats.bytes + bytes > self.stats.max_bytes {
            let Some((_, old)) = self.decks.pop_lru() else {
                break;
            };
            self.stats.bytes -= old.bytes;
            self.stats.evicted += 1;
        }
        let deck = Deck {
            reply: reply.clone(),
            fresh_until_ns: now_ns.saturating_add(max_age.saturating_mul(1_000_000_000)),
            validators: freshness.validators,
            bytes,
        };
        self.decks.put(key, deck);
        self.stats.bytes += bytes;
        self.stats.stored += 1;
        self.stats.entries = self.decks.len();
    }

    /// The origin answered 304: the kept deck is current for another max-age (the 304's
    /// own headers update it, §4.3.4). `None` when it is no longer kept.
    pub fn revalidated(
        &mut self,
        key: &DeckKey,
        headers: &CacheHeaders,
        now_ns: u64,
    ) -> Option<wsp::Pdu> {
        let fresh = Freshness::of(headers);
        let deck = self.decks.get_mut(key)?;
        let max_age = fresh.max_age_s.unwrap_or(0);
        deck.fresh_until_ns = now_ns.saturating_add(max_age.saturating_mul(1_000_000_000));
        if fresh.validators.etag.is_some() || fresh.validators.last_modified.is_some() {
            deck.validators = fresh.validators;
        }
        self.stats.revalidated += 1;
        Some(deck.reply.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn get(uri: &str) -> OriginRequest {
        OriginRequest {
            method: "GET",
            uri: uri.into(),
            headers: vec![],
            body: None,
            accepts_wmlc: true,
            accepts_wml: false,
        }
    }

    fn deck(body: usize) -> wsp::Pdu {
        wsp::Pdu::Reply {
            status: wsp::Status::OK,
            content_type: wsp::ContentType::WMLC,
            headers: wsp::Headers::default(),
            body: vec![7; body],
        }
    }

    fn headers(cc: &str, etag: Option<&str>) -> CacheHeaders {
        CacheHeaders {
            cache_control: Some(cc.into()),
            etag: etag.map(str::to_string),
            last_modified: None,
        }
    }

    #[test]
    fn a_deck_is_fresh_for_max_age_then_revalidated_by_its_etag() {
        let mut c = DeckCache::new(1 << 20);
        let key = DeckKey::of(&get("http://o/a.wml")).unwrap();
        assert_eq!(c.lookup(&key, 0), Lookup::Miss);
        c.store(
            key.clone(),
            &deck(10),
            Freshness::of(&headers("max-age=60", Some("\"v1\""))),
            0,
        );
        assert_eq!(c.lookup(&key, 59 * S), Lookup::Fresh(deck(10)));
        let Lookup::Stale(v) = c.lookup(&key, 60 * S) else {
            panic!("stale after max-age")
        };
        assert_eq!(v.etag.as_deref(), Some("\"v1\""));
        assert_eq!(
            c.revalidated(&key, &headers("max-age=30", None), 60 * S),
            Some(deck(10))
        );
        assert_eq!(c.lookup(&key, 89 * S), Lookup::Fresh(deck(10)));
        // The same URL for a client that reads WML text is another deck.
        let text = OriginRequest {
            accepts_wmlc: false,
            accepts_wml: true,
            ..get("http://o/a.wml")
        };
        assert_eq!(c.lookup(&DeckKey::of(&text).unwrap(), 0), Lookup::Miss);
        let s = c.stats();
        assert_eq!((s.hits, s.revalidated, s.stored), (2, 1, 1));
    }

    #[test]
    fn what_a_shared_cache_must_not_keep_is_not_kept() {
        let mut c = DeckCache::new(1 << 20);
        let key = DeckKey::of(&get("http://o/a.wml")).unwrap();
        for cc in ["no-store", "private, max-age=60", "max-age=0", "nonsense"] {
            c.store(key.clone(), &deck(1), Freshness::of(&headers(cc, None)), 0);
            assert_eq!(c.lookup(&key, 0), Lookup::Miss, "{cc}");
        }
        let error = wsp::Pdu::Reply {
            status: wsp::Status::from_http_or_class(404),
            content_type: wsp::ContentType::WMLC,
            headers: wsp::Headers::default(),
            body: vec![],
        };
        c.store(
            key.clone(),
            &error,
            Freshness::of(&headers("max-age=60", None)),
            0,
        );
        assert_eq!(c.lookup(&key, 0), Lookup::Miss);
        let mut personal = get("http://o/a.wml");
        personal.headers.push(("Cookie".into(), "id=1".into()));
        assert_eq!(DeckKey::of(&personal), None);
        let post = OriginRequest {
            method: "POST",
            ..get("http://o/a.wml")
        };
        assert_eq!(DeckKey::of(&post), None);
    }

    #[test]
    fn the_cache_stays_within_its_bytes_evicting_the_least_recently_used() {
        let mut c = DeckCache::new(3 * 1200);
        let keys: Vec<DeckKey> = (0..5)
            .map(|i| DeckKey::of(&get(&format!("http://o/{i}.wml"))).unwrap())
            .collect();
        let fresh = || Freshness::of(&headers("max-age=60", None));
        for k in &keys[..3] {
            c.store(k.clone(), &deck(1000), fresh(), 0);
        }
        // Deck 0 is used, so deck 1 is the least recently used when 3 comes.
        assert!(matches!(c.lookup(&keys[0], 0), Lookup::Fresh(_)));
        c.store(keys[3].clone(), &deck(1000), fresh(), 0);
        assert_eq!(c.lookup(&keys[1], 0), Lookup::Miss);
        assert!(matches!(c.lookup(&keys[0], 0), Lookup::Fresh(_)));
        // A deck larger than the whole cache is not kept.
        c.store(keys[4].clone(), &deck(4000), fresh(), 0);
        assert_eq!(c.lookup(&keys[4], 0), Lookup::Miss);
        let s = c.stats();
        assert!(s.bytes <= s.max_bytes, "{s:?}");
        assert_eq!(s.evicted, 1);
    }
}
