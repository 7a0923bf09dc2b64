//! The WAP layers on arbitrary bytes: WTP datagrams (each decoded PDU must re-encode to a
//! PDU that decodes to the same value) fed to a responder and an initiator in virtual
//! time; their user data read as connection-mode and connectionless WSP, and as WMLC.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wtlsperf_wap::wtp::{
    decode_datagram, Initiator, Now, Pdu, Responder, Tid, TidVerdict, Timers, TransactionClass,
};
use wtlsperf_wap::{wbxml, wsp};

fuzz_target!(|data: &[u8]| {
    let _ = wsp::Pdu::decode(data);
    let _ = wsp::decode_connectionless(data);
    let _ = wbxml::wml::decompile(data);
    let Ok(pdus) = decode_datagram(data) else {
        return;
    };
    let timers = Timers::default();
    let (mut initiator, _) =
        Initiator::start(Tid::new(1), TransactionClass::Two, vec![0x40], timers, Now::new(0, 0))
            .expect("a one-octet invoke is never too large");
    let mut responder: Option<Responder> = None;
    for (i, pdu) in pdus.iter().enumerate() {
        assert_eq!(Pdu::decode(&pdu.encode()).as_ref(), Ok(pdu), "PDU does not round-trip");
        let now = Now::new(i as u64 * 5_000_000_000, 0);
        let _ = initiator.handle(pdu, now);
        let _ = initiator.on_timeout(now);
        match &mut responder {
            Some(r) => {
                let _ = r.handle(pdu, now);
                let _ = r.on_timeout(now);
            }
            None => {
                responder = Responder::on_invoke(pdu, TidVerdict::Accept, timers, now).map(|(r, _)| r)
            }
        }
    }
});
