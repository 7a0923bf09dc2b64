//! WTP's timer intervals and counters (WAP-224-WTP-20010710-a §9.4: Table 39 names the
//! intervals A, R and W, Table 40 the counters RCR and AEC) and the values Appendix A
//! ("Default Timer and Counter Values", normative) gives for each bearer.
//!
//! Appendix A has three tables: GSM SMS, GSM USSD, and "Bearers supporting IP (Circuit
//! switched, CDPD...)". Each splits A and R by purpose (base, short, long, group) and its
//! "Timer Usage" table says which applies to which message. The appendix itself says the
//! values "are initial estimates and have not yet been verified".

use std::fmt;
use std::str::FromStr;

/// The bearers WAP-224 Appendix A gives values for. UDP over IP, what the gateway's ports
/// and our client speak, is [`WtpBearer::Ip`]; Appendix A names circuit-switched data and
/// CDPD in that table and leaves other IP bearers (GPRS among them) to its "...".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WtpBearer {
    GsmSms,
    GsmUssd,
    Ip,
}

impl WtpBearer {
    pub const ALL: [WtpBearer; 3] = [WtpBearer::GsmSms, WtpBearer::GsmUssd, WtpBearer::Ip];

    pub fn name(self) -> &'static str {
        match self {
            WtpBearer::GsmSms => "gsm-sms",
            WtpBearer::GsmUssd => "gsm-ussd",
            WtpBearer::Ip => "ip",
        }
    }

    /// The bearer's table in Appendix A.
    pub fn appendix_a(self) -> AppendixA {
        match self {
            // "The maximum round-trip time is assumed to be 40 seconds (while a median
            // round-trip time is about 10 seconds)".
            WtpBearer::GsmSms => AppendixA {
                b_a: 10,
                s_a: [0, 5],
                l_a: 20,
                b_r: 60,
                s_r: [35, 40],
                l_r: 70,
                g_r: 45,
                w: 300,
                rcr_max: 4,
                aec_max: 4,
                max_round_trip: 40,
            },
            // Maximum round trip assumed 5 s.
            WtpBearer::GsmUssd => AppendixA {
                b_a: 10,
                s_a: [0, 5],
                l_a: 10,
                b_r: 20,
                s_r: [14, 14],
                l_r: 20,
                g_r: 10,
                w: 60,
                rcr_max: 4,
                aec_max: 4,
                max_round_trip: 5,
            },
            // Maximum round trip assumed 3 s.
            WtpBearer::Ip => AppendixA {
                b_a: 2,
                s_a: [0, 1],
                l_a: 4,
                b_r: 5,
                s_r: [3, 4],
                l_r: 7,
                g_r: 3,
                w: 40,
                rcr_max: 8,
                aec_max: 6,
                max_round_trip: 3,
            },
        }
    }
}

impl fmt::Display for WtpBearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WtpBearer {
    type Err = String;

    fn from_str(s: &str) -> Result<WtpBearer, String> {
        WtpBearer::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| "not a WTP bearer (gsm-sms, gsm-ussd or ip)".to_owned())
    }
}

/// One bearer's table of WAP-224 Appendix A, in seconds and counts. Where the table has a
/// column "Without User Ack." and one "With User Ack.", `[without, with]`; the other
/// rows are the same in both columns in all three tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendixA {
    /// Base acknowledgement interval: the responder's hold-on Ack (class 2).
    pub b_a: u64,
    /// Short acknowledgement interval: class 1's last acknowledgement.
    pub s_a: [u64; 2],
    /// Long acknowledgement interval: class 2's last acknowledgement.
    pub l_a: u64,
    /// Base retry interval: class 2's invoke.
    pub b_r: u64,
    /// Short retry interval: class 1's invoke.
    pub s_r: [u64; 2],
    /// Long retry interval: the result.
    pub l_r: u64,
    /// Group retry interval: the last packet of a packet group.
    pub g_r: u64,
    /// Wait timeout interval.
    pub w: u64,
    /// "Max Retransmissions" (RCR_MAX) and "Max Ack timer Expiration" (AEC_MAX).
    pub rcr_max: u8,
    pub aec_max: u8,
    /// The maximum round-trip time the table assumes (its introduction to each bearer).
    pub max_round_trip: u64,
}

/// The intervals and limits one transaction runs with. A transaction has one role, so
/// `ack_interval_ns` and `retry_interval_ns` hold that role's A and R:
/// [`Timers::responder`] and [`Timers::initiator`] map Appendix A's "Timer Usage" table
/// onto them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timers {
    /// A: how long a receiver waits before it acknowledges: the responder's hold-on Ack
    /// (B_A), the initiator's last Ack awaiting its user (L_A).
    pub ack_interval_ns: u64,
    /// R: how long a sender waits for an acknowledgement of a message's last group
    /// before retransmitting: the invoke (B_R), the result (L_R).
    pub retry_interval_ns: u64,
    /// G_R: the same for a group of a segmented message that is not its last.
    pub group_retry_interval_ns: u64,
    /// W: how long the side that sent the last acknowledgement keeps the transaction to
    /// re-acknowledge a retransmission.
    pub wait_timeout_ns: u64,
    /// RCR_MAX: retransmissions before the transaction is aborted with NORESPONSE.
    pub max_retransmissions: u8,
    /// AEC_MAX: expiries of A, waiting for the user's acknowledgement, before an abort.
    pub max_ack_expirations: u8,
    /// Octets of user data per packet when a message is segmented.
    pub segment_size: usize,
    /// Packets per group: the receiver acknowledges (or NACKs) after each group.
    pub group_size: u8,
    /// MPL: the longest a datagram outlives its sending, for which a responder keeps an
    /// initiator's last TID ([`super::TidCache`]). WAP-259 leaves MPL to the carrier; the
    /// default is the maximum round trip Appendix A assumes for the bearer, since no
    /// datagram can take longer one way than that round trip, and WTP's own retry
    /// intervals treat a later one as lost.
    pub mpl_ns: u64,
}

const S: u64 = 1_000_000_000;

impl Timers {
    /// A class 2 responder's (WSP's server's) values on `bearer`, by Appendix A's "Timer
    /// Usage": hold-on Ack B_A, result L_R, packet group G_R, W, RCR_MAX, AEC_MAX.
    /// Class 1 responders take the same (the gateway starts none).
    pub fn responder(bearer: WtpBearer) -> Timers {
        let t = bearer.appendix_a();
        Timers {
            ack_interval_ns: t.b_a * S,
            retry_interval_ns: t.l_r * S,
            ..Timers::common(t)
        }
    }

    /// A class 2 initiator's (WSP's client's) values on `bearer`: invoke B_R, last
    /// acknowledgement L_A, packet group G_R, W, RCR_MAX, AEC_MAX. Class 0 runs no timer;
    /// class 1 (S_R, S_A in the table) is not what WSP's client starts.
    pub fn initiator(bearer: WtpBearer) -> Timers {
        let t = bearer.appendix_a();
        Timers {
            ack_interval_ns: t.l_a * S,
            retry_interval_ns: t.b_r * S,
            ..Timers::common(t)
        }
    }

    fn common(t: AppendixA) -> Timers {
        Timers {
            ack_interval_ns: 0,
            retry_interval_ns: 0,
            group_retry_interval_ns: t.g_r * S,
            wait_timeout_ns: t.w * S,
            max_retransmissions: t.rcr_max,
            max_ack_expirations: t.aec_max,
            // Not WTP's to say: 1400 octets fit one Ethernet-sized UDP datagram with
            // WTP's and WTLS's headers; groups of 3 are Kannel 1.4.5's.
            segment_size: 1400,
            group_size: 3,
            mpl_ns: t.max_round_trip * S,
        }
    }
}

impl Timers {
    /// How long a responder keeps an initiator's last TID after last hearing from it:
    /// the longest one of its transactions can go on sending an invoke (RCR_MAX
    /// retransmissions R apart; this side's R, which Appendix A sets at or above the
    /// initiator's), plus the network's MPL for the last copy to arrive. Within it a
    /// lower or equal TID may be an old invoke and gets the TID test; after it, none can
    /// still come (WAP-224 §7.8.2.2, §7.8.3.2).
    pub fn tid_lifetime_ns(&self) -> u64 {
        u64::from(self.max_retransmissions)
            .saturating_mul(self.retry_interval_ns)
            .saturating_add(self.mpl_ns)
    }
}

impl Default for Timers {
    /// A responder on an IP bearer: what the gateway's ports run with.
    fn default() -> Self {
        Timers::responder(WtpBearer::Ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ip_bearer_keeps_kannels_result_retry_and_counters() {
        // Kannel 1.4.5 (wap/wtp.h) took L_R 7 s, MAX_RCR 8 and AEC_MAX 6 from the same
        // table; its hold-on Ack waits L_A (4 s) where the table's usage says B_A (2 s),
        // and it waits W 30 s where the table says 40.
        let r = Timers::responder(WtpBearer::Ip);
        assert_eq!(
            (
                r.ack_interval_ns,
                r.retry_interval_ns,
                r.group_retry_interval_ns
            ),
            (2 * S, 7 * S, 3 * S)
        );
        assert_eq!(
            (
                r.wait_timeout_ns,
                r.max_retransmissions,
                r.max_ack_expirations
            ),
            (40 * S, 8, 6)
        );
        let i = Timers::initiator(WtpBearer::Ip);
        assert_eq!((i.ack_interval_ns, i.retry_interval_ns), (4 * S, 5 * S));
        assert_eq!(Timers::default(), r);
    }

    #[test]
    fn every_bearer_parses_from_its_name_and_slower_bearers_wait_longer() {
        for b in WtpBearer::ALL {
            assert_eq!(b.name().parse::<WtpBearer>(), Ok(b));
        }
        assert!("gprs".parse::<WtpBearer>().unwrap_err().contains("gsm-sms"));
        let r = |b| Timers::responder(b).retry_interval_ns;
        assert!(r(WtpBearer::GsmSms) > r(WtpBearer::GsmUssd));
        assert!(r(WtpBearer::GsmUssd) > r(WtpBearer::Ip));
        assert_eq!(Timers::responder(WtpBearer::GsmSms).max_retransmissions, 4);
        let mpl = |b| Timers::responder(b).mpl_ns / S;
        assert_eq!(
            WtpBearer::ALL.map(mpl),
            [40, 5, 3],
            "Appendix A's assumed maximum round trips"
        );
    }
}
