//! The passages of the source studies that the report's findings and prose rest on,
//! each with its place and quoted word for word from the study's text in `data/seeds/`.
//!
//! A sentence of generated text that attributes something to a study takes its quotation
//! from here, never from a string of its own, and a test finds every passage in the
//! study's text (whitespace, line-break hyphenation, quotes and dashes normalised): an
//! attribution that misquotes or misplaces fails the build, not the reader.

use wtlsperf_report::{Passage, Study};

/// Bayoglu 2004, Eq. 4.1 on Table 4.12: the GSM CSD traversal delay (reported in Table 4.15).
pub const GSM_CSD_TRAVERSAL: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.3.1, Eq. 4.1 (Table 4.15, in section 4.3.3, prints the result)",
    quote: "Expected value of $T_{traversal}$ = 391.3 ms",
};

/// Bayoglu 2004, Eq. 4.2: the GPRS traversal delay from the ping round trip.
pub const GPRS_TRAVERSAL: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.3.2, Eq. 4.2",
    quote: "T_{traversal} = \\frac{1}{2} \\times \\left( T_{RTT} - \\frac{64 \\times 8}{R_{download}} - \\frac{64 \\times 8}{R_{upload}} \\right)",
};

/// Bayoglu 2004, section 4.2: the practical upper limit of category 3 group 2.
pub const CATEGORY3_LIMIT: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.2",
    quote: "Therefore, 72 is the practical upper limit when category#3- group2 key exchange suites are used.",
};

/// Bayoglu 2004, section 3.2: Eq. 3.12, the P-K formula, models the queue delay.
pub const QUEUE_MODEL: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 3.2, Eq. 3.12",
    quote: "Eq. ( 3.12 ) which is in fact the P-K (Pollaczek-Khinchin) formula [39], will be used to model the queue delay.",
};

/// Bayoglu 2004, section 3.2: the queue model is proposed for category 3 and extended to
/// the other categories by this sentence alone.
pub const QUEUE_OTHER_CATEGORIES: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 3.2 (before Eq. 3.19)",
    quote: "Queue delay model will be proposed for category#3. The same logic applies for the other categories with a slight change in the notation.",
};

/// Bayoglu 2004, section 3.2: the M/G/1 queue's Poisson arrivals.
pub const POISSON_ARRIVALS: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 3.2 (M/G/1 notation)",
    quote: "M \\text{ (memoryless)} : \\text{Poisson arrival process, arrival rate } I",
};

/// Bayoglu 2004, section 3.2: only the messages the gateway accepts make its queue.
pub const QUEUE_JOBS: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 3.2 (after Eq. 3.12, before Table 3.8 and Eq. 3.13)",
    quote: "Queue delay is affected by only the messages which the server (WAP Gateway) accepts.",
};

/// Bayoglu 2004, section 4.4: which part dominates the overall handshake time.
pub const OVERALL_PARTS: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.4",
    quote: "It is clearly seen that the data transmission time has the biggest affect on all of the ECDH\\_ECDSA key exchange suites using category#1, category#2 and category#3 certificates and RSA key exchange suites using category#1 and category#2 certificates when performing server authenticated WTLS handshake for both GSM CSD and GPRS data bearer types. Mutual authentication using RSA certificates and server authentication using category#3 RSA certificates has the processing time as the biggest portion of the overall handshake time.",
};

/// Bayoglu 2004, section 4.4 on Figure 4.39: what the thesis says of category 1's mutual
/// RSA handshake, the one its own tables put on the other side of its summary sentence.
pub const CATEGORY1_MUTUAL_RSA: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.4, on Figure 4.39",
    quote: "Processing time is affective on the overall processing time for only the mutual authenticated WTLS handshake using client and server certificates with 1024 bit RSA public key.",
};

/// Bayoglu 2004, section 3.3: WTP's acknowledgements, the reason for Eq. 3.84's factor 2.
pub const WTP_ACKNOWLEDGEMENTS: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 3.3",
    quote: "The WAP architecture requires sending an ACK (acknowledgement) packet to the sending peer after receiving a WTP data packet.",
};

/// Bayoglu 2004, section 3.3: Eq. 3.84.
pub const TRANSMISSION_MODEL: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 3.3, Eq. 3.84",
    quote: "T_{TD} = \\frac{L}{R} + 2 \\times (\\text{number of applicable messages}) \\times T_{traversal}",
};

/// Bayoglu 2004, section 4.4: the handshake's transmission time barely changes from one
/// key exchange suite to the next, though their data sizes differ.
pub const TRANSMISSION_FLAT: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.4",
    quote: "It is interesting that the data transmission time varies a little although the data size for the different key exchange suites vary, especially it is almost doubled for the RSA key exchange suite.",
};

/// Bayoglu 2004, section 4.1: the client's time is its public-key messages'.
pub const CLIENT_MESSAGES: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.1",
    quote: "These three messages' client processing time constitutes more than 99% of the overall client processing time and the other processing times can be neglected.",
};

/// Bayoglu 2004, section 3.1.1 (after Eq. 3.2-3.4): the processing model is additive,
/// one component per message and side, a few of them weighing most.
pub const ADDITIVE_MODEL: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 3.1.1 (Eq. 3.2-3.4)",
    quote: "Although the model includes 24 additive components of the handshake processing delays, some of these processing delays are expected to be more affective on the total processing time.",
};

/// Bayoglu 2004, section 4.1 (Table 4.3): the two main operations of a mutual
/// ECDH_ECDSA handshake's client time.
pub const CLIENT_MESSAGES_ECDH: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.1 (Table 4.3)",
    quote: "Verifying the server certificate using the CA certificate and the ECDH operation to compute the premaster secret are the two main operations that constitute more than 98% of overall client processing time.",
};

/// Bayoglu 2004, section 4.1: the fastest group of category 1.
pub const FASTEST_GROUP: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.1",
    quote: "Category#1-group3(163 bit random curve) client side processing time is the lowest one among the others for both server authenticated and mutual authenticated WTLS handshake.",
};

/// Bayoglu 2004, section 4.1: the fastest client of category 2 (Koblitz, 233k/163k).
pub const FASTEST_GROUP_CATEGORY2: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.1",
    quote: "the key exchange suite that uses client certificate with 163 bit Koblitz curve parameters signed with 233 bit Koblitz curve private key has the lowest client processing time",
};

/// Bayoglu 2004, section 4.1: the fastest group of category 3 (Koblitz).
pub const FASTEST_GROUP_CATEGORY3: Passage = Passage {
    study: Study::Bayoglu2004,
    place: "section 4.1",
    quote: "Client processing times of category#3-group#4(RSA) handshakes always has the highest value, where the group#2 (Koblitz curves) handshakes have the lowest client processing times.",
};

/// Levi-Savas 2003, section 4.1, observation 1: ECC against RSA.
pub const ECC_BEATS_RSA: Passage = Passage {
    study: Study::LeviSavas2003,
    place: "section 4.1, observation 1",
    quote: "In other words, ECC is better than RSA in WTLS.",
};

/// Levi-Savas 2003, section 4.1, observation 2: RSA's client is fast with server-only
/// authentication; its server is what is slow.
pub const RSA_CLIENT_REASONABLE: Passage = Passage {
    study: Study::LeviSavas2003,
    place: "section 4.1, observation 2",
    quote: "RSA_1024 and 2048 have reasonable client timing figures for server-only authentication protocol (Figure 4a), but the peer timing figures for the server (Figure 5a) are slow.",
};

/// Levi-Savas 2003, section 4: the client processor their timings come from, so that
/// their claim is judged on that processor and other clients are reported beside.
pub const LEVI_SAVAS_CLIENT: Passage = Passage {
    study: Study::LeviSavas2003,
    place: "section 4",
    quote: "Client implementations are performed on ARM7TDMI 25MHz microprocessor",
};

/// Herwono-Liebhardt 2001 (ICICS), section 3.1: the record throughput is an average
/// over the payload sizes, not a figure at one size.
pub const RECORD_THROUGHPUT_AVERAGED: Passage = Passage {
    study: Study::HerwonoLiebhardt2001Mcommerce,
    place: "ICICS section 3.1",
    quote: "WTLS user data ranging from 256 up to 8192 bytes have been used and the measured throughputs have been averaged.",
};

/// Herwono-Liebhardt 2001 (ICICS), section 3.3: the signText increases, stated without
/// key sizes or bearer.
pub const SIGNTEXT_INCREASE: Passage = Passage {
    study: Study::HerwonoLiebhardt2001Mcommerce,
    place: "ICICS section 3.3",
    quote: "With RSA-signing, the duration increases by 1.73 s and 2.50 s respectively.",
};

/// Every passage above: the test below finds each in its study's text.
pub const ALL: &[Passage] = &[
    GSM_CSD_TRAVERSAL,
    GPRS_TRAVERSAL,
    CATEGORY3_LIMIT,
    QUEUE_MODEL,
    QUEUE_OTHER_CATEGORIES,
    POISSON_ARRIVALS,
    QUEUE_JOBS,
    OVERALL_PARTS,
    CATEGORY1_MUTUAL_RSA,
    WTP_ACKNOWLEDGEMENTS,
    TRANSMISSION_MODEL,
    TRANSMISSION_FLAT,
    CLIENT_MESSAGES,
    CLIENT_MESSAGES_ECDH,
    ADDITIVE_MODEL,
    FASTEST_GROUP,
    FASTEST_GROUP_CATEGORY2,
    FASTEST_GROUP_CATEGORY3,
    ECC_BEATS_RSA,
    RSA_CLIENT_REASONABLE,
    LEVI_SAVAS_CLIENT,
    RECORD_THROUGHPUT_AVERAGED,
    SIGNTEXT_INCREASE,
];

/// Text as the comparison sees it: hyphenation across line breaks joined, typographic
/// quotes and dashes made plain, every run of whitespace one space.
pub fn normalise(text: &str) -> String {
    let plain: String = dehyphenate(&text.replace("\r\n", "\n"))
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201F}' | '\u{2033}' => '"',
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
            '\u{00A0}' => ' ',
            c => c,
        })
        .collect();
    plain.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A word broken across lines (`pro-\ncessing`) joined again; a hyphen before a capital
/// (`Pollaczek-\nKhinchin`) is kept, as it belongs to the words.
fn dehyphenate(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("-\n") {
        let after = rest[i + 2..].trim_start_matches([' ', '\t']);
        out.push_str(&rest[..i]);
        if after.starts_with(|c: char| c.is_lowercase()) {
            rest = after;
        } else {
            out.push('-');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn seed(study: Study) -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/seeds")
            .join(study.seed_file());
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        normalise(&text)
    }

    #[test]
    fn every_passage_occurs_in_its_study() {
        for study in Study::ALL {
            let text = seed(study);
            for p in ALL.iter().filter(|p| p.study == study) {
                assert!(
                    text.contains(&normalise(p.quote)),
                    "{} {}: not in {}: {:?}",
                    study.citation(),
                    p.place,
                    study.seed_file(),
                    p.quote
                );
            }
        }
    }

    #[test]
    fn a_misquotation_is_caught() {
        let text = seed(Study::LeviSavas2003);
        assert!(!text.contains(&normalise("ECC performs better than RSA in WTLS.")));
        assert!(text.contains(&normalise("ECC is better than RSA\n in WTLS.")));
    }

    #[test]
    fn normalising_joins_hyphenated_lines_and_plain_punctuation() {
        assert_eq!(
            normalise("Pollaczek-\nKhinchin \u{201C}x\u{201D}\u{2013}y  pro-\n cessing"),
            "Pollaczek-Khinchin \"x\"-y processing"
        );
    }
}
