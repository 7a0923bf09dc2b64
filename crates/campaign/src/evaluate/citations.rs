//! The thesis' figure and table numbers the report cites, checked against the thesis'
//! own list.
//!
//! `data/reference/bayoglu2004_list_of_figures_and_tables.csv` is the "LIST OF FIGURES"
//! and "LIST OF TABLES" of Bayoglu 2004 (`data/seeds/bayoglu2004_wtls_handshake_thesis.txt`),
//! one row an item, its title and page as listed; `body_title` gives the item's subject
//! as the thesis' own text states it where the list disagrees (Figure 4.12 is introduced
//! as "the server authenticated RSA key exchange suites", Table 4.10 as "server
//! processing time percentages"). A test checks the file against the seed.
//!
//! [`check`] reads every "Figure N.M" / "Table N.M" of a title the report prints and
//! compares the title's subject (side, authentication, key exchange family, category,
//! group, bearers, topic, part) with the cited item's: every dimension the cited item's
//! title names must be named, the same, by the citing title, and the two must share a
//! topic (processing, queue, transmission, overall). So a citation changed to a
//! wrong number fails (`tests`), and the report's citing titles are built by functions
//! the test calls for every subject.

/// A handshake mode as the citing titles name it, in words the subject check reads.
pub(crate) fn mode_words(auth: wtlsperf_models::Authentication) -> &'static str {
    match auth {
        wtlsperf_models::Authentication::Mutual => "mutual",
        wtlsperf_models::Authentication::ServerAuth => "server-authenticated",
    }
}

/// One item of the thesis' lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThesisItem {
    /// `Figure 4.12`, `Table 4.1`.
    pub item: String,
    /// As the list prints it.
    pub title: String,
    pub page: u32,
    /// The subject as the thesis' text states it, where the list's title disagrees.
    pub body_title: Option<String>,
}

impl ThesisItem {
    /// The title the subject is read from: the text's where the list errs.
    pub fn subject_title(&self) -> &str {
        self.body_title.as_deref().unwrap_or(&self.title)
    }
}

const LIST: &str =
    include_str!("../../../../data/reference/bayoglu2004_list_of_figures_and_tables.csv");

/// The thesis' list of figures and tables.
pub fn thesis_list() -> Vec<ThesisItem> {
    let mut reader = csv::Reader::from_reader(LIST.as_bytes());
    reader
        .records()
        .filter_map(Result::ok)
        .map(|r| ThesisItem {
            item: r[0].to_owned(),
            title: r[1].to_owned(),
            page: r[2].parse().unwrap_or(0),
            body_title: (!r[3].is_empty()).then(|| r[3].to_owned()),
        })
        .collect()
}

/// The items a text cites: `Figure 4.12`, `Tables 4.1/4.2` (both), `Figures 4.39-4.43`
/// (the two ends, marked as a range: `true`).
pub fn cited(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let words: Vec<&str> = text.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let kind = match w.trim_start_matches('(') {
            "Figure" | "Figures" | "Fig." => "Figure",
            "Table" | "Tables" => "Table",
            _ => continue,
        };
        let Some(next) = words.get(i + 1) else {
            continue;
        };
        let range = next.contains('-');
        for number in next.split(['/', '-', ',']) {
            let number: String = number
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            if number.contains('.') && number.split('.').all(|p| !p.is_empty()) {
                out.push((format!("{kind} {number}"), range));
            }
        }
    }
    out
}

/// What a title is about, as far as the thesis' titles distinguish their items.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Subject {
    side: Option<&'static str>,
    auth: Option<&'static str>,
    family: Option<&'static str>,
    /// What is plotted or tabled: processing shares (percentages), processing times,
    /// handshake times or queue delays.
    measure: Option<&'static str>,
    category: Option<char>,
    group: Option<char>,
    part: Option<char>,
    bearers: Vec<&'static str>,
    topics: Vec<&'static str>,
}

/// The digit after `word` (and spaces), e.g. `category 3`.
fn number_after(text: &str, word: &str) -> Option<char> {
    let at = text.find(word)? + word.len();
    text[at..]
        .trim_start()
        .chars()
        .next()
        .filter(char::is_ascii_digit)
}

impl Subject {
    fn of(title: &str) -> Subject {
        let t = title
            .to_lowercase()
            .replace(['#', '-', '_', '(', ')', ','], " ")
            .replace("serverauth", "server authenticated");
        let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
        let has = |w: &str| t.contains(w);
        let mut bearers = Vec::new();
        for b in ["gsm csd", "gprs"] {
            if has(b) {
                bearers.push(b);
            }
        }
        let mut topics = Vec::new();
        for (topic, words) in [
            ("processing", &["processing"][..]),
            ("queue", &["queue"][..]),
            (
                "transmission",
                &[
                    "transmission",
                    "traversal",
                    "data sizes",
                    "data rates",
                    "bytes",
                    "rtt",
                ][..],
            ),
        ] {
            if words.iter().any(|w| has(w)) {
                topics.push(topic);
            }
        }
        if has("overall") && !has("processing") {
            topics.push("overall");
        }
        Subject {
            side: if has("client processing") {
                Some("client")
            } else if has("server processing") {
                Some("server")
            } else {
                None
            },
            auth: if has("mutual") {
                Some("mutual")
            } else if has("server auth") {
                Some("server authenticated")
            } else {
                None
            },
            family: if has("ecdh") {
                Some("ECDH")
            } else if has("rsa") {
                Some("RSA")
            } else {
                None
            },
            measure: if has("percentages") || has("shares") {
                Some("shares")
            } else if has("processing time") {
                Some("processing times")
            } else if has("handshake time") {
                Some("handshake times")
            } else if has("queue delay") {
                Some("queue delays")
            } else {
                None
            },
            category: number_after(&t, "category"),
            group: number_after(&t, "group"),
            part: number_after(&t, "delays")
                .or(number_after(&t, "delay"))
                .or(number_after(&t, "level")),
            bearers,
            topics,
        }
    }

    /// The dimensions `cited` names that `self` (the citing title) does not name the
    /// same way.
    fn disagreements(&self, cited: &Subject) -> Vec<String> {
        let mut out = Vec::new();
        let mut one = |what: &str, citing: Option<String>, cited: Option<String>| {
            if cited.is_some() && citing != cited {
                out.push(format!(
                    "{what}: the cited item's is {cited:?}, the citing title's {citing:?}"
                ));
            }
        };
        let s = |v: Option<&'static str>| v.map(str::to_owned);
        let c = |v: Option<char>| v.map(String::from);
        one("side", s(self.side), s(cited.side));
        one("authentication", s(self.auth), s(cited.auth));
        one("key exchange", s(self.family), s(cited.family));
        one("quantity", s(self.measure), s(cited.measure));
        one("category", c(self.category), c(cited.category));
        one("group", c(self.group), c(cited.group));
        one("part", c(self.part), c(cited.part));
        if !cited.bearers.is_empty() && self.bearers != cited.bearers {
            out.push(format!(
                "bearers: the cited item's are {:?}, the citing title's {:?}",
                cited.bearers, self.bearers
            ));
        }
        for topic in &cited.topics {
            if !self.topics.contains(topic) {
                out.push(format!(
                    "topic: the cited item is about {topic}, the citing title is not"
                ));
            }
        }
        if !self.topics.is_empty() && !self.topics.iter().any(|t| cited.topics.contains(t)) {
            out.push(format!(
                "topic: the citing title is about {:?}, the cited item about none of it",
                self.topics
            ));
        }
        out
    }
}

/// Checks every thesis item `title` cites: it exists in the thesis' list, and (unless
/// it ends a range such as "Figures 4.39-4.43") its subject agrees with the title's. The
/// error names each disagreement.
pub fn check(title: &str) -> Result<(), String> {
    let list = thesis_list();
    let mut problems = Vec::new();
    for (item, range) in cited(title) {
        match list.iter().find(|i| i.item == item) {
            None => problems.push(format!("{item} is not in the thesis' lists")),
            Some(found) if !range => {
                for d in Subject::of(title).disagreements(&Subject::of(found.subject_title())) {
                    problems.push(format!("{item} (\"{}\"): {d}", found.subject_title()));
                }
            }
            Some(_) => {}
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{title:?} cites wrongly: {}", problems.join("; ")))
    }
}

#[cfg(test)]
mod tests;
