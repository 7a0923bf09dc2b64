//! The gateway's side toward the web: a WSP request becomes an HTTP request to the
//! origin (ureq, blocking, with time-outs), and the HTTP answer becomes a WSP Reply,
//! with WML compiled to WMLC for a client that accepts it.

use std::time::Duration;

use wtlsperf_wap::wbxml::wml;
use wtlsperf_wap::wsp::{self, ContentType, GetMethod, Headers, PostMethod, Status};

/// Largest origin body the gateway reads by default (a WAP 1.x handset held a few kB per
/// deck); a larger one is a 502.
pub const MAX_BODY: u64 = 256 * 1024;

/// How long the origin may take: the whole call, the TCP connect, and each read of the
/// answer (its head, then each part of the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OriginTimeouts {
    pub total: Duration,
    pub connect: Duration,
    pub read: Duration,
}

/// The headers a cache keeps an answer by (RFC 9111 §4.2 and §4.3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheHeaders {
    pub cache_control: Option<String>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// The validators of a cached answer, sent again to ask whether it is still current.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// An HTTP request for the origin, built from a WSP Get or Post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginRequest {
    pub method: &'static str,
    pub uri: String,
    /// Headers to pass on, as HTTP names and values.
    pub headers: Vec<(String, String)>,
    /// Post and Put: the body's content type and octets.
    pub body: Option<(String, Vec<u8>)>,
    /// What the client accepts, for the compile decision.
    pub accepts_wmlc: bool,
    pub accepts_wml: bool,
}

impl OriginRequest {
    /// The request for a WSP method PDU; `None` for PDUs that are no method.
    pub fn from_pdu(pdu: &wsp::Pdu, session_headers: &Headers) -> Option<OriginRequest> {
        let (method, uri, headers, body) = match pdu {
            wsp::Pdu::Get {
                method,
                uri,
                headers,
            } => (get_name(*method), uri, headers, None),
            wsp::Pdu::Post {
                method,
                uri,
                content_type,
                headers,
                body,
            } => (
                post_name(*method),
                uri,
                headers,
                Some((content_type.to_string(), body.clone())),
            ),
            _ => return None,
        };
        // Session headers (from Connect) apply to every request; the request's own come
        // after them.
        let all: Vec<&wsp::Header> = session_headers.0.iter().chain(headers.0.iter()).collect();
        let merged = Headers(all.iter().map(|h| (*h).clone()).collect());
        let accepts_wmlc = merged.accepts(&ContentType::WMLC);
        let accepts_wml = merged.accepts(&ContentType::WML);
        let mut http: Vec<(String, String)> = all
            .iter()
            .map(|h| h.to_http())
            .filter(|(name, value)| !value.is_empty() && forwardable(name))
            .collect();
        if accepts_wmlc && !accepts_wml {
            // The gateway compiles WML, so the origin may send it.
            http.push(("Accept".into(), ContentType::WML.to_string()));
        }
        Some(OriginRequest {
            method,
            uri: uri.clone(),
            headers: http,
            body,
            accepts_wmlc,
            accepts_wml,
        })
    }
}

fn get_name(m: GetMethod) -> &'static str {
    m.http_name()
}

fn post_name(m: PostMethod) -> &'static str {
    m.http_name()
}

/// Headers that describe the hop, not the request, stay behind (RFC 9110 §7.6.1).
fn forwardable(name: &str) -> bool {
    ![
        "connection",
        "content-length",
        "transfer-encoding",
        "host",
        "te",
        "upgrade",
    ]
    .iter()
    .any(|h| h.eq_ignore_ascii_case(name))
}

/// What the origin answered, before conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginAnswer {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    pub cache: CacheHeaders,
}

/// Why the origin gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginFailure {
    /// Not within the time-out: 504.
    TimedOut,
    /// Unreachable, refused, a broken answer, or too large: 502.
    Failed(String),
    /// The URI is not an http URL the gateway fetches: 400.
    BadUri(String),
}

/// The HTTP client toward origins.
#[derive(Debug, Clone)]
pub struct Origin {
    agent: ureq::Agent,
    max_body: u64,
}

impl Origin {
    /// An agent whose whole call (connect, send, headers, body) ends within
    /// `timeouts.total`, reading at most `max_body` octets of an answer. Its connections
    /// stay open for the next request to the same origin (ureq's pool, shared by the
    /// clones of one `Origin`), as many as `keep_alive` per origin.
    pub fn new(timeouts: OriginTimeouts, max_body: u64, keep_alive: usize) -> Origin {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeouts.total))
            .timeout_connect(Some(timeouts.connect))
            .timeout_recv_response(Some(timeouts.read))
            .timeout_recv_body(Some(timeouts.read))
            .http_status_as_error(false)
            .max_redirects(0)
            .max_idle_connections(keep_alive.max(1) * 4)
            .max_idle_connections_per_host(keep_alive.max(1))
            .build();
        Origin {
            agent: config.into(),
            max_body,
        }
    }

    /// The origin's answer; with `validators`, a conditional request (a 304 says the
    /// cached answer is still current).
    pub fn fetch(
        &self,
        request: &OriginRequest,
        validators: Option<&Validators>,
    ) -> Result<OriginAnswer, OriginFailure> {
        if !request.uri.starts_with("http://") {
            return Err(OriginFailure::BadUri(request.uri.clone()));
        }
        let mut builder = ureq::http::Request::builder()
            .method(request.method)
            .uri(request.uri.as_str());
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if let Some(v) = validators {
            if let Some(etag) = &v.etag {
                builder = builder.header("If-None-Match", etag.as_str());
            }
            if let Some(date) = &v.last_modified {
                builder = builder.header("If-Modified-Since", date.as_str());
            }
        }
        let body = match &request.body {
            Some((content_type, body)) => {
                builder = builder.header("Content-Type", content_type.as_str());
                body.clone()
            }
            None => Vec::new(),
        };
        let http = builder
            .body(body)
            .map_err(|e| OriginFailure::BadUri(format!("{}: {e}", request.uri)))?;
        let mut response = self.agent.run(http).map_err(failure)?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type =
            header("content-type").unwrap_or_else(|| "application/octet-stream".into());
        let cache = CacheHeaders {
            cache_control: header("cache-control"),
            etag: header("etag"),
            last_modified: header("last-modified"),
        };
        let body = response
            .body_mut()
            .with_config()
            .limit(self.max_body)
            .read_to_vec()
            .map_err(failure)?;
        Ok(OriginAnswer {
            status,
            content_type,
            body,
            cache,
        })
    }
}

fn failure(e: ureq::Error) -> OriginFailure {
    match e {
        ureq::Error::Timeout(_) => OriginFailure::TimedOut,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => OriginFailure::TimedOut,
        other => OriginFailure::Failed(other.to_string()),
    }
}

/// The WSP Reply for an origin's answer (or failure): status mapped, WML compiled to
/// WMLC when the client accepts WMLC (or does not accept WML text).
pub fn reply_for(request: &OriginRequest, answer: Result<OriginAnswer, OriginFailure>) -> wsp::Pdu {
    let answer = match answer {
        Ok(a) => a,
        Err(failure) => {
            let (code, text) = match failure {
                OriginFailure::TimedOut => (504, "the origin did not answer in time".to_string()),
                OriginFailure::Failed(why) => (502, why),
                OriginFailure::BadUri(uri) => (400, format!("not an http URL: {uri}")),
            };
            return plain(code, text);
        }
    };
    let content_type = ContentType::from_name(&answer.content_type);
    let wants_compiled = request.accepts_wmlc || !request.accepts_wml;
    if content_type.same_as(&ContentType::WML) && wants_compiled {
        return match std::str::from_utf8(&answer.body)
            .map_err(|e| e.to_string())
            .and_then(|text| wml::compile(text).map_err(|e| e.to_string()))
        {
            Ok(wmlc) => wsp::Pdu::Reply {
                status: Status::from_http_or_class(answer.status),
                content_type: ContentType::WMLC,
                headers: Headers::default(),
                body: wmlc,
            },
            Err(why) => plain(502, format!("the origin's WML does not compile: {why}")),
        };
    }
    wsp::Pdu::Reply {
        status: Status::from_http_or_class(answer.status),
        content_type,
        headers: Headers::default(),
        body: answer.body,
    }
}

/// A Reply of the gateway's own: `code` and a line of text saying why.
pub fn plain(code: u16, text: String) -> wsp::Pdu {
    wsp::Pdu::Reply {
        status: Status::from_http_or_class(code),
        content_type: ContentType::Text("text/plain".into()),
        headers: Headers::default(),
        body: text.into_bytes(),
    }
}
