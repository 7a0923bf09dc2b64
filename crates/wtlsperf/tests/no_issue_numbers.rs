//! The repository's text refers to code, documents and sections, never to the numbers
//! of a tracker a reader of the repository cannot follow: no file under `docs/` or
//! `crates/` and not `README.md` may cite one (an upstream project's report is cited as
//! `owner/repo#N`, which a reader can follow).

use std::path::{Path, PathBuf};

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every text file under `dir`, build output skipped.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && !name.to_string_lossy().starts_with('.') {
                text_files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

/// The tracker citations in one line: the word "issue" or "issues" (any case) followed
/// by a number (after a space, `#` or `-`), or opening a parenthesis.
fn citations(line: &str) -> Vec<String> {
    let lower = line.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let word = "issue";
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find(word).map(|i| i + from) {
        from = at + word.len();
        if at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
            continue;
        }
        let mut end = at + word.len();
        if bytes.get(end) == Some(&b's') {
            end += 1;
        }
        let rest = &lower[end..];
        // "(issue" as a citation, not a call such as `issue(...)` after a `(`.
        let parenthesised = at > 0
            && bytes[at - 1] == b'('
            && matches!(rest.bytes().next(), None | Some(b' ' | b')' | b',' | b';'));
        let followed_by_letter = rest.bytes().next().is_some_and(|b| b.is_ascii_alphabetic());
        if followed_by_letter {
            continue;
        }
        let numbered = rest
            .trim_start_matches([' ', '#', '-'])
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit());
        if numbered || parenthesised {
            let stop = (end + 12).min(line.len());
            found.push(line.get(at..stop).unwrap_or(&line[at..]).to_string());
        }
    }
    found
}

#[test]
fn the_checker_finds_tracker_citations_and_nothing_else() {
    // Built at run time so that this file does not cite anything itself.
    let (n, w, cap) = (13, "iss".to_string() + "ue", "Iss".to_string() + "ue");
    for cited in [
        format!("the rule of {w} {n}"),
        format!("({cap} {n}, point 5)"),
        format!("{w}s {n}-17"),
        format!("an {w}-{n} profile"),
        format!("{w} #{n}"),
        format!("({w})"),
        format!("see ({w}"),
    ] {
        assert_eq!(citations(&cited).len(), 1, "{cited}");
    }
    for clean in [
        "the CA issues them",
        "issuer = subject",
        "re-issue the certificate",
        "issued one",
        "ca.issue(subject, &key)",
        "upstream report openwsn-berkeley/lakers#93",
        "Issues a leaf certificate",
        "Some(issue(\"client\"))",
    ] {
        assert!(citations(clean).is_empty(), "{clean}");
    }
}

#[test]
fn no_tracker_numbers_in_docs_crates_or_readme() {
    let root = repository_root();
    let mut files = vec![root.join("README.md")];
    text_files(&root.join("docs"), &mut files);
    text_files(&root.join("crates"), &mut files);
    assert!(
        files.len() > 50,
        "found only {} files under {}",
        files.len(),
        root.display()
    );
    let mut offending = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue; // binary data
        };
        for (n, line) in text.lines().enumerate() {
            for c in citations(line) {
                let shown = file.strip_prefix(&root).unwrap_or(&file).display();
                offending.push(format!("{shown}:{}: {c}", n + 1));
            }
        }
    }
    assert!(
        offending.is_empty(),
        "name the code, document or section instead of a tracker number:\n{}",
        offending.join("\n")
    );
}
