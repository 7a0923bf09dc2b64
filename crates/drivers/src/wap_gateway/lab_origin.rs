//! The evaluation's web origin: a minimal HTTP/1.0 server on loopback that serves one
//! WML deck, so a page load measures the WAP path (bearer, WTLS, WSP/WTP, the gateway's
//! compile) and not a web server. Requests are bounded: it stops when dropped.

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
}

impl Drop for LabOrigin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One request: read the head (at most 16 kB, 5 s), answer the deck, close.
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
    let answer = format!(
        "HTTP/1.0 200 OK\r\nContent-Type: text/vnd.wap.wml\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{DECK}",
        DECK.len()
    );
    let _ = stream.write_all(answer.as_bytes());
}
