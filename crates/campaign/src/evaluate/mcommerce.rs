//! Part 5b, the cost of WMLScript signText in an m-commerce payment (Herwono-Liebhardt
//! 2001, ICICS section 3.3): the phone signs the transaction text with ECDSA or RSA and
//! may append its certificate; the payment then carries the signature (and certificate)
//! over the slow bearer. Our increase = sign time on this machine + the extra bytes'
//! serialisation at 9600 bit/s; the published increases are beside it.

use wtls::codec::Codec;
use wtls::suite::Case;
use wtlsperf_models::reference;
use wtlsperf_models::transmission::serialisation_ms;
use wtlsperf_report::{Cell, Column, Provenance, Section, Table};

use super::context::{Ctx, Mode};
use super::passages;
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::signtext::median_sign_ms;

/// The bearer the payment crosses (GSM CSD, bit/s).
pub const BEARER_BPS: f64 = 9600.0;

/// A transaction text as a wallet would show it.
pub const TRANSACTION: &[u8] =
    b"Pay 49.90 EUR to Example Books Ltd, order 2001-0815, card ending 4711";

/// One signText variant.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SignRow {
    /// `ECDSA` or `RSA`.
    pub signature: String,
    /// Key (`160p`, `rsa1024`).
    pub key: String,
    /// Certificate appended to the signed string.
    pub with_certificate: bool,
    /// Median sign time here (ms).
    pub sign_ms: f64,
    /// Signature bytes.
    pub signature_bytes: usize,
    /// Certificate bytes (0 without).
    pub certificate_bytes: usize,
    /// Extra serialisation at 9600 bit/s (ms).
    pub transmission_ms: f64,
    /// sign + transmission (ms).
    pub increase_ms: f64,
    /// Herwono's published increase (ms).
    pub published_ms: Option<f64>,
}

/// All of part 5b.
#[derive(Debug, Clone)]
pub struct McommerceResults {
    /// Four rows: ECDSA/RSA x without/with certificate.
    pub rows: Vec<SignRow>,
}

/// Signature increase from signing time and extra bytes (ms).
pub fn increase_ms(sign_ms: f64, signature_bytes: usize, certificate_bytes: usize) -> (f64, f64) {
    let t = serialisation_ms((signature_bytes + certificate_bytes) as f64, BEARER_BPS);
    (t, sign_ms + t)
}

/// Part 5b.
pub fn run(ctx: &Ctx, store: &PkiStore) -> anyhow::Result<McommerceResults> {
    ctx.step("m-commerce: signText with ECDSA and RSA");
    let reps = match ctx.mode {
        Mode::Smoke => 3,
        Mode::Quick => 21,
        Mode::Full => 101,
    };
    let published = reference::herwono_signtext()?;
    let digest: [u8; 20] = openssl::sha::sha1(TRANSACTION);
    let mut rows = Vec::new();
    for (signature, case) in [("ECDSA", "160p/160p"), ("RSA", "rsa1024/rsa1024")] {
        let case = Case::parse(case)?;
        if !case.is_available() {
            continue;
        }
        let creds = store.case(&case)?;
        let (sign_ms, sig) = median_sign_ms(&creds.client_key, &digest, reps)?;
        let cert_bytes = creds.client_cert.to_bytes().len();
        for with_cert in [false, true] {
            let cb = if with_cert { cert_bytes } else { 0 };
            let (tx, inc) = increase_ms(sign_ms, sig.len(), cb);
            rows.push(SignRow {
                signature: signature.to_owned(),
                key: case.leaf.short().to_owned(),
                with_certificate: with_cert,
                sign_ms,
                signature_bytes: sig.len(),
                certificate_bytes: cb,
                transmission_ms: tx,
                increase_ms: inc,
                published_ms: published
                    .iter()
                    .find(|p| {
                        p.signature == signature
                            && (p.certificate_in_signed_string == "yes") == with_cert
                    })
                    .map(|p| p.transaction_duration_increase_s * 1000.0),
            });
        }
    }
    Ok(McommerceResults { rows })
}

impl McommerceResults {
    /// The report section of part 5b.
    pub fn section(&self, ctx: &Ctx) -> Section {
        let m = ctx.measured();
        let mut t = Table::new("mcommerce_signtext", "signText: transaction duration increase")
            .caption(format!(
                "Herwono-Liebhardt measured the increases on their WAP simulation platform (a SUN Enterprise server, one dedicated 400 MHz processor, Crypto++ 4.1; ICICS section 3), not on a phone, and state neither the bearer of the transaction nor the signing keys' sizes: the keys here are the 160-bit ECC and 1024-bit RSA keys of their handshake measurements (ICICS section 3.2), our choice. {} (\"{}\"). Here the signature is cheap and the extra bytes on a 9600 bit/s link dominate.",
                passages::SIGNTEXT_INCREASE.place,
                passages::SIGNTEXT_INCREASE.quote
            ))
            .column(Column::label("signature"))
            .column(Column::label("key"))
            .column(Column::label("certificate appended"))
            .column(Column::new("sign", Some("ms"), m.clone()))
            .column(Column::new("extra bytes", Some("B"), m))
            .column(Column::new("transmission", Some("ms"), Provenance::modelled("Eq. 3.83, 8L/R", "9600 bit/s")))
            .column(Column::new("increase ours", Some("ms"), Provenance::derived("sign + transmission")))
            .column(Column::new("increase published", Some("ms"), Provenance::published("Herwono-Liebhardt 2001, ICICS section 3.3")));
        for r in &self.rows {
            t = t.row(vec![
                Cell::text(&r.signature),
                Cell::text(&r.key),
                Cell::text(if r.with_certificate { "yes" } else { "no" }),
                Cell::num(r.sign_ms, 3),
                Cell::num((r.signature_bytes + r.certificate_bytes) as f64, 0),
                Cell::num(r.transmission_ms, 1),
                Cell::num(r.increase_ms, 1),
                Cell::opt(r.published_ms, 0),
            ]);
        }
        Section::new("mcommerce", "m-commerce: the cost of signText (Herwono-Liebhardt 2001)")
            .intro("The wallet signs the transaction text with the client key of the case (WTLS certificate format).")
            .table(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increase_adds_sign_time_and_serialisation() {
        // 128 + 0 bytes at 9600 bit/s = 106.67 ms.
        let (t, inc) = increase_ms(2.0, 128, 0);
        assert!((t - 128.0 * 8.0 / 9.6).abs() < 1e-9);
        assert!((inc - t - 2.0).abs() < 1e-12);
        let (t2, _) = increase_ms(0.0, 128, 500);
        assert!(t2 > t);
    }
}
