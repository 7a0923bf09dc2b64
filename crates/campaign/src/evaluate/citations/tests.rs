use super::*;
use crate::evaluate::{overall, processing, queue};
use wtlsperf_models::reference::PercentTable;
use wtlsperf_models::{Authentication, Side};

const SEED: &str = include_str!("../../../../../data/seeds/bayoglu2004_wtls_handshake_thesis.txt");

/// Every citing title the report prints for the thesis' numbered figures and tables.
fn citing_titles() -> Vec<String> {
    let mut out = Vec::new();
    for category in 1..=3 {
        for side in [Side::Client, Side::Server] {
            out.push(processing::report::category_figure_title(category, side));
        }
    }
    for (auth, label) in [
        (Authentication::Mutual, "Table 4.1"),
        (Authentication::ServerAuth, "Table 4.2"),
    ] {
        out.push(processing::report::processing_table_title(auth, label));
    }
    for table in PercentTable::ALL {
        out.push(processing::report::percent_table_title(table));
        out.push(processing::report::percent_figure_title(table));
    }
    for group in 1..=4 {
        for auth in Authentication::ALL {
            out.push(queue::report::published_figure_title(group, auth));
        }
    }
    for auth in Authentication::ALL {
        out.push(overall::overall_figure_title(auth));
    }
    for figure in [44, 45, 46] {
        out.push(overall::queued_figure_title(figure));
    }
    out
}

#[test]
fn the_data_file_is_the_thesis_list() {
    let list = thesis_list();
    let figures = list.iter().filter(|i| i.item.starts_with("Figure")).count();
    let tables = list.len() - figures;
    // Figures 1.1, 2.1-2.11, 3.1-3.4, 4.1-4.46; Tables 2.1-2.2, 3.1-3.19, 4.1-4.15.
    assert_eq!((figures, tables), (62, 36));
    let lists =
        &SEED[SEED.find("## LIST OF FIGURES").unwrap()..SEED.find("## LIST OF SYMBOLS").unwrap()];
    let squash = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let lists = squash(lists);
    for item in &list {
        let line = format!("{} {}", item.item, item.title);
        assert!(lists.contains(&line), "{line:?} is not in the seed's lists");
        let with_page = lists[lists.find(&line).unwrap() + line.len()..]
            .trim_start_matches([' ', '.'])
            .starts_with(&item.page.to_string());
        assert!(with_page, "{}: page {}", item.item, item.page);
    }
    // Where the list's title and the thesis' text disagree, the text's subject is kept,
    // and the text says so in these words.
    let text = squash(SEED);
    for (item, sentence) in [
        ("Figure 4.12", "the most significant handshake operations for the server authenticated RSA key exchange suites are given in Figure 4.12"),
        ("Table 4.10", "Server processing time percentages of individual handshake messages for server authenticated WTLS handshake using RSA key exchange suites are given in Table 4.10"),
    ] {
        assert!(text.contains(sentence), "{sentence}");
        let found = list.iter().find(|i| i.item == item).unwrap();
        assert!(found.body_title.is_some(), "{item}");
    }
    assert_eq!(list.iter().filter(|i| i.body_title.is_some()).count(), 2);
}

#[test]
fn every_citing_title_cites_an_item_about_its_own_subject() {
    for title in citing_titles() {
        assert!(!cited(&title).is_empty(), "{title} cites nothing");
        check(&title).unwrap();
    }
}

/// Each cited number changed to any other of its kind in chapter 4 fails the check, so
/// a wrong number cannot pass.
#[test]
fn a_citation_changed_to_a_wrong_number_fails() {
    let list = thesis_list();
    for title in citing_titles() {
        for (item, range) in cited(&title) {
            if range {
                continue;
            }
            let (kind, _) = item.split_once(' ').unwrap();
            for other in list
                .iter()
                .filter(|i| i.item.starts_with(&format!("{kind} 4.")) && i.item != item)
            {
                let number = other.item.split_once(' ').unwrap().1;
                let changed = title.replace(&item, &other.item).replace(
                    &format!("and Figure {}", item.split_once(' ').unwrap().1),
                    &format!("and Figure {number}"),
                );
                if changed == title {
                    continue;
                }
                assert!(check(&changed).is_err(), "{changed:?} passed (was {item})");
            }
        }
    }
}

#[test]
fn the_citations_found_wrong_fail() {
    for wrong in [
        "Shares of Server processing, ServerAuth EcdhEcdsa (mean over cases; as Table 4.9 / Figure 4.12)",
        "Shares of Server processing, ServerAuth Rsa (mean over cases; as Table 4.10 / Figure 4.12)",
        "Figure 4.42: overall handshake time over GSM CSD, Mutual",
        "Figure 4.47: a figure the thesis does not have",
    ] {
        assert!(check(wrong).is_err(), "{wrong}");
    }
    assert_eq!(
        cited("T_H per case and bearer (Figures 4.39-4.43); Tables 4.1/4.2"),
        vec![
            ("Figure 4.39".to_owned(), true),
            ("Figure 4.43".to_owned(), true),
            ("Table 4.1".to_owned(), false),
            ("Table 4.2".to_owned(), false),
        ]
    );
}

/// Every "Figure N.M" / "Table N.M" written out in the campaign's source (sources,
/// provenances, captions) is an item of the thesis' lists.
#[test]
fn every_number_the_source_cites_exists() {
    let list = thesis_list();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![root];
    let mut checked = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("citations/tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines().filter(|l| {
            l.contains("Bayoglu")
                || l.contains("thesis")
                || l.contains("Figure 4.")
                || l.contains("Table 4.")
        }) {
            for (item, _) in cited(line) {
                checked += 1;
                assert!(
                    list.iter().any(|i| i.item == item),
                    "{}: {item} is not in the thesis' lists: {line}",
                    path.display()
                );
            }
        }
    }
    assert!(checked > 20, "only {checked} citations found");
}
