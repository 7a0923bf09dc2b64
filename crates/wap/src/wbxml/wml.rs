//! WML 1.x: its WBXML token tables (WML 1.1 §14.3, with the 1.2/1.3 additions; the
//! same numbers are in Kannel's `gw/wml_definitions.h` and Wireshark's
//! `packet-wbxml.c`), the compiler from WML text to WMLC and the decompiler back.
//!
//! Text is normalised the way WML compilers of the time did it: runs of XML white space
//! collapse to one space and white-space-only text between elements is dropped. A
//! variable reference (`$(name)`, `$name`, `$(name:escape)`, ...) becomes an EXT_I token;
//! `$$` is a literal dollar.

use std::fmt::Write as _;

use quick_xml::events::Event;
use quick_xml::Reader;

use super::{push_piece, Document, Element, Escaping, Node, Piece, Vocabulary};
use crate::codec::DecodeError;

/// WBXML public identifiers of the WML versions (OMNA's registry).
pub const PUBLIC_ID_WML_1_0: u32 = 0x02;
pub const PUBLIC_ID_WML_1_1: u32 = 0x04;
pub const PUBLIC_ID_WML_1_2: u32 = 0x09;
pub const PUBLIC_ID_WML_1_3: u32 = 0x0A;

/// WBXML 1.1, what WAP 1.1 handsets decode (and Kannel's default).
const WBXML_VERSION: u8 = 0x01;
const UTF_8: u32 = 106;

const TAGS: &[(u8, &str)] = &[
    (0x1C, "a"),
    (0x1D, "td"),
    (0x1E, "tr"),
    (0x1F, "table"),
    (0x20, "p"),
    (0x21, "postfield"),
    (0x22, "anchor"),
    (0x23, "access"),
    (0x24, "b"),
    (0x25, "big"),
    (0x26, "br"),
    (0x27, "card"),
    (0x28, "do"),
    (0x29, "em"),
    (0x2A, "fieldset"),
    (0x2B, "go"),
    (0x2C, "head"),
    (0x2D, "i"),
    (0x2E, "img"),
    (0x2F, "input"),
    (0x30, "meta"),
    (0x31, "noop"),
    (0x32, "prev"),
    (0x33, "onevent"),
    (0x34, "optgroup"),
    (0x35, "option"),
    (0x36, "refresh"),
    (0x37, "select"),
    (0x38, "small"),
    (0x39, "strong"),
    (0x3B, "template"),
    (0x3C, "timer"),
    (0x3D, "u"),
    (0x3E, "setvar"),
    (0x3F, "wml"),
];

const ATTRIBUTE_STARTS: &[(u8, &str, &str)] = &[
    (0x05, "accept-charset", ""),
    (0x06, "align", "bottom"),
    (0x07, "align", "center"),
    (0x08, "align", "left"),
    (0x09, "align", "middle"),
    (0x0A, "align", "right"),
    (0x0B, "align", "top"),
    (0x0C, "alt", ""),
    (0x0D, "content", ""),
    (0x0F, "domain", ""),
    (0x10, "emptyok", "false"),
    (0x11, "emptyok", "true"),
    (0x12, "format", ""),
    (0x13, "height", ""),
    (0x14, "hspace", ""),
    (0x15, "ivalue", ""),
    (0x16, "iname", ""),
    (0x18, "label", ""),
    (0x19, "localsrc", ""),
    (0x1A, "maxlength", ""),
    (0x1B, "method", "get"),
    (0x1C, "method", "post"),
    (0x1D, "mode", "nowrap"),
    (0x1E, "mode", "wrap"),
    (0x1F, "multiple", "false"),
    (0x20, "multiple", "true"),
    (0x21, "name", ""),
    (0x22, "newcontext", "false"),
    (0x23, "newcontext", "true"),
    (0x24, "onpick", ""),
    (0x25, "onenterbackward", ""),
    (0x26, "onenterforward", ""),
    (0x27, "ontimer", ""),
    (0x28, "optional", "false"),
    (0x29, "optional", "true"),
    (0x2A, "path", ""),
    (0x2E, "scheme", ""),
    (0x2F, "sendreferer", "false"),
    (0x30, "sendreferer", "true"),
    (0x31, "size", ""),
    (0x32, "src", ""),
    (0x33, "ordered", "true"),
    (0x34, "ordered", "false"),
    (0x35, "tabindex", ""),
    (0x36, "title", ""),
    (0x37, "type", ""),
    (0x38, "type", "accept"),
    (0x39, "type", "delete"),
    (0x3A, "type", "help"),
    (0x3B, "type", "password"),
    (0x3C, "type", "onpick"),
    (0x3D, "type", "onenterbackward"),
    (0x3E, "type", "onenterforward"),
    (0x3F, "type", "ontimer"),
    (0x45, "type", "options"),
    (0x46, "type", "prev"),
    (0x47, "type", "reset"),
    (0x48, "type", "text"),
    (0x49, "type", "vnd."),
    (0x4A, "href", ""),
    (0x4B, "href", "http://"),
    (0x4C, "href", "https://"),
    (0x4D, "value", ""),
    (0x4E, "vspace", ""),
    (0x4F, "width", ""),
    (0x50, "xml:lang", ""),
    (0x52, "align", ""),
    (0x53, "columns", ""),
    (0x54, "class", ""),
    (0x55, "id", ""),
    (0x56, "forua", "false"),
    (0x57, "forua", "true"),
    (0x58, "src", "http://"),
    (0x59, "src", "https://"),
    (0x5A, "http-equiv", ""),
    (0x5B, "http-equiv", "Content-Type"),
    (0x5C, "content", "application/vnd.wap.wmlc;charset="),
    (0x5D, "http-equiv", "Expires"),
    (0x5E, "accesskey", ""),
    (0x5F, "enctype", ""),
    (0x60, "enctype", "application/x-www-form-urlencoded"),
    (0x61, "enctype", "multipart/form-data"),
    (0x62, "xml:space", "preserve"),
    (0x63, "xml:space", "default"),
    (0x64, "cache-control", "no-cache"),
];

const ATTRIBUTE_VALUES: &[(u8, &str)] = &[
    (0x85, ".com/"),
    (0x86, ".edu/"),
    (0x87, ".net/"),
    (0x88, ".org/"),
    (0x89, "accept"),
    (0x8A, "bottom"),
    (0x8B, "clear"),
    (0x8C, "delete"),
    (0x8D, "help"),
    (0x8E, "http://"),
    (0x8F, "http://www."),
    (0x90, "https://"),
    (0x91, "https://www."),
    (0x93, "middle"),
    (0x94, "nowrap"),
    (0x95, "onpick"),
    (0x96, "onenterbackward"),
    (0x97, "onenterforward"),
    (0x98, "ontimer"),
    (0x99, "options"),
    (0x9A, "password"),
    (0x9B, "reset"),
    (0x9D, "text"),
    (0x9E, "top"),
    (0x9F, "unknown"),
    (0xA0, "wrap"),
    (0xA1, "www."),
];

/// The WML 1.x code page 0.
pub const VOCABULARY: Vocabulary = Vocabulary {
    tags: TAGS,
    attribute_starts: ATTRIBUTE_STARTS,
    attribute_values: ATTRIBUTE_VALUES,
};

/// Why WML text could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// The XML parser's complaint, with the byte position it stopped at.
    #[error("WML is not well-formed XML at byte {position}: {reason}")]
    Xml { position: u64, reason: String },
    /// An entity WML does not define.
    #[error("unknown entity &{0};")]
    UnknownEntity(String),
    #[error("WML has no root element")]
    NoRoot,
    #[error("WML nests deeper than {0} elements")]
    TooDeep(usize),
}

/// Deepest element nesting the compiler accepts.
const MAX_DEPTH: usize = 64;

/// The public identifier a DOCTYPE names (WML 1.1 when none is given).
fn public_id_of(doctype: &str) -> u32 {
    [
        ("WML 1.0", PUBLIC_ID_WML_1_0),
        ("WML 1.2", PUBLIC_ID_WML_1_2),
        ("WML 1.3", PUBLIC_ID_WML_1_3),
    ]
    .iter()
    .find(|(v, _)| doctype.contains(v))
    .map_or(PUBLIC_ID_WML_1_1, |(_, id)| *id)
}

/// Parses WML text into the document tree (normalised as the module describes).
pub fn parse(wml: &str) -> Result<Document, CompileError> {
    let mut reader = Reader::from_str(wml);
    let xml_error = |reader: &Reader<&[u8]>, e: &dyn std::fmt::Display| CompileError::Xml {
        position: reader.buffer_position(),
        reason: e.to_string(),
    };
    let mut public_id = PUBLIC_ID_WML_1_1;
    let mut stack: Vec<Element> = Vec::new();
    let mut text = String::new();
    let mut root = None;
    loop {
        let event = reader.read_event().map_err(|e| xml_error(&reader, &e))?;
        match event {
            Event::Text(t) => text.push_str(&t.decode().map_err(|e| xml_error(&reader, &e))?),
            Event::CData(t) => text.push_str(&t.decode().map_err(|e| xml_error(&reader, &e))?),
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref().map_err(|e| xml_error(&reader, &e))? {
                    Some(c) => c.to_string(),
                    None => {
                        let name = r.decode().map_err(|e| xml_error(&reader, &e))?;
                        entity(&name)
                            .ok_or_else(|| CompileError::UnknownEntity(name.to_string()))?
                            .to_string()
                    }
                };
                text.push_str(&resolved);
            }
            Event::DocType(d) => public_id = public_id_of(&String::from_utf8_lossy(&d)),
            Event::Start(ref s) | Event::Empty(ref s) => {
                flush_text(&mut text, &mut stack);
                if stack.len() >= MAX_DEPTH {
                    return Err(CompileError::TooDeep(MAX_DEPTH));
                }
                let mut element = Element {
                    name: String::from_utf8_lossy(s.name().as_ref()).into_owned(),
                    attributes: Vec::new(),
                    children: Vec::new(),
                };
                for a in s.attributes() {
                    let a = a.map_err(|e| xml_error(&reader, &e))?;
                    let value = a
                        .unescape_value_with(|name| {
                            entity(name)
                                .or_else(|| quick_xml::escape::resolve_predefined_entity(name))
                        })
                        .map_err(|e| xml_error(&reader, &e))?;
                    let name = String::from_utf8_lossy(a.key.as_ref()).into_owned();
                    element.attributes.push((name, pieces_of(&value)));
                }
                stack.push(element);
                if matches!(event, Event::Empty(_)) {
                    close(&mut stack, &mut root);
                }
            }
            Event::End(_) => {
                flush_text(&mut text, &mut stack);
                close(&mut stack, &mut root);
            }
            Event::Eof => break,
            // Declarations, comments and processing instructions carry no content.
            _ => {}
        }
    }
    Ok(Document {
        version: WBXML_VERSION,
        public_id,
        charset: UTF_8,
        root: root.ok_or(CompileError::NoRoot)?,
    })
}

/// The entities a WML DTD defines beyond XML's five (WML 1.1 §10.2).
fn entity(name: &str) -> Option<&'static str> {
    match name {
        "nbsp" => Some("\u{a0}"),
        "shy" => Some("\u{ad}"),
        _ => quick_xml::escape::resolve_predefined_entity(name),
    }
}

fn close(stack: &mut Vec<Element>, root: &mut Option<Element>) {
    if let Some(done) = stack.pop() {
        match stack.last_mut() {
            Some(parent) => parent.children.push(Node::Element(done)),
            None => *root = Some(done),
        }
    }
}

/// Ends a run of character data: white space collapsed, dropped when only white space.
fn flush_text(text: &mut String, stack: &mut [Element]) {
    let collapsed = collapse_space(text);
    text.clear();
    if collapsed.trim_matches(' ').is_empty() {
        return;
    }
    if let Some(parent) = stack.last_mut() {
        parent.children.push(Node::Text(pieces_of(&collapsed)));
    }
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn collapse_space(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_space = false;
    for c in text.chars() {
        if is_xml_space(c) {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

/// Splits WML character data into text and variable references.
pub fn pieces_of(text: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        push_piece(&mut pieces, Piece::Text(rest[..at].to_string()));
        let after = &rest[at + 1..];
        let (piece, used) = variable(after);
        push_piece(&mut pieces, piece);
        rest = &after[used..];
    }
    push_piece(&mut pieces, Piece::Text(rest.to_string()));
    pieces
}

/// The reference after a `$`, and how many bytes of `after` it used. A `$` that starts
/// no reference stays a literal dollar.
fn variable(after: &str) -> (Piece, usize) {
    let literal = (Piece::Text("$".into()), 0);
    if after.starts_with('$') {
        return (Piece::Text("$".into()), 1);
    }
    let is_name = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if let Some(inner) = after.strip_prefix('(') {
        let Some(close) = inner.find(')') else {
            return literal;
        };
        let (name, conversion) = match inner[..close].split_once(':') {
            Some((n, c)) => (n, Some(c)),
            None => (&inner[..close], None),
        };
        let escaping = match conversion {
            None | Some("n" | "noesc") => Escaping::None,
            Some("e" | "escape") => Escaping::Escape,
            Some("u" | "unesc") => Escaping::Unescape,
            Some(_) => return literal,
        };
        if !is_name(name) {
            return literal;
        }
        let piece = Piece::Variable {
            name: name.to_string(),
            escaping,
        };
        return (piece, close + 2);
    }
    let len = after
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_alphanumeric() || *c == '_') || (*i == 0 && c.is_ascii_digit()))
        .map_or(after.len(), |(i, _)| i);
    if len == 0 {
        return literal;
    }
    let piece = Piece::Variable {
        name: after[..len].to_string(),
        escaping: Escaping::None,
    };
    (piece, len)
}

/// Compiles WML text to WMLC.
pub fn compile(wml: &str) -> Result<Vec<u8>, CompileError> {
    Ok(super::encode(&parse(wml)?, &VOCABULARY))
}

/// Decodes WMLC into the document tree.
pub fn decode(wmlc: &[u8]) -> Result<Document, DecodeError> {
    super::decode(wmlc, &VOCABULARY)
}

/// Decompiles WMLC to WML text.
pub fn decompile(wmlc: &[u8]) -> Result<String, DecodeError> {
    Ok(print(&decode(wmlc)?))
}

/// Prints a document as WML text, with the DOCTYPE of its public identifier.
pub fn print(doc: &Document) -> String {
    let version = match doc.public_id {
        PUBLIC_ID_WML_1_0 => "1.0",
        PUBLIC_ID_WML_1_2 => "1.2",
        PUBLIC_ID_WML_1_3 => "1.3",
        _ => "1.1",
    };
    let mut out = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE wml PUBLIC \"-//WAPFORUM//DTD WML {version}//EN\" \
         \"http://www.wapforum.org/DTD/wml_{version}.xml\">\n"
    );
    print_element(&doc.root, 0, &mut out);
    out.push('\n');
    out
}

fn print_element(e: &Element, depth: usize, out: &mut String) {
    let _ = write!(out, "<{}", e.name);
    for (name, value) in &e.attributes {
        let _ = write!(out, " {name}=\"");
        print_pieces(value, true, out);
        out.push('"');
    }
    if e.children.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    // Mixed content is printed inline: added white space would change the text.
    let inline = e.children.iter().any(|c| matches!(c, Node::Text(_)));
    for child in &e.children {
        if !inline {
            out.push('\n');
            out.push_str(&"  ".repeat(depth + 1));
        }
        match child {
            Node::Element(c) => print_element(c, depth + 1, out),
            Node::Text(pieces) => print_pieces(pieces, false, out),
        }
    }
    if !inline {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    }
    let _ = write!(out, "</{}>", e.name);
}

fn print_pieces(pieces: &[Piece], in_attribute: bool, out: &mut String) {
    for piece in pieces {
        match piece {
            Piece::Text(t) => {
                for c in t.chars() {
                    match c {
                        '&' => out.push_str("&amp;"),
                        '<' => out.push_str("&lt;"),
                        '>' => out.push_str("&gt;"),
                        '"' if in_attribute => out.push_str("&quot;"),
                        '$' => out.push_str("$$"),
                        // Kept visible and safe from white-space collapsing.
                        '\u{a0}' => out.push_str("&nbsp;"),
                        '\t' | '\r' | '\n' => {
                            let _ = write!(out, "&#{};", c as u32);
                        }
                        c => out.push(c),
                    }
                }
            }
            Piece::Variable { name, escaping } => {
                let _ = match escaping {
                    Escaping::None => write!(out, "$({name})"),
                    Escaping::Escape => write!(out, "$({name}:escape)"),
                    Escaping::Unescape => write!(out, "$({name}:unesc)"),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests;
