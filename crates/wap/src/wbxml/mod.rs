//! WBXML (WAP-192): XML as tokens. An element's name is one octet from the document
//! type's tag table, with bit 0x40 set when content follows and 0x80 when attributes
//! follow; an attribute is a start token that stands for a name (and often the first part
//! of the value), followed by value tokens and inline strings; text is inline
//! (STR_I, NUL-terminated) or a reference into the string table (STR_T). WML's variables
//! travel as EXT_I_0/1/2 (escaped, unescaped, unchanged).
//!
//! No crate on crates.io implements WBXML or the WML token tables (searched for "wbxml"
//! and "wml"), so the token layer is written here; XML parsing is quick-xml's.
//!
//! [`Element`] is the tree both directions share: [`wml::compile`] parses WML text into
//! it and encodes it; [`wml::decompile`] decodes tokens into it and prints it.

pub mod wml;

use crate::codec::{put_len, Cursor, DecodeError};

/// Global tokens (WAP-192 §7.1), the same on every code page.
pub mod token {
    pub const SWITCH_PAGE: u8 = 0x00;
    pub const END: u8 = 0x01;
    pub const ENTITY: u8 = 0x02;
    pub const STR_I: u8 = 0x03;
    pub const LITERAL: u8 = 0x04;
    pub const EXT_I_0: u8 = 0x40;
    pub const EXT_I_1: u8 = 0x41;
    pub const EXT_I_2: u8 = 0x42;
    pub const PI: u8 = 0x43;
    pub const LITERAL_C: u8 = 0x44;
    pub const EXT_T_0: u8 = 0x80;
    pub const EXT_T_1: u8 = 0x81;
    pub const EXT_T_2: u8 = 0x82;
    pub const STR_T: u8 = 0x83;
    pub const LITERAL_A: u8 = 0x84;
    pub const EXT_0: u8 = 0xC0;
    pub const EXT_1: u8 = 0xC1;
    pub const EXT_2: u8 = 0xC2;
    pub const OPAQUE: u8 = 0xC3;
    pub const LITERAL_AC: u8 = 0xC4;
    /// Tag bit: the element has content (an END closes it).
    pub const HAS_CONTENT: u8 = 0x40;
    /// Tag bit: attributes follow (an END closes them).
    pub const HAS_ATTRIBUTES: u8 = 0x80;
}

/// Deepest nesting a decoder follows; deeper input is refused, not recursed into.
const MAX_DEPTH: usize = 64;
/// Most nodes one document may hold.
const MAX_NODES: usize = 100_000;

/// How a variable reference is converted when substituted (WML 1.1 §10.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escaping {
    /// `$(name:escape)`, token EXT_I_0.
    Escape,
    /// `$(name:unesc)`, token EXT_I_1.
    Unescape,
    /// `$(name)`, token EXT_I_2.
    None,
}

/// A run of character data: text or a variable reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Variable { name: String, escaping: Escaping },
}

/// A node of the document tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Element(Element),
    Text(Vec<Piece>),
}

/// An element with its attributes (values as pieces: they may hold variables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub attributes: Vec<(String, Vec<Piece>)>,
    pub children: Vec<Node>,
}

/// A document type's token tables (one code page: WML 1.x needs no other).
#[derive(Debug, Clone, Copy)]
pub struct Vocabulary {
    pub tags: &'static [(u8, &'static str)],
    /// Attribute start tokens: name, the value prefix the token implies (may be empty).
    pub attribute_starts: &'static [(u8, &'static str, &'static str)],
    /// Attribute value tokens (0x85 and up): strings that may occur inside a value.
    pub attribute_values: &'static [(u8, &'static str)],
}

/// A WBXML document: its header fields and the root element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// WBXML version: major - 1 in the high nibble, minor in the low (0x01 = 1.1).
    pub version: u8,
    /// The document type's public identifier (WML 1.1 is 0x04).
    pub public_id: u32,
    /// IANA MIBenum of the strings (106 = UTF-8).
    pub charset: u32,
    pub root: Element,
}

/// Encodes `doc` with `vocabulary`; names the vocabulary lacks go to the string table.
pub fn encode(doc: &Document, vocabulary: &Vocabulary) -> Vec<u8> {
    let mut strings = StringTable::default();
    let mut body = Vec::new();
    encode_element(&doc.root, vocabulary, &mut strings, &mut body);
    let mut out = vec![doc.version];
    put_len(&mut out, doc.public_id as usize);
    put_len(&mut out, doc.charset as usize);
    put_len(&mut out, strings.bytes.len());
    out.extend_from_slice(&strings.bytes);
    out.extend(body);
    out
}

#[derive(Default)]
struct StringTable {
    bytes: Vec<u8>,
}

impl StringTable {
    /// The offset of `s` (added once).
    fn offset(&mut self, s: &str) -> usize {
        let mut at = 0;
        while at < self.bytes.len() {
            let end = self.bytes[at..]
                .iter()
                .position(|b| *b == 0)
                .map_or(self.bytes.len(), |p| at + p);
            if &self.bytes[at..end] == s.as_bytes() {
                return at;
            }
            at = end + 1;
        }
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        offset
    }
}

fn encode_element(e: &Element, v: &Vocabulary, strings: &mut StringTable, out: &mut Vec<u8>) {
    let flags = if e.children.is_empty() {
        0
    } else {
        token::HAS_CONTENT
    } | if e.attributes.is_empty() {
        0
    } else {
        token::HAS_ATTRIBUTES
    };
    match v.tags.iter().find(|(_, n)| *n == e.name) {
        Some((t, _)) => out.push(t | flags),
        None => {
            out.push(token::LITERAL | flags);
            put_len(out, strings.offset(&e.name));
        }
    }
    if !e.attributes.is_empty() {
        for (name, value) in &e.attributes {
            encode_attribute(name, value, v, strings, out);
        }
        out.push(token::END);
    }
    if !e.children.is_empty() {
        for child in &e.children {
            match child {
                Node::Element(c) => encode_element(c, v, strings, out),
                Node::Text(pieces) => encode_pieces(pieces, &[], out),
            }
        }
        out.push(token::END);
    }
}

fn encode_attribute(
    name: &str,
    value: &[Piece],
    v: &Vocabulary,
    strings: &mut StringTable,
    out: &mut Vec<u8>,
) {
    let leading = match value.first() {
        Some(Piece::Text(t)) => t.as_str(),
        _ => "",
    };
    // The start token with the longest value prefix that fits.
    let start = v
        .attribute_starts
        .iter()
        .filter(|(_, n, prefix)| *n == name && leading.starts_with(prefix))
        .max_by_key(|(_, _, prefix)| prefix.len());
    let mut rest: Vec<Piece> = value.to_vec();
    match start {
        Some((t, _, prefix)) => {
            out.push(*t);
            if let Some(Piece::Text(first)) = rest.first_mut() {
                first.drain(..prefix.len());
            }
        }
        None => {
            out.push(token::LITERAL);
            put_len(out, strings.offset(name));
        }
    }
    encode_pieces(&rest, v.attribute_values, out);
}

/// Text and variables; in attribute values, whole well-known values and the URL parts
/// of the value table become their tokens.
fn encode_pieces(pieces: &[Piece], values: &[(u8, &str)], out: &mut Vec<u8>) {
    for piece in pieces {
        match piece {
            Piece::Text(t) if t.is_empty() => {}
            Piece::Text(t) => encode_text(t, values, out),
            Piece::Variable { name, escaping } => {
                out.push(match escaping {
                    Escaping::Escape => token::EXT_I_0,
                    Escaping::Unescape => token::EXT_I_1,
                    Escaping::None => token::EXT_I_2,
                });
                out.extend_from_slice(name.as_bytes());
                out.push(0);
            }
        }
    }
}

fn encode_text(text: &str, values: &[(u8, &str)], out: &mut Vec<u8>) {
    let mut literal = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let hit = values
            .iter()
            .filter(|(_, s)| rest.starts_with(s))
            .max_by_key(|(_, s)| s.len());
        match hit {
            Some((t, s)) => {
                flush_literal(&mut literal, out);
                out.push(*t);
                rest = &rest[s.len()..];
            }
            None => {
                let c = rest.chars().next().unwrap_or_default();
                literal.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    flush_literal(&mut literal, out);
}

fn flush_literal(literal: &mut String, out: &mut Vec<u8>) {
    if !literal.is_empty() {
        out.push(token::STR_I);
        out.extend_from_slice(literal.as_bytes());
        out.push(0);
        literal.clear();
    }
}

/// Decodes a WBXML document with `vocabulary`.
pub fn decode(bytes: &[u8], vocabulary: &Vocabulary) -> Result<Document, DecodeError> {
    let mut c = Cursor::new(bytes);
    let version = c.u8("WBXML version")?;
    let mut public_id = c.uintvar("WBXML public id")?;
    let public_id_index = if public_id == 0 {
        Some(c.uintvar("WBXML public id index")?)
    } else {
        None
    };
    // WBXML 1.0 documents have no charset field.
    let charset = if version == 0x00 {
        106
    } else {
        c.uintvar("WBXML charset")?
    };
    let table = c.uintvar_bytes("WBXML string table")?;
    if let Some(index) = public_id_index {
        // A public id given as a string; WML's are known by number, so keep 0.
        string_at(table, index)?;
        public_id = 0;
    }
    let mut d = Decoder {
        c,
        table,
        v: vocabulary,
        nodes: 0,
    };
    d.skip_processing_instructions()?;
    let root = d.element(0)?;
    d.c.finish("WBXML body")?;
    Ok(Document {
        version,
        public_id,
        charset,
        root,
    })
}

fn string_at(table: &[u8], offset: u32) -> Result<String, DecodeError> {
    const FIELD: &str = "WBXML string table reference";
    let from = table
        .get(offset as usize..)
        .ok_or(DecodeError::Truncated { field: FIELD })?;
    Cursor::new(from).text(FIELD)
}

struct Decoder<'a> {
    c: Cursor<'a>,
    table: &'a [u8],
    v: &'a Vocabulary,
    nodes: usize,
}

impl Decoder<'_> {
    fn count(&mut self) -> Result<(), DecodeError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(DecodeError::TooLarge {
                field: "WBXML nodes",
                limit: MAX_NODES,
            });
        }
        Ok(())
    }

    fn skip_processing_instructions(&mut self) -> Result<(), DecodeError> {
        while self.c.peek("WBXML body")? == token::PI {
            self.c.u8("WBXML PI")?;
            // A PI is an attribute start and values, closed by END.
            while self.c.u8("WBXML PI")? != token::END {}
        }
        Ok(())
    }

    fn element(&mut self, depth: usize) -> Result<Element, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooLarge {
                field: "WBXML nesting",
                limit: MAX_DEPTH,
            });
        }
        self.count()?;
        let mut tag = self.c.u8("WBXML tag")?;
        while tag == token::SWITCH_PAGE {
            let page = self.c.u8("WBXML code page")?;
            if page != 0 {
                return Err(DecodeError::Unassigned {
                    field: "WBXML code page",
                    value: u32::from(page),
                });
            }
            tag = self.c.u8("WBXML tag")?;
        }
        let name = match tag & 0x3F {
            token::LITERAL => string_at(self.table, self.c.uintvar("WBXML literal tag")?)?,
            t => self
                .v
                .tags
                .iter()
                .find(|(code, _)| *code == t)
                .map(|(_, n)| n.to_string())
                .ok_or(DecodeError::Unassigned {
                    field: "WBXML tag",
                    value: u32::from(tag),
                })?,
        };
        let mut element = Element {
            name,
            attributes: Vec::new(),
            children: Vec::new(),
        };
        if tag & token::HAS_ATTRIBUTES != 0 {
            element.attributes = self.attributes()?;
        }
        if tag & token::HAS_CONTENT != 0 {
            element.children = self.content(depth)?;
        }
        Ok(element)
    }

    fn attributes(&mut self) -> Result<Vec<(String, Vec<Piece>)>, DecodeError> {
        let mut attributes: Vec<(String, Vec<Piece>)> = Vec::new();
        loop {
            self.count()?;
            let t = self.c.u8("WBXML attribute")?;
            match t {
                token::END => return Ok(attributes),
                token::LITERAL => {
                    let name = string_at(self.table, self.c.uintvar("WBXML literal attribute")?)?;
                    attributes.push((name, Vec::new()));
                }
                0x05..=0x3F | 0x45..=0x7F => {
                    let (_, name, prefix) = self
                        .v
                        .attribute_starts
                        .iter()
                        .find(|(code, _, _)| *code == t)
                        .ok_or(DecodeError::Unassigned {
                            field: "WBXML attribute start",
                            value: u32::from(t),
                        })?;
                    let mut value = Vec::new();
                    push_piece(&mut value, Piece::Text(prefix.to_string()));
                    attributes.push((name.to_string(), value));
                }
                _ => {
                    let piece = self.value_piece(t, true)?;
                    let Some((_, value)) = attributes.last_mut() else {
                        return Err(DecodeError::Unassigned {
                            field: "WBXML attribute value before any attribute",
                            value: u32::from(t),
                        });
                    };
                    push_piece(value, piece);
                }
            }
        }
    }

    /// A token that yields character data: strings, entities, variables, and in
    /// attribute values the value table's tokens.
    fn value_piece(&mut self, t: u8, in_attribute: bool) -> Result<Piece, DecodeError> {
        Ok(match t {
            token::STR_I => Piece::Text(self.c.text("WBXML inline string")?),
            token::STR_T => Piece::Text(string_at(self.table, self.c.uintvar("WBXML STR_T")?)?),
            token::ENTITY => {
                let code = self.c.uintvar("WBXML entity")?;
                Piece::Text(
                    char::from_u32(code)
                        .ok_or(DecodeError::Unassigned {
                            field: "WBXML entity",
                            value: code,
                        })?
                        .to_string(),
                )
            }
            token::EXT_I_0 | token::EXT_I_1 | token::EXT_I_2 => Piece::Variable {
                name: self.c.text("WBXML variable name")?,
                escaping: match t {
                    token::EXT_I_0 => Escaping::Escape,
                    token::EXT_I_1 => Escaping::Unescape,
                    _ => Escaping::None,
                },
            },
            _ if in_attribute && t >= 0x85 => {
                let (_, s) = self
                    .v
                    .attribute_values
                    .iter()
                    .find(|(code, _)| *code == t)
                    .ok_or(DecodeError::Unassigned {
                        field: "WBXML attribute value",
                        value: u32::from(t),
                    })?;
                Piece::Text(s.to_string())
            }
            _ => {
                return Err(DecodeError::Unassigned {
                    field: "WBXML token",
                    value: u32::from(t),
                })
            }
        })
    }

    fn content(&mut self, depth: usize) -> Result<Vec<Node>, DecodeError> {
        let mut children: Vec<Node> = Vec::new();
        loop {
            let t = self.c.peek("WBXML content")?;
            match t {
                token::END => {
                    self.c.u8("WBXML content")?;
                    return Ok(children);
                }
                token::STR_I
                | token::STR_T
                | token::ENTITY
                | token::EXT_I_0
                | token::EXT_I_1
                | token::EXT_I_2 => {
                    self.count()?;
                    self.c.u8("WBXML content")?;
                    let piece = self.value_piece(t, false)?;
                    match children.last_mut() {
                        Some(Node::Text(pieces)) => push_piece(pieces, piece),
                        _ => children.push(Node::Text(vec![piece])),
                    }
                }
                token::PI => self.skip_processing_instructions()?,
                _ => children.push(Node::Element(self.element(depth + 1)?)),
            }
        }
    }
}

/// Appends a piece, merging adjacent text (the tree keeps text in maximal runs).
pub(crate) fn push_piece(pieces: &mut Vec<Piece>, piece: Piece) {
    match (pieces.last_mut(), piece) {
        (Some(Piece::Text(last)), Piece::Text(t)) => last.push_str(&t),
        (_, Piece::Text(t)) if t.is_empty() => {}
        (_, p) => pieces.push(p),
    }
}
