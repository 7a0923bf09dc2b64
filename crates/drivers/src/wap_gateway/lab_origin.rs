//! The evaluation's web origin: a minimal HTTP/1.0 server on loopback that serves one
//! WML deck, and decks of a chosen size (`/deck-KB.wml`), so a page load measures the
//! WAP path (bearer, WTLS, WSP/WTP, the gateway's compile) and not a web server.
//! Requests are bounded: it stops when dropped.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The deck: a portal's first page of the time (a title card with news headlines and
/// links), about 1.2 kB of WML text.
pub const DECK: &str = r##"<?xml version="1.0"?>
<!DOCTYPE wml PUBLIC "-//WAPFORUM//DTD WML 1.1//EN" "http://www.wapforum.org/DTD/wml_1.1.xml">
<wml>
  <head><meta http-equiv="Cache-Control" content="max-age=300"/></head>
  <card id="home" title="Mobile portal">
    <p align="center"><b>Mobile portal</b></p>
    <p>
      <a href="http://www.example.com/news.wml">News</a><br/>
      <a href="http://www.example.com/weather.wml">Weather</a><br/>
      <a href="http://www.example.com/sport.wml">Sport</a><br/>
      <a href="http://www.example.com/bank.wml">Banking</a><br/>
      <a href="#search">Search</a>
    </p>
    <p>Today: markets close higher; rain expected in the north in the afternoon;
    the cup final goes to extra time.</p>
    <do type="options" label="Help"><go href="http://www.example.com/help.wml"/></do>
  </card>
  <card id="search" title="Search">
    <p>Find: <input name="q" title="Query" maxlength="40"/></p>
    <do type="accept" label="Go">
      <go href="http://www.example.com/find" method="post">
        <postfield name="q" value="$(q:escape)"/>
      </go>
    </do>
  </card>
</wml>
"##;

/// The running origin.
pub struct LabOrigin {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl LabOrigin {
    /// Listens on a loopback port the system picks.
    pub fn start() -> std::io::Result<LabOrigin> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("lab-origin".into())
            .spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let _ = std::thread::Builder::new()
                                .name("lab-origin-conn".into())
                                .spawn(move || serve(stream));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })?;
        Ok(LabOrigin {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The deck's URL.
    pub fn url(&self) -> String {
        format!("http://{}/deck.wml", self.addr)
    }

    /// The URL of [`sized_deck`]`(kb)`.
    pub fn sized_url(&self, kb: usize) -> String {
        format!("http://{}/deck-{kb}.wml", self.addr)
    }
}

/// The largest deck `/deck-KB.wml` serves (KiB of WML text).
pub const MAX_SIZED_KB: usize = 64;

/// A WML deck of at least `kb` KiB of text: one card of numbered paragraphs, so a
/// missing or misplaced segment shows. Its WMLC is somewhat smaller (tags become tokens).
pub fn sized_deck(kb: usize) -> String {
    let mut wml = String::from(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE wml PUBLIC \"-//WAPFORUM//DTD WML 1.1//EN\" \
         \"http://www.wapforum.org/DTD/wml_1.1.xml\">\n<wml><card id=\"big\" title=\"Deck\">",
    );
    let mut line = 0;
    while wml.len() < kb * 1024 {
        line += 1;
        wml.push_str(&format!(
            "<p>Line {line} of a deck of {kb} KB from the origin.</p>"
        ));
    }
    wml.push_str("</card></wml>\n");
    wml
}

/// The deck a request's path names: `/deck-KB.wml` up to [`MAX_SIZED_KB`], else the
/// portal's first page.
fn deck_for(path: &str) -> std::borrow::Cow<'static, str> {
    path.strip_prefix("/deck-")
        .and_then(|p| p.strip_suffix(".wml"))
        .and_then(|kb| kb.parse::<usize>().ok())
        .filter(|kb| (1..=MAX_SIZED_KB).contains(kb))
        .map_or(std::borrow::Cow::Borrowed(DECK), |kb| sized_deck(kb).into())
}

impl Drop for LabOrigin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One request: read the head (at most 16 kB, 5 s), answer the deck it names, close.
fn serve(mut stream: TcpStream) {
    if stream.set_nonblocking(false).is_err()
        || stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .is_err()
    {
        return;
    }
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16_384 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let deck = deck_for(text.split_whitespace().nth(1).unwrap_or("/"));
    let answer = format!(
        "HTTP/1.0 200 OK\r\nContent-Type: text/vnd.wap.wml\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{deck}",
        deck.len()
    );
    let _ = stream.write_all(answer.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_a_sized_deck_or_the_portal() {
        assert_eq!(deck_for("/deck.wml"), DECK);
        assert_eq!(deck_for("/deck-0.wml"), DECK);
        assert_eq!(deck_for("/deck-65.wml"), DECK);
        let ten = deck_for("/deck-10.wml");
        assert!(ten.len() >= 10 * 1024 && ten.len() < 11 * 1024);
        assert!(ten.ends_with("</card></wml>\n"));
    }
}
